/// The SQL shape of one collection's table: typed columns besides the bookkeeping ones every table has.
public struct CollectionSchema: Sendable, Hashable {
    /// SQLite column affinities sitegen uses.
    public enum ColumnType: String, Sendable, Hashable {
        case text = "TEXT", integer = "INTEGER", real = "REAL"
        /// Several texts: a JSON array in the record's own column, and a row per item in the join table
        /// `<table>__<column>` (record id, position, value), which taxonomy listings query.
        case list = "LIST"

        /// The column's SQL type.
        var sqlType: String { self == .list ? "TEXT" : rawValue }
    }

    /// The join table holding the items of list column `column`.
    public static func listTable(_ table: String, _ column: String) -> String { table + "__" + column }

    /// The list columns, whose items also live in join tables.
    public var listColumns: [String] { columns.filter { $0.type == .list }.map(\.name) }

    /// The table name (the collection's name).
    public var table: String
    /// Field columns, in declaration order.
    public var columns: [(name: String, type: ColumnType)]
    /// Columns to index, for the listings' sorts.
    public var indexedColumns: [String]
    /// What else decides the rows (the source kind and key): when it changes, every source is read again.
    public var origin: String

    /// Describes a collection table.
    public init(table: String, columns: [(name: String, type: ColumnType)], indexedColumns: [String] = [], origin: String = "") {
        self.table = table
        self.columns = columns
        self.indexedColumns = indexedColumns
        self.origin = origin
    }

    public static func == (lhs: CollectionSchema, rhs: CollectionSchema) -> Bool {
        lhs.table == rhs.table && lhs.indexedColumns == rhs.indexedColumns && lhs.origin == rhs.origin
            && lhs.columns.map(\.name) == rhs.columns.map(\.name) && lhs.columns.map(\.type) == rhs.columns.map(\.type)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(table)
        hasher.combine(columns.map(\.name))
        hasher.combine(columns.map(\.type))
        hasher.combine(indexedColumns)
        hasher.combine(origin)
    }

    /// The bookkeeping columns every collection table has, before the fields: `_id` (the row id the
    /// controllers track), `_key` (the record's identity), `_source` and `_line` (where it was read), `_hash`.
    public static let bookkeepingColumns = ["_id", "_key", "_source", "_line", "_hash"]

    /// A text that changes whenever the table must be rebuilt.
    var signature: String {
        // "items once": join tables list an item once per record since it was added (a store of an earlier
        // build may hold a repeated item, so such a table is made again once); "trimmed": items are stored
        // without blanks around them and never empty, in every format; "keys NFC": keys, items and one-line
        // texts are stored composed (a store of an earlier build may hold decomposed ones).
        (columns.map { "\($0.name) \($0.type.rawValue)" } + ["index " + indexedColumns.joined(separator: ","), "origin " + origin]
            + (listColumns.isEmpty ? [] : ["items once, trimmed"]) + ["keys NFC"])
            .joined(separator: "; ")
    }

    var createStatements: [String] {
        let table = quoteIdentifier(self.table)
        let fields = columns.map { ", \(quoteIdentifier($0.name)) \($0.type.sqlType)" }.joined()
        var statements = [
            "CREATE TABLE \(table) (_id INTEGER PRIMARY KEY, _key TEXT NOT NULL UNIQUE, _source TEXT NOT NULL, "
                + "_line INTEGER NOT NULL, _hash INTEGER NOT NULL\(fields))",
            "CREATE INDEX \(quoteIdentifier(self.table + "__source")) ON \(table) (_source)",
        ]
        for column in indexedColumns {
            statements.append(
                "CREATE INDEX \(quoteIdentifier(self.table + "_" + column)) ON \(table) (\(quoteIdentifier(column)), _id)")
        }
        for column in listColumns {
            let join = Self.listTable(self.table, column)
            statements += [
                "CREATE TABLE \(quoteIdentifier(join)) (_id INTEGER PRIMARY KEY, record_id INTEGER NOT NULL "
                    + "REFERENCES \(table) (_id) ON DELETE CASCADE, position INTEGER NOT NULL, value TEXT NOT NULL)",
                "CREATE INDEX \(quoteIdentifier(join + "_value")) ON \(quoteIdentifier(join)) (value, record_id)",
                "CREATE INDEX \(quoteIdentifier(join + "_record")) ON \(quoteIdentifier(join)) (record_id)",
            ]
        }
        return statements
    }
}
