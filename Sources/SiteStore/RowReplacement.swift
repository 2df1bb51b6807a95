/// Makes one source's rows in a collection table match what the source now yields, one row at a time,
/// so a source of any size is stored without holding its records in memory.
///
/// Rows are matched to the stored ones by key: a new key is inserted, a changed content hash is an
/// update, an unchanged row is left alone, and the keys the source no longer yields are deleted when
/// it finishes. Only the stored keys and hashes of the source are kept in memory.
public final class RowReplacement {
    private let store: SiteStore
    private let source: String
    private let schema: CollectionSchema
    private let table: String
    private var existing: [String: (id: Int64, hash: Int64)] = [:]
    private let insert: Statement
    private let update: Statement
    private var changes = Changeset.TableChanges()
    private let lists: ListItemWriter
    private var arguments: [DatabaseValue] = []

    init(store: SiteStore, source: String, schema: CollectionSchema) throws {
        self.store = store
        self.source = source
        self.schema = schema
        table = quoteIdentifier(schema.table)
        let database = store.database
        var existing: [String: (id: Int64, hash: Int64)] = [:]
        try database.cachedStatement("SELECT _key, _id, _hash FROM \(table) WHERE _source = ?")
            .forEachRow([.text(source)]) { row in
                existing[row.string(at: 0) ?? ""] = (row.int64(at: 1), row.int64(at: 2))
            }
        self.existing = existing
        let names = schema.columns.map { quoteIdentifier($0.name) }
        insert = try database.cachedStatement(
            "INSERT INTO \(table) (_key, _source, _line, _hash" + names.map { ", " + $0 }.joined()
                + ") VALUES (?, ?, ?, ?" + String(repeating: ", ?", count: names.count) + ")")
        update = try database.cachedStatement(
            "UPDATE \(table) SET _line = ?, _hash = ?" + names.map { ", \($0) = ?" }.joined() + " WHERE _id = ?")
        arguments.reserveCapacity(names.count + 5)
        lists = try ListItemWriter(database: database, schema: schema)
    }

    /// Stores `row`: inserted when its key is new, updated when its content hash changed, else untouched.
    public func write(_ row: StoredRow) throws {
        guard row.values.count == schema.columns.count else {
            throw StoreError.columnCountMismatch(table: schema.table, expected: schema.columns.count, found: row.values.count)
        }
        let database = store.database
        if let old = existing.removeValue(forKey: row.key) {
            guard old.hash != row.contentHash else { return }
            arguments.removeAll(keepingCapacity: true)
            arguments += [.integer(Int64(row.line)), .integer(row.contentHash)]
            arguments += row.values
            arguments.append(.integer(old.id))
            try update.execute(arguments)
            changes.updated.insert(old.id)
            try lists.replaceItems(of: old.id, with: row.lists, isNew: false)
            return
        }
        arguments.removeAll(keepingCapacity: true)
        arguments += [.text(row.key), .text(source), .integer(Int64(row.line)), .integer(row.contentHash)]
        arguments += row.values
        do {
            try insert.execute(arguments)
        } catch let error as SQLiteError where error.code == 2067 /* SQLITE_CONSTRAINT_UNIQUE */ {
            // Another source has this key (or this one, twice): only now is it worth a query, to name it.
            let other = try database.fetchValue("SELECT _source FROM \(table) WHERE _key = ?", [.text(row.key)])
            throw StoreError.duplicateKey(collection: schema.table, key: row.key, otherSource: other?.stringValue ?? "?")
        }
        let id = database.lastInsertedRowID
        changes.inserted.insert(id)
        try lists.replaceItems(of: id, with: row.lists, isNew: true)
    }

    /// Deletes the rows the source no longer yields; returns every change made.
    func finish() throws -> Changeset {
        let delete = try store.database.cachedStatement("DELETE FROM \(table) WHERE _id = ?")
        // By id, so the order of deletes (and of the changes reported) does not depend on hashing.
        for id in existing.values.map(\.id).sorted() {
            try lists.replaceItems(of: id, with: [:], isNew: false)
            try delete.execute([.integer(id)])
            changes.deleted.insert(id)
        }
        existing = [:]
        // Every source with rows is named in the sources table, which is how removed files are found.
        try store.database.execute("INSERT OR IGNORE INTO sitegen_sources (path, collection, status) VALUES (?, ?, 'ok')",
                                   [.text(source), .text(schema.table)])
        return Changeset(tables: lists.changes.merging([schema.table: changes]) { $1 })
    }
}

extension SiteStore {
    /// Makes the rows from `source` exactly those `body` writes, all or nothing: when `body` or a write
    /// throws, the source's rows are as before. Returns the changes to the collection's table and its
    /// list join tables.
    ///
    /// ```swift
    /// let changes = try store.replaceRows(of: "records.ndjson", in: schema) { rows in
    ///     for row in parsed { try rows.write(row) }
    /// }
    /// ```
    public func replaceRows(of source: String, in schema: CollectionSchema, _ body: (RowReplacement) throws -> Void) throws -> Changeset {
        try savepoint {
            let replacement = try RowReplacement(store: self, source: source, schema: schema)
            try body(replacement)
            return try replacement.finish()
        }
    }
}

/// Keeps a collection's list join tables (`<table>__<column>`: record, position, value) in step with its
/// rows, through statements prepared once per load rather than looked up by their SQL for every row.
final class ListItemWriter {
    private struct JoinTable {
        let name: String
        let column: String
        let select: Statement
        let delete: Statement
        let insert: Statement
    }

    private let database: Database
    private let tables: [JoinTable]
    /// The join-table rows inserted and deleted so far, by table.
    private(set) var changes: [String: Changeset.TableChanges] = [:]

    init(database: Database, schema: CollectionSchema) throws {
        self.database = database
        tables = try schema.listColumns.map { column in
            let name = CollectionSchema.listTable(schema.table, column)
            let quoted = quoteIdentifier(name)
            return JoinTable(
                name: name, column: column,
                select: try database.cachedStatement("SELECT _id FROM \(quoted) WHERE record_id = ?"),
                delete: try database.cachedStatement("DELETE FROM \(quoted) WHERE record_id = ?"),
                insert: try database.cachedStatement("INSERT INTO \(quoted) (record_id, position, value) VALUES (?, ?, ?)"))
        }
    }

    /// Makes record `id`'s items those of `lists` (an absent list empties it); a new record has none to remove.
    func replaceItems(of id: Int64, with lists: [String: [String]], isNew: Bool) throws {
        for table in tables {
            if !isNew {
                var deleted: [Int64] = []
                try table.select.forEachRow([.integer(id)]) { deleted.append($0.int64(at: 0)) }
                if !deleted.isEmpty {
                    changes[table.name, default: .init()].deleted.formUnion(deleted)
                    try table.delete.execute([.integer(id)])
                }
            }
            guard let items = lists[table.column], !items.isEmpty else { continue }
            for (position, value) in items.enumerated() {
                try table.insert.execute([.integer(id), .integer(Int64(position)), .text(value)])
                changes[table.name, default: .init()].inserted.insert(database.lastInsertedRowID)
            }
        }
    }
}
