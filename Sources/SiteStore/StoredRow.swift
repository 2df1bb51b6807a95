/// A record as the store keeps it: identity, origin, content hash and column values.
public struct StoredRow: Sendable, Hashable {
    /// The record's identity within its collection.
    public var key: String
    /// The 1-based line of its source where it starts.
    public var line: Int
    /// A hash of every field value; a row is rewritten only when it changes.
    public var contentHash: Int64
    /// Values of the schema's field columns, in schema order (a list column holds its items as a JSON array).
    public var values: [DatabaseValue]
    /// The items of each list column, for its join table.
    public var lists: [String: [String]]

    /// Makes a row to store.
    public init(key: String, line: Int, contentHash: Int64, values: [DatabaseValue], lists: [String: [String]] = [:]) {
        self.key = key
        self.line = line
        self.contentHash = contentHash
        self.values = values
        self.lists = lists
    }
}
