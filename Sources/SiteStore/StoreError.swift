/// A store operation that failed for a reason a user can act on.
public enum StoreError: Error, CustomStringConvertible, Equatable {
    /// Two sources of one collection produce the same key.
    case duplicateKey(collection: String, key: String, otherSource: String)
    /// A row has not as many values as the schema has columns.
    case columnCountMismatch(table: String, expected: Int, found: Int)

    public var description: String {
        switch self {
        case .duplicateKey(let collection, let key, let otherSource):
            return "key '\(key)' is already used in collection '\(collection)' by \(otherSource); keys must be unique across a collection's sources"
        case .columnCountMismatch(let table, let expected, let found):
            return "table \(table) has \(expected) field columns but a row has \(found) values"
        }
    }
}
