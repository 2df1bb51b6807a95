import SiteStore

/// Reads the records a page's rows relate to through to-many relationships (a list field of keys of
/// another collection, kept in the join table `<collection>__<field>`): one query per relationship for
/// all the rows of a page, as a results controller reads the rows themselves.
struct RelatedRecords {
    let database: Database
    let collection: CollectionConfig

    /// For each row (by `_id`), each to-many field's related records, in the order the list gives them;
    /// keys that name no record are left out (the load warned about them).
    func fetch(for rows: [Row]) throws -> [Int64: [String: [Row]]] {
        let relationships = collection.relationships.filter(\.toMany)
        let ids = rows.compactMap { $0["_id"]?.int64Value }
        guard !relationships.isEmpty, !ids.isEmpty else { return [:] }
        var related: [Int64: [String: [Row]]] = [:]
        for relationship in relationships {
            let join = quoteIdentifier(CollectionSchema.listTable(collection.name, relationship.field))
            let target = quoteIdentifier(relationship.target)
            let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
            let sql = "SELECT j.record_id AS sitegen_owner, t.* FROM \(join) j JOIN \(target) t ON t._key = j.value "
                + "WHERE j.record_id IN (\(placeholders)) ORDER BY j.record_id, j.position"
            for row in try database.makeStatement(sql).fetchAll(ids.map { .integer($0) }) {
                guard let owner = row["sitegen_owner"]?.int64Value else { continue }
                let record = Row(columns: Array(row.columns.dropFirst()), values: Array(row.values.dropFirst()))
                related[owner, default: [:]][relationship.field, default: []].append(record)
            }
        }
        return related
    }

    /// The keys of to-many relationships that name no record of the related collection, with where the
    /// record holding them was read: `(source, line, record key, field, missing key)`, at most `limit`.
    func danglingKeys(limit: Int) throws -> [(source: String, line: Int, key: String, field: String, missing: String)] {
        var found: [(source: String, line: Int, key: String, field: String, missing: String)] = []
        for relationship in collection.relationships {
            let table = quoteIdentifier(collection.name), target = quoteIdentifier(relationship.target)
            let sql: String
            if relationship.toMany {
                let join = quoteIdentifier(CollectionSchema.listTable(collection.name, relationship.field))
                sql = "SELECT r._source, r._line, r._key, j.value FROM \(join) j JOIN \(table) r ON r._id = j.record_id "
                    + "WHERE NOT EXISTS (SELECT 1 FROM \(target) t WHERE t._key = j.value) ORDER BY r._source, r._line, j.position LIMIT ?"
            } else {
                let field = quoteIdentifier(relationship.field)
                // As text, so the related table's key index answers (an integer field holds `1`, a key `'1'`).
                sql = "SELECT r._source, r._line, r._key, r.\(field) FROM \(table) r WHERE r.\(field) IS NOT NULL "
                    + "AND NOT EXISTS (SELECT 1 FROM \(target) t WHERE t._key = CAST(r.\(field) AS TEXT)) ORDER BY r._source, r._line LIMIT ?"
            }
            for row in try database.makeStatement(sql).fetchAll([.integer(Int64(limit - found.count))]) {
                found.append((row.values[0].stringValue ?? "", Int(row.values[1].int64Value ?? 0), row.values[2].stringValue ?? "",
                              relationship.field, row.values[3].stringValue ?? ""))
            }
            if found.count >= limit { break }
        }
        return found
    }
}
