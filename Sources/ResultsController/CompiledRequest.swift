import SiteStore

/// A fetch request turned into SQL and into the comparison that agrees with it.
///
/// Every query selects `id, version, key…` so that a re-queried row can be placed by binary search
/// among the rows already fetched. With an explicit section order, the first key is the section's rank
/// (a CASE expression) and the second the section key's value.
struct CompiledRequest: Sendable {
    let request: FetchRequest
    /// The comparison over the selected keys (rank first when sections have an explicit order).
    let ordering: RowOrdering
    let hasRankKey: Bool
    private let keyExpressions: [String]
    private let fromClause: String
    private let idExpression: String
    private let versionExpression: String

    init(_ request: FetchRequest) {
        self.request = request
        let table = quoteIdentifier(request.table)
        func column(_ key: String) -> String {
            if let dot = key.firstIndex(of: ".") {
                return quoteIdentifier(String(key[..<dot])) + "." + Self.quoteColumn(String(key[key.index(after: dot)...]))
            }
            return table + "." + Self.quoteColumn(key)
        }
        var from = "FROM " + table
        for relationship in request.relationships {
            from += " LEFT JOIN \(quoteIdentifier(relationship.table)) AS \(quoteIdentifier(relationship.name))"
                + " ON \(quoteIdentifier(relationship.name)).\(Self.quoteColumn(relationship.targetKey)) = \(table).\(Self.quoteColumn(relationship.foreignKey))"
        }
        fromClause = from
        idExpression = column(request.idColumn)
        versionExpression = request.versionColumn.map(column) ?? "0"
        var expressions = request.sortDescriptors.map { column($0.key) }
        var descriptors = request.sortDescriptors
        if let order = request.sectionOrder, let first = expressions.first {
            let cases = order.enumerated().map { "WHEN \(DatabaseValue.text($0.element.name).description) THEN \($0.offset)" }
            expressions.insert("CASE CAST(\(first) AS TEXT) \(cases.joined(separator: " ")) ELSE \(order.count) END", at: 0)
            descriptors.insert(SortDescriptor(key: "_section_rank"), at: 0)
            hasRankKey = true
        } else {
            hasRankKey = false
        }
        keyExpressions = expressions
        ordering = RowOrdering(descriptors: descriptors)
    }

    static func quoteColumn(_ name: String) -> String {
        name.lowercased() == "rowid" ? name : quoteIdentifier(name)
    }

    private var orderBy: String {
        let terms = zip(keyExpressions, ordering.descriptors).map { expression, descriptor in
            var term = expression
            if let collation = descriptor.collation { term += " COLLATE \(collation)" }
            term += descriptor.ascending ? " ASC" : " DESC"
            term += descriptor.nulls == .first ? " NULLS FIRST" : " NULLS LAST"
            return term
        }
        return "ORDER BY " + (terms + ["\(idExpression) ASC"]).joined(separator: ", ")
    }

    private var selectList: String {
        ([idExpression, versionExpression] + keyExpressions).joined(separator: ", ")
    }

    /// Every matching row's id, version and keys, in order: the one query of `performFetch`.
    var keysQuery: String {
        var sql = "SELECT \(selectList) \(fromClause)"
        if let filter = request.filter { sql += " WHERE (\(filter))" }
        sql += " " + orderBy
        if request.limit != nil || request.offset > 0 { sql += " LIMIT \(request.limit ?? -1) OFFSET \(request.offset)" }
        return sql
    }

    /// How many distinct values of the table's `column` the matching rows have (a taxonomy's records).
    func distinctCountQuery(of column: String) -> String {
        let table = quoteIdentifier(request.table)
        // Only the joins the filter may name: SQLite does not leave out a LEFT JOIN by rowid, and a taxonomy's
        // join reads every record's page (a third of a second and the store's pages mapped, at 100,000).
        var sql = "SELECT COUNT(DISTINCT \(table).\(Self.quoteColumn(column))) FROM \(table)"
        for relationship in request.relationships where request.filter?.contains(relationship.name) == true {
            sql += " LEFT JOIN \(quoteIdentifier(relationship.table)) AS \(quoteIdentifier(relationship.name))"
                + " ON \(quoteIdentifier(relationship.name)).\(Self.quoteColumn(relationship.targetKey)) = \(table).\(Self.quoteColumn(relationship.foreignKey))"
        }
        if let filter = request.filter { sql += " WHERE (\(filter))" }
        return sql
    }

    /// The count of distinct `column` values of the rows the filter admits, in groups of `expression`'s
    /// value (newest group first, for years), joining the relationships the filter or `expression` names.
    func groupedCountQuery(ofDistinct column: String, by expression: String) -> String {
        let table = quoteIdentifier(request.table)
        var sql = "SELECT \(expression) AS grouped, COUNT(DISTINCT \(table).\(Self.quoteColumn(column))) AS count FROM \(table)"
        for relationship in request.relationships
            where request.filter?.contains(relationship.name) == true || expression.contains(relationship.name) {
            sql += " LEFT JOIN \(quoteIdentifier(relationship.table)) AS \(quoteIdentifier(relationship.name))"
                + " ON \(quoteIdentifier(relationship.name)).\(Self.quoteColumn(relationship.targetKey)) = \(table).\(Self.quoteColumn(relationship.foreignKey))"
        }
        if let filter = request.filter { sql += " WHERE (\(filter))" }
        return sql + " GROUP BY grouped ORDER BY grouped DESC"
    }

    /// The same for just the rows with `count` given ids (bound after the filter's arguments).
    func keysQuery(forIDs count: Int) -> String {
        let list = Array(repeating: "?", count: count).joined(separator: ",")
        let filter = request.filter.map { "(\($0)) AND " } ?? ""
        return "SELECT \(selectList) \(fromClause) WHERE \(filter)\(idExpression) IN (\(list))"
    }

