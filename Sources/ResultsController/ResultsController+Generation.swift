extension ResultsController {
    /// The database generation the results reflect (`Database.generation` when they were fetched or last
    /// caught up); nil when unknown. A caller that keeps a controller between changesets checks it against
    /// the next changeset's `baseGeneration`.
    public var resultsGeneration: Int64? { generation }
}
