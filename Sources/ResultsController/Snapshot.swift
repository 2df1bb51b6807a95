/// What a fetch found: every matching id in order, and the sections they fall into.
public struct Snapshot: Sendable, Hashable {
    /// Every fetched id, in the request's total order.
    public var ids: [Int64]
    /// The sections, in order; one unnamed section when the request has no section key and rows exist.
    public var sections: [SectionInfo]

    public init(ids: [Int64], sections: [SectionInfo]) {
        self.ids = ids
        self.sections = sections
    }

    /// The snapshot of an empty result.
    public static let empty = Snapshot(ids: [], sections: [])
}