    /// The ids of fetched-table rows whose `relationship` points at one of `count` related keys.
    func referencingIDsQuery(_ relationship: Relationship, count: Int) -> String {
        let table = quoteIdentifier(request.table)
        let list = Array(repeating: "?", count: count).joined(separator: ",")
        if relationship.targetKey.lowercased() == "rowid" {
            return "SELECT \(table).\(Self.quoteColumn(request.idColumn)) FROM \(table) WHERE \(table).\(Self.quoteColumn(relationship.foreignKey)) IN (\(list))"
        }
        // The changeset names related rows by rowid; map them to the key the foreign key holds.
        let related = quoteIdentifier(relationship.table)
        return "SELECT \(table).\(Self.quoteColumn(request.idColumn)) FROM \(table) WHERE \(table).\(Self.quoteColumn(relationship.foreignKey)) IN "
            + "(SELECT \(Self.quoteColumn(relationship.targetKey)) FROM \(related) WHERE rowid IN (\(list)))"
    }

    /// The ids of fetched-table rows whose `relationship` foreign key is one of `count` given keys: the
    /// keys deleted related rows had. A lookup per key through an index on the foreign key, when it has one.
    func referencingIDsQuery(_ relationship: Relationship, keyCount count: Int) -> String {
        let table = quoteIdentifier(request.table)
        let list = Array(repeating: "?", count: count).joined(separator: ",")
        return "SELECT \(table).\(Self.quoteColumn(request.idColumn)) FROM \(table) WHERE \(table).\(Self.quoteColumn(relationship.foreignKey)) IN (\(list))"
    }

    /// The ids of rows whose foreign key of `relationship` names no related row: after related rows are
    /// deleted, their keys cannot be read any more, and these are the rows that may have named them.
    func danglingIDsQuery(_ relationship: Relationship) -> String {
        let table = quoteIdentifier(request.table)
        let foreignKey = "\(table).\(Self.quoteColumn(relationship.foreignKey))"
        return "SELECT \(table).\(Self.quoteColumn(request.idColumn)) FROM \(table) WHERE \(foreignKey) IS NOT NULL AND \(foreignKey) NOT IN "
            + "(SELECT \(Self.quoteColumn(relationship.targetKey)) FROM \(quoteIdentifier(relationship.table)))"
    }

    /// The rows (and prefetched related columns) of `count` ids; the first column is the id.
    /// `relatedColumns` holds each prefetched relationship's columns by name, and the table's own under
    /// `""` when some of them are not fetched. `allProperties` selects the unfetched properties too.
    func rowsQuery(forIDs count: Int, relatedColumns: [String: [String]], allProperties: Bool = false) -> String {
        let table = quoteIdentifier(request.table)
        let unfetched = allProperties ? [] : request.unfetchedProperties
        var select = "\(idExpression) AS \"_fetched_id\", "
        if let columns = relatedColumns[""], !allProperties {
            select += columns.filter { !unfetched.contains($0) }.map { "\(table).\(quoteIdentifier($0))" }.joined(separator: ", ")
        } else {
            select += "\(table).*"
        }
        var from = "FROM " + table
        for name in request.prefetchedRelationships {
            guard let relationship = request.relationships.first(where: { $0.name == name }) else { continue }
            for column in relatedColumns[name] ?? [] where !unfetched.contains(name + "." + column) {
                select += ", \(quoteIdentifier(name)).\(quoteIdentifier(column)) AS \(quoteIdentifier(name + "." + column))"
            }
            from += " LEFT JOIN \(quoteIdentifier(relationship.table)) AS \(quoteIdentifier(name))"
                + " ON \(quoteIdentifier(name)).\(Self.quoteColumn(relationship.targetKey)) = \(table).\(Self.quoteColumn(relationship.foreignKey))"
        }
        let list = Array(repeating: "?", count: count).joined(separator: ",")
        return "SELECT \(select) \(from) WHERE \(idExpression) IN (\(list))"
    }

    /// Reads `id, version, keys…` from the current row of a statement made from one of the key queries.
    func entry(from statement: Statement) -> OrderedRows.Entry {
        var key = SortKey.Encoder()
        for index in 0..<keyExpressions.count { key.append(columnAt: index + 2, of: statement) }
        return OrderedRows.Entry(id: statement.int64(at: 0), key: key.key(), version: statement.int64(at: 1))
    }

    /// Where the section key's value is among a key's values.
    private var sectionValueIndex: Int { hasRankKey ? 1 : 0 }

    /// The name of the section a row with `key` is in; `""` without a section key.
    func sectionName(of key: SortKey) -> String {
        guard request.sectionKey != nil else { return "" }
        return key.value(at: sectionValueIndex).stringValue ?? ""
    }

    /// Whether rows with keys `lhs` and `rhs` are in the same section, without decoding a name.
    func sameSection(_ lhs: SortKey, _ rhs: SortKey) -> Bool {
        request.sectionKey == nil || lhs.hasSameValue(at: sectionValueIndex, as: rhs)
    }

    /// How many leading values of a key name and order its section (the rank, when declared, and the value).
    var sectionOrderKeyCount: Int { sectionValueIndex + 1 }

    /// The part of a key that orders sections.
    func sectionOrderKey(of key: SortKey) -> SortKey {
        key.prefix(sectionValueIndex + 1)
    }

    /// Whether section order key `lhs` comes before `rhs`.
    func sectionPrecedes(_ lhs: SortKey, _ rhs: SortKey) -> Bool {
        ordering.compare(lhs, rhs) < 0
    }
}
