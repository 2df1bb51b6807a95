extension ResultsController {
    /// The ids of the rows at `offsets` among all fetched rows, in order (O(offsets), not O(n)).
    public func ids(in offsets: Range<Int>) -> [Int64] {
        offsets.map { rows[$0].id }
    }

    /// The versions of the rows at `offsets` among all fetched rows, in order (O(offsets), not O(n)).
    public func versions(in offsets: Range<Int>) -> [Int64] {
        offsets.map { rows[$0].version }
    }
}

extension ResultsController {
    /// The database generation the results reflect (`Database.generation` when they were fetched or last
    /// caught up); nil when unknown. A caller that keeps a controller between changesets checks it against
    /// the next changeset's `baseGeneration`.
    public var resultsGeneration: Int64? { generation }
}
