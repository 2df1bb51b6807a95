/// One item read from a source: its identity within the collection, where it came from, and its fields.
public struct Record: Sendable, Hashable {
    /// The stable identity (a configured key column, a feed item's guid or link, a page's slug).
    public var key: String
    /// The 1-based line of the source where the record starts.
    public var line: Int
    /// Field name to value; names are the collection's columns.
    public var fields: [String: FieldValue]

    /// Makes a record.
    public init(key: String, line: Int, fields: [String: FieldValue]) {
        self.key = key
        self.line = line
        self.fields = fields
    }
}

/// A typed field value, as a source yields it after applying the collection's declared field types.
public enum FieldValue: Sendable, Hashable {
    case null
    case text(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    /// Several texts (tags), in order.
    case list([String])

    /// The value as text, `nil` when null; a list's items joined by ", ".
    public var text: String? {
        switch self {
        case .null: return nil
        case .text(let value): return value
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .bool(let value): return value ? "true" : "false"
        case .list(let items): return items.isEmpty ? nil : items.joined(separator: ", ")
        }
    }
}
