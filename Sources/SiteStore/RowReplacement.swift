/// Makes one source's rows in a collection table match what the source now yields, one row at a time,
/// so a source of any size is stored without holding its records in memory.
///
/// Rows are matched to the stored ones by key: a new key is inserted, a changed content hash is an
/// update, an unchanged row is left alone, and the keys the source no longer yields are deleted when
/// it finishes. Only the stored keys and hashes of the source are kept in memory.
public final class RowReplacement {
    private let store: SiteStore
    private let source: String
    private let statements: RowStatements
    private var existing: [String: (id: Int64, hash: Int64, line: Int64)] = [:]
    private var changes = Changeset.TableChanges()
    private let lists: ListItemWriter
    private var arguments: [DatabaseValue] = []
    /// The source's rows once it finishes: those it had, plus the inserted, less the deleted.
    private var rowCount: Int
    /// The file the rows were read from, recorded with the source's status when it finishes; a body that
    /// learns the file's hash only by reading it sets it then.
    public var fingerprint: SiteStore.SourceFingerprint?
    /// The rows not stored because a source before this one has their key (with `RowStatements.keepsFirstOfSharedKeys`).
    public private(set) var skipped: [(key: String, line: Int, otherSource: String)] = []

    init(store: SiteStore, source: String, statements: RowStatements, fingerprint: SiteStore.SourceFingerprint?) throws {
        self.store = store
        self.source = source
        self.statements = statements
        self.fingerprint = fingerprint
        var existing: [String: (id: Int64, hash: Int64, line: Int64)] = [:]
        try statements.selectExisting.forEachRow([.text(source)]) { row in
            existing[row.string(at: 0) ?? ""] = (row.int64(at: 1), row.int64(at: 2), row.int64(at: 3))
        }
        self.existing = existing
        rowCount = existing.count
        arguments.reserveCapacity(statements.schema.columns.count + 5)
        lists = ListItemWriter(database: store.database, tables: statements.joinTables)
    }

    /// Stores `row`: inserted when its key is new, updated when its content hash changed, else untouched.
    public func write(_ row: StoredRow) throws {
        let schema = statements.schema
        guard row.values.count == schema.columns.count else {
            throw StoreError.columnCountMismatch(table: schema.table, expected: schema.columns.count, found: row.values.count)
        }
        let database = store.database
        if let old = existing.removeValue(forKey: row.key) {
            guard old.hash != row.contentHash else {
                // Rows added or removed above it moved it: its messages (a key it refers to that is missing)
                // name the line a clean build would, and no page changes.
                if old.line != Int64(row.line) { try statements.updateLine.execute([.integer(Int64(row.line)), .integer(old.id)]) }
                return
            }
            arguments.removeAll(keepingCapacity: true)
            arguments += [.integer(Int64(row.line)), .integer(row.contentHash)]
            arguments += row.values
            arguments.append(.integer(old.id))
            try statements.update.execute(arguments)
            changes.updated.insert(old.id)
            try lists.replaceItems(of: old.id, with: row.lists, isNew: false)
            return
        }
        let id = statements.ids.next()
        arguments.removeAll(keepingCapacity: true)
        arguments += [.integer(id), .text(row.key), .text(source), .integer(Int64(row.line)), .integer(row.contentHash)]
        arguments += row.values
        do {
            try statements.insert.execute(arguments)
        } catch let error as SQLiteError where error.code == 2067 /* SQLITE_CONSTRAINT_UNIQUE */ {
            // Another source has this key (or this one, twice): only now is it worth a query, to name it.
            let other = try database.fetchAll("SELECT _id, _source FROM \(quoteIdentifier(schema.table)) WHERE _key = ?", [.text(row.key)]).first
            let otherSource = other?["_source"]?.stringValue ?? "?"
            // Compared as bytes, as the store compares paths: a file renamed from a composed name to the
            // decomposed one (through a Mac) is another source, which Swift's `!=` would call the same.
            let isOtherSource = !otherSource.utf8.elementsEqual(source.utf8)
            guard let otherID = other?["_id"]?.int64Value, isOtherSource, statements.releasesKey?(otherSource, source) == true else {
                if statements.keepsFirstOfSharedKeys, isOtherSource {
                    skipped.append((row.key, row.line, otherSource))
                    return
                }
                throw StoreError.duplicateKey(collection: schema.table, key: row.key, otherSource: otherSource)
            }
            // The other source gives the key up: its row goes, and this one takes a new id.
            try lists.replaceItems(of: otherID, with: [:], isNew: false)
            try statements.delete.execute([.integer(otherID)])
            changes.deleted.insert(otherID)
            try statements.insert.execute(arguments)
        }
        changes.inserted.insert(id)
        rowCount += 1
        try lists.replaceItems(of: id, with: row.lists, isNew: true)
    }

