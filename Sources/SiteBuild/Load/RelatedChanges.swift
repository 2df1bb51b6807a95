import SiteStore

/// Finds the records whose related records a load changed: their own content hash did not change, but
/// their pages show the related records' fields, so those pages must be rendered again.
struct RelatedChanges {
    let database: Database
    let config: SiteConfig

    /// Per collection, the ids of records that refer (through a to-one field or a to-many list) to a
    /// record `changes` inserted or updated, or to a key that no longer names a record (one deleted).
    func records(changedBy changes: Changeset) throws -> [String: Set<Int64>] {
        var result: [String: Set<Int64>] = [:]
        for collection in config.collections {
            for relationship in collection.relationships {
                guard let changed = changes.tables[relationship.target] else { continue }
                let target = quoteIdentifier(relationship.target)
                // The referring rows: a record's own column, or the join table of its list.
                let (table, owner, value) = relationship.toMany
                    ? (quoteIdentifier(CollectionSchema.listTable(collection.name, relationship.field)), "record_id", "value")
                    : (quoteIdentifier(collection.name), "_id", quoteIdentifier(relationship.field))
                var found = Set<Int64>()
                let ids = Array(changed.inserted.union(changed.updated)).sorted()
                for start in stride(from: 0, to: ids.count, by: 500) {
                    let chunk = ids[start..<min(start + 500, ids.count)]
                    let list = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                    try database.makeStatement(
                        "SELECT \(owner) FROM \(table) WHERE \(value) IN (SELECT _key FROM \(target) WHERE _id IN (\(list)))"
                    ).forEachRow(chunk.map { .integer($0) }) { found.insert($0.int64(at: 0)) }
                }
                if !changed.deleted.isEmpty {
                    // A deleted record's key is gone with it: whoever still names a missing key may have named it.
                    try database.makeStatement(
                        "SELECT \(owner) FROM \(table) WHERE \(value) IS NOT NULL AND \(value) NOT IN (SELECT _key FROM \(target))"
                    ).forEachRow { found.insert($0.int64(at: 0)) }
                }
                if !found.isEmpty { result[collection.name, default: []].formUnion(found) }
            }
        }
        return result
    }
}
