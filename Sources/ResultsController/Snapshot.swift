import SiteStore

/// What a fetch found: every matching id in order, the sections they fall into, and each row's sort key and version.
public struct Snapshot: Sendable, Hashable {
    /// Every fetched id, in the request's total order.
    public var ids: [Int64]
    /// The sections, in order.
    public var sections: [SectionInfo]
    /// Each row's sort key, parallel to `ids`.
    public var keys: [SortKey]
    /// Each row's version, parallel to `ids` (0 when the request names no version column).
    public var versions: [Int64]

    /// Makes a snapshot from parallel arrays of ids, keys and versions.
    public init(ids: [Int64], sections: [SectionInfo], keys: [SortKey], versions: [Int64]) {
        self.ids = ids
        self.sections = sections
        self.keys = keys
        self.versions = versions
    }

    /// The snapshot of an empty result.
    public static let empty = Snapshot(ids: [], sections: [], keys: [], versions: [])
}
