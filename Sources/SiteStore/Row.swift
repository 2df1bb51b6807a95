/// One result row: column names and their values, in the query's order.
public struct Row: Sendable, Hashable {
    /// The column names, in order.
    public let columns: [String]
    /// The values, parallel to `columns`.
    public let values: [DatabaseValue]

    /// Makes a row from parallel column names and values.
    public init(columns: [String], values: [DatabaseValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value of the named column, or `nil` when the row has no such column.
    public subscript(column: String) -> DatabaseValue? {
        columns.firstIndex(of: column).map { values[$0] }
    }
}
