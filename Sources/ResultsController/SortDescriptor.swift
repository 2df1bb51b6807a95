/// `FetchRequest.SortDescriptor`, for code that does not also import Foundation (whose own `SortDescriptor`
/// makes the bare name ambiguous in type positions; the module cannot qualify it, being named like its class).
public typealias SortDescriptor = FetchRequest.SortDescriptor

extension FetchRequest {
/// One key of a fetch request's order: a column, its direction, its text collation and where NULLs go.
public struct SortDescriptor: Sendable, Hashable {
    /// Where NULL values sort, whatever the direction.
    public enum NullPlacement: String, Sendable, Hashable {
        case first, last
    }

    /// The column sorted on.
    public var key: String
    /// Ascending (smallest first) or descending.
    public var ascending: Bool
    /// An SQLite collation for text (`BINARY`, `NOCASE`, `RTRIM`); `nil` uses the column's own.
    public var collation: String?
    /// Where NULLs go; by default they sort as the smallest value, as in Core Data.
    public var nulls: NullPlacement

    /// Sorts on `key` (a column, or `relationship.column`); NULLs default to the smallest value.
    public init(key: String, ascending: Bool = true, collation: String? = nil, nulls: NullPlacement? = nil) {
        self.key = key
        self.ascending = ascending
        self.collation = collation
        self.nulls = nulls ?? (ascending ? .first : .last)
    }
}
}