    /// Deletes the rows the source no longer yields (or, for a source that keeps them, flags them as
    /// having left it), records the source as loaded; returns every change made.
    func finish() throws -> Changeset {
        let flag = statements.keepsRowsLeftOut?(source) == true ? statements.flagLeftOut : nil
        // By id, so the order of deletes (and of the changes reported) does not depend on hashing.
        for (id, hash) in existing.values.map({ ($0.id, $0.hash) }).sorted(by: { $0.0 < $1.0 }) {
            if let flag {
                // Its hash changes with the flag: when the item comes back, the row it writes is an update.
                try flag.execute([.integer(hash ^ RowStatements.leftOutHashMask), .integer(id)])
                if store.database.changesCount > 0 { changes.updated.insert(id) }
                continue
            }
            try lists.replaceItems(of: id, with: [:], isNew: false)
            try statements.delete.execute([.integer(id)])
            changes.deleted.insert(id)
        }
        if flag == nil { rowCount -= existing.count }
        existing = [:]
        // Every source with rows is named in the sources table, which is how removed files are found. One
        // write with the status, the file and the count it knows: a count(*) and a second write of the
        // same row were a fifth of a first load's per-file cost.
        try store.recordSource(source, collection: statements.schema.table, failure: nil, fingerprint: fingerprint,
                               rows: Int64(rowCount))
        return Changeset(tables: lists.changes.merging([statements.schema.table: changes]) { $1 })
    }
}

/// The statements that store one collection's rows, prepared once per load rather than built and looked
/// up by their SQL for each source: for a folder of small files, that was two thirds of a source's setup.
/// Made after `prepareTable`, and good until the next one: a table made again may have other columns.
public final class RowStatements {
    let schema: CollectionSchema
    /// The ids new rows of the table take.
    let ids: RowIDs
    /// Whether a source (the first argument) gives up a key that the source being stored (the second) has
    /// too: its row is then deleted, where without this the second source fails.
    public var releasesKey: ((String, String) -> Bool)?
    /// Whether a row whose key a source that keeps it has too is skipped (and reported in `skipped`)
    /// rather than failing its source: feeds carry each other's items.
    public var keepsFirstOfSharedKeys = false
    /// Whether a source (the argument) keeps the rows it no longer yields, setting their `leftFeed` column
    /// to 1, rather than deleting them: an archive of a feed (`keep: all`). Only a table with that column keeps.
    public var keepsRowsLeftOut: ((String) -> Bool)?
    /// Flags a row (by id) as no longer in its source, with a new hash; nil without a `leftFeed` column.
    let flagLeftOut: Statement?
    /// Changes a row's hash when it is flagged, so that the same item written again is an update.
    static let leftOutHashMask: Int64 = 0x6C65_6674_4665_6564
    let selectExisting: Statement
    let insert: Statement
    let update: Statement
    let updateLine: Statement
    let delete: Statement
    let joinTables: [ListItemWriter.JoinTable]

