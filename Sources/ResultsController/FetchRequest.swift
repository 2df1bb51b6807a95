import SiteStore

/// What a results controller lists: a table, a filter, an order, sections and a batch size.
///
/// ```swift
/// var request = FetchRequest(table: "banks")
/// request.filter = "state <> ?"
/// request.arguments = ["XX"]
/// request.sortDescriptors = [SortDescriptor(key: "state"), SortDescriptor(key: "closing_date", ascending: false)]
/// request.sectionKey = "state"
/// request.batchSize = 20
/// ```
public struct FetchRequest: Sendable, Hashable {
    /// The table (entity) the rows come from.
    public var table: String
    /// The column that identifies a row; `rowid` works for every ordinary table.
    public var idColumn: String
    /// An SQL predicate (the WHERE clause without the keyword), `nil` for every row.
    public var filter: String?
    /// Values bound to the `?` parameters of `filter`, in order.
    public var arguments: [DatabaseValue]
    /// The order of rows; ties are always broken by `idColumn`, so the order is total.
    public var sortDescriptors: [SortDescriptor]
    /// The column whose value names a row's section; it must be the first sort key, so sections are contiguous.
    public var sectionKey: String?
    /// How many rows one batch query reads.
    public var batchSize: Int
    /// At most this many rows, `nil` for all.
    public var limit: Int?
    /// Rows skipped before the first one listed.
    public var offset: Int

    public init(
        table: String, idColumn: String = "rowid", filter: String? = nil, arguments: [DatabaseValue] = [],
        sortDescriptors: [SortDescriptor] = [], sectionKey: String? = nil, batchSize: Int = 20,
        limit: Int? = nil, offset: Int = 0
    ) {
        self.table = table
        self.idColumn = idColumn
        self.filter = filter
        self.arguments = arguments
        self.sortDescriptors = sortDescriptors
        self.sectionKey = sectionKey
        self.batchSize = batchSize
        self.limit = limit
        self.offset = offset
    }

    /// Checks the request is one a controller can serve.
    func validate() throws {
        guard batchSize > 0 else { throw ResultsControllerError.invalidRequest("batchSize must be at least 1") }
        if let limit, limit < 0 { throw ResultsControllerError.invalidRequest("limit must not be negative") }
        guard offset >= 0 else { throw ResultsControllerError.invalidRequest("offset must not be negative") }
        if let sectionKey, sortDescriptors.first?.key != sectionKey {
            throw ResultsControllerError.invalidRequest(
                "the section key '\(sectionKey)' must be the first sort descriptor's key, so that sections are contiguous")
        }
    }

    /// The query for the ordered ids (and section names): no row bodies.
    var idQuery: String {
        var sql = "SELECT \(quoteColumn(idColumn))"
        if let sectionKey { sql += ", \(quoteColumn(sectionKey))" }
        sql += " FROM \(quoteIdentifier(table))"
        if let filter { sql += " WHERE (\(filter))" }
        let order = sortDescriptors.map(\.sql) + ["\(quoteColumn(idColumn)) ASC"]
        sql += " ORDER BY " + order.joined(separator: ", ")
        if limit != nil || offset > 0 { sql += " LIMIT \(limit ?? -1) OFFSET \(offset)" }
        return sql
    }

    /// The query for the rows of up to `count` ids.
    func batchQuery(count: Int) -> String {
        let placeholders = Array(repeating: "?", count: count).joined(separator: ",")
        return "SELECT \(quoteColumn(idColumn)) AS \"_fetched_id\", * FROM \(quoteIdentifier(table)) "
            + "WHERE \(quoteColumn(idColumn)) IN (\(placeholders))"
    }
}

/// Quotes a column name unless it is `rowid`, which must stay bare to mean the row id.
func quoteColumn(_ name: String) -> String {
    name.lowercased() == "rowid" ? name : quoteIdentifier(name)
}