    init(database: Database, schema: CollectionSchema) throws {
        self.schema = schema
        let table = quoteIdentifier(schema.table)
        let names = schema.columns.map { quoteIdentifier($0.name) }
        ids = try RowIDs(database: database, table: schema.table)
        selectExisting = try database.makeStatement("SELECT _key, _id, _hash, _line FROM \(table) WHERE _source = ?")
        updateLine = try database.makeStatement("UPDATE \(table) SET _line = ? WHERE _id = ?")
        insert = try database.makeStatement(
            "INSERT INTO \(table) (_id, _key, _source, _line, _hash" + names.map { ", " + $0 }.joined()
                + ") VALUES (?, ?, ?, ?, ?" + String(repeating: ", ?", count: names.count) + ")")
        update = try database.makeStatement(
            "UPDATE \(table) SET _line = ?, _hash = ?" + names.map { ", \($0) = ?" }.joined() + " WHERE _id = ?")
        delete = try database.makeStatement("DELETE FROM \(table) WHERE _id = ?")
        flagLeftOut = schema.columns.contains { $0.name == "leftFeed" }
            ? try database.makeStatement("UPDATE \(table) SET leftFeed = 1, _hash = ? WHERE _id = ? AND leftFeed IS NOT 1") : nil
        joinTables = try ListItemWriter.joinTables(database: database, schema: schema)
    }

    /// Records the ids this load's new rows took, in the load's transaction: call it once the rows are stored.
    public func saveIDs() throws {
        try ids.save()
        for table in joinTables { try table.ids.save() }
    }
}

/// Hands out the ids of a table's new rows: never one a row of the table has had, even one deleted since.
///
/// SQLite gives a new row the largest id plus one, so a row inserted after the newest was deleted took
/// its id, and "deleted, then inserted" reached the results controllers as an update of one row: a record
/// replaced by another with the same content hash would keep the pages showing the old one, and records
/// pointing at the deleted key would not be told. AUTOINCREMENT would do the same at the cost of a write
/// per insert (0.7 µs, 0.3 s of a 100,000-record load); here the highest id is written once per load.
public final class RowIDs {
    private let database: Database
    private let table: String
    /// The highest id handed out, and the highest the store has recorded.
    private var last: Int64, saved: Int64

    init(database: Database, table: String) throws {
        self.database = database
        self.table = table
        saved = try database.fetchValue("SELECT last FROM sitegen_ids WHERE name = ?", [.text(table)])?.int64Value ?? 0
        let highest = try database.fetchValue("SELECT max(_id) FROM \(quoteIdentifier(table))")?.int64Value ?? 0
        last = max(saved, highest)
    }

    /// A new row's id.
    func next() -> Int64 {
        last += 1
        return last
    }

    /// Records the highest id handed out, if it is new.
    func save() throws {
        guard last > saved else { return }
        try database.execute("INSERT OR REPLACE INTO sitegen_ids (name, last) VALUES (?, ?)", [.text(table), .integer(last)])
        saved = last
    }
}

extension SiteStore {
    /// Prepares the statements that store `schema`'s rows, for every `replaceRows` of one load.
    public func rowStatements(for schema: CollectionSchema) throws -> RowStatements {
        try RowStatements(database: database, schema: schema)
    }

    /// Makes the rows from `source` exactly those `body` writes, all or nothing: when `body` or a write
    /// throws, the source's rows are as before. Records the source as loaded, `ok`, with `fingerprint` or
    /// the one `body` sets (without one, no size, time or hash: the next load reads the file again), in
    /// place of any earlier status. Returns the changes to the collection's table and its list join tables.
    ///
    /// ```swift
    /// let changes = try store.replaceRows(of: "records.ndjson", in: schema) { rows in
    ///     for row in parsed { try rows.write(row) }
    /// }
    /// ```
    public func replaceRows(of source: String, in schema: CollectionSchema, fingerprint: SourceFingerprint? = nil,
                            _ body: (RowReplacement) throws -> Void) throws -> Changeset
    {
        let statements = try rowStatements(for: schema)
        return try savepoint {
            let changes = try replaceRows(of: source, using: statements, fingerprint: fingerprint, inSavepoint: false, body)
            try statements.saveIDs()
            return changes
        }
    }

    /// `replaceRows(of:in:fingerprint:_:)` with statements prepared once for many sources of a collection.
    /// Without `inSavepoint`, a failure leaves what was written so far: the caller's own `savepoint` must undo it.
    public func replaceRows(of source: String, using statements: RowStatements, fingerprint: SourceFingerprint? = nil,
                            inSavepoint: Bool = true, _ body: (RowReplacement) throws -> Void) throws -> Changeset
    {
        func replace() throws -> Changeset {
            let replacement = try RowReplacement(store: self, source: source, statements: statements, fingerprint: fingerprint)
            try body(replacement)
            return try replacement.finish()
        }
        return inSavepoint ? try savepoint(replace) : try replace()
    }
}

/// Keeps a collection's list join tables (`<table>__<column>`: record, position, value) in step with its
/// rows, through statements prepared once per load rather than looked up by their SQL for every row.
final class ListItemWriter {
    struct JoinTable {
        let name: String
        let column: String
        let ids: RowIDs
        let select: Statement
        let deleteItem: Statement
        let movePosition: Statement
        let insert: Statement
    }

    private let database: Database
    private let tables: [JoinTable]
    /// The join-table rows inserted and deleted so far, by table.
    private(set) var changes: [String: Changeset.TableChanges] = [:]

    init(database: Database, tables: [JoinTable]) {
        self.database = database
        self.tables = tables
    }

    convenience init(database: Database, schema: CollectionSchema) throws {
        self.init(database: database, tables: try Self.joinTables(database: database, schema: schema))
    }

    /// The statements for each of `schema`'s list join tables.
    static func joinTables(database: Database, schema: CollectionSchema) throws -> [JoinTable] {
        try schema.listColumns.map { column in
            let name = CollectionSchema.listTable(schema.table, column)
            let quoted = quoteIdentifier(name)
            return JoinTable(
                name: name, column: column, ids: try RowIDs(database: database, table: name),
                select: try database.cachedStatement("SELECT _id, position, value FROM \(quoted) WHERE record_id = ?"),
                deleteItem: try database.cachedStatement("DELETE FROM \(quoted) WHERE _id = ?"),
                movePosition: try database.cachedStatement("UPDATE \(quoted) SET position = ? WHERE _id = ?"),
                insert: try database.cachedStatement("INSERT INTO \(quoted) (_id, record_id, position, value) VALUES (?, ?, ?, ?)"))
        }
    }

    /// Makes record `id`'s items those of `lists` (an absent list empties it); a new record has none to remove.
    func replaceItems(of id: Int64, with lists: [String: [String]], isNew: Bool) throws {
        for table in tables {
            // An item the record had and still has keeps its row, an update (the record changed): a
            // taxonomy's listings then report an edited record as updated, as its other listings do, not as
            // deleted and added again.
            var had: [String: (id: Int64, position: Int64)] = [:]
            if !isNew {
                try table.select.forEachRow([.integer(id)]) { row in
                    had[row.string(at: 2) ?? ""] = (row.int64(at: 0), row.int64(at: 1))
                }
            }
            let items = lists[table.column] ?? []
            // A record is under an item once (`tags: x; x` lists it once under x, and its feeds once), at
            // the item's first place.
            var seen = Set<String>()
            for (position, value) in items.enumerated() where items.count == 1 || seen.insert(value).inserted {
                if let kept = had.removeValue(forKey: value) {
                    if kept.position != Int64(position) { try table.movePosition.execute([.integer(Int64(position)), .integer(kept.id)]) }
                    changes[table.name, default: .init()].updated.insert(kept.id)
                    continue
                }
                let itemID = table.ids.next()
                try table.insert.execute([.integer(itemID), .integer(id), .integer(Int64(position)), .text(value)])
                changes[table.name, default: .init()].inserted.insert(itemID)
            }
            for (_, gone) in had.sorted(by: { $0.value.id < $1.value.id }) {
                try table.deleteItem.execute([.integer(gone.id)])
                changes[table.name, default: .init()].deleted.insert(gone.id)
            }
        }
    }
}
