import Foundation

/// The site's SQLite store (`.sitegen/store.sqlite`): collection tables, source status and the output manifest.
///
/// Every statement that touches these tables is here; callers change the store only inside `transaction`.
public final class SiteStore {
    /// The connection, for results controllers reading the collections.
    public let database: Database

    /// Opens (creating if needed) the store at `path`, creating its folder.
    public init(path: String) throws {
        if path != ":memory:" {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        database = try Database(path: path)
        try database.executeScript("""
            CREATE TABLE IF NOT EXISTS sitegen_collections (name TEXT PRIMARY KEY, signature TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS sitegen_sources (
                path TEXT PRIMARY KEY, collection TEXT NOT NULL, status TEXT NOT NULL, message TEXT,
                size INTEGER, mtime REAL, hash INTEGER, rows INTEGER, loaded_at TEXT);
            CREATE TABLE IF NOT EXISTS sitegen_outputs (path TEXT PRIMARY KEY, hash INTEGER NOT NULL);
            """)
    }

    /// Runs `body` in one transaction.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try database.transaction(body)
    }

    /// Creates the collection's table, or drops and recreates it when its columns changed
    /// (the sources are the truth; every row is then read again). Returns whether it was (re)created.
    @discardableResult
    public func prepareTable(_ schema: CollectionSchema) throws -> Bool {
        let stored = try database.fetchValue(
            "SELECT signature FROM sitegen_collections WHERE name = ?", [.text(schema.table)])?.stringValue
        if stored == schema.signature, try database.tableExists(schema.table) { return false }
        // Join tables of list columns first: they refer to the collection's table.
        for row in try database.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ESCAPE '\\'",
                                         [.text(schema.table.replacingOccurrences(of: "_", with: "\\_") + "\\_\\_%")]) {
            if let name = row["name"]?.stringValue { try database.execute("DROP TABLE IF EXISTS \(quoteIdentifier(name))") }
        }
        try database.execute("DROP TABLE IF EXISTS \(quoteIdentifier(schema.table))")
        // Every source of the collection must be read again into the new table.
        try database.execute("DELETE FROM sitegen_sources WHERE collection = ?", [.text(schema.table)])
        for statement in schema.createStatements { try database.execute(statement) }
        try database.execute(
            "INSERT OR REPLACE INTO sitegen_collections (name, signature) VALUES (?, ?)",
            [.text(schema.table), .text(schema.signature)])
        return true
    }

    /// Makes the rows from `source` exactly `rows`: inserts new keys, updates rows whose hash changed,
    /// deletes keys the source no longer has, and keeps list join tables in step. All or nothing: on error
    /// the source's rows are as before. Returns the changes to the collection's table and its join tables.
    public func replaceRows(of source: String, in schema: CollectionSchema, with rows: [StoredRow]) throws -> Changeset {
        var joinChanges: [String: Changeset.TableChanges] = [:]
        let main = try replaceRecordRows(of: source, in: schema, with: rows, joinChanges: &joinChanges)
        return Changeset(tables: joinChanges.merging([schema.table: main]) { $1 })
    }

    private func replaceRecordRows(of source: String, in schema: CollectionSchema, with rows: [StoredRow],
                                   joinChanges: inout [String: Changeset.TableChanges]) throws -> Changeset.TableChanges
    {
        try savepoint {
            let table = quoteIdentifier(schema.table)
            var existing: [String: (id: Int64, hash: Int64)] = [:]
            try database.cachedStatement("SELECT _key, _id, _hash FROM \(table) WHERE _source = ?")
                .forEachRow([.text(source)]) { row in
                    existing[row.string(at: 0) ?? ""] = (row.int64(at: 1), row.int64(at: 2))
                }
            let names = schema.columns.map { quoteIdentifier($0.name) }
            let insert = try database.cachedStatement(
                "INSERT INTO \(table) (_key, _source, _line, _hash" + names.map { ", " + $0 }.joined()
                    + ") VALUES (?, ?, ?, ?" + String(repeating: ", ?", count: names.count) + ")")
            let update = try database.cachedStatement(
                "UPDATE \(table) SET _line = ?, _hash = ?" + names.map { ", \($0) = ?" }.joined() + " WHERE _id = ?")
            var changes = Changeset.TableChanges()
            for row in rows {
                guard row.values.count == names.count else {
                    throw StoreError.columnCountMismatch(table: schema.table, expected: names.count, found: row.values.count)
                }
                if let old = existing.removeValue(forKey: row.key) {
                    guard old.hash != row.contentHash else { continue }
                    try update.execute([.integer(Int64(row.line)), .integer(row.contentHash)] + row.values + [.integer(old.id)])
                    changes.updated.insert(old.id)
                    try replaceListItems(of: old.id, with: row.lists, in: schema, changes: &joinChanges)
                } else {
                    do {
                        try insert.execute([.text(row.key), .text(source), .integer(Int64(row.line)), .integer(row.contentHash)] + row.values)
                    } catch let error as SQLiteError where error.code == 2067 /* SQLITE_CONSTRAINT_UNIQUE */ {
                        // Another source has this key: only now is it worth a query, to name that source.
                        let other = try database.fetchValue("SELECT _source FROM \(table) WHERE _key = ?", [.text(row.key)])
                        throw StoreError.duplicateKey(collection: schema.table, key: row.key, otherSource: other?.stringValue ?? "?")
                    }
                    let id = database.lastInsertedRowID
                    changes.inserted.insert(id)
                    try replaceListItems(of: id, with: row.lists, in: schema, changes: &joinChanges)
                }
            }
            let delete = try database.cachedStatement("DELETE FROM \(table) WHERE _id = ?")
            for (_, old) in existing {
                try replaceListItems(of: old.id, with: [:], in: schema, changes: &joinChanges)
                try delete.execute([.integer(old.id)])
                changes.deleted.insert(old.id)
            }
            return changes
        }
    }

    /// Replaces record `id`'s items in each list join table (an absent list empties it).
    private func replaceListItems(of id: Int64, with lists: [String: [String]], in schema: CollectionSchema,
                                  changes: inout [String: Changeset.TableChanges]) throws
    {
        for column in schema.listColumns {
            let join = CollectionSchema.listTable(schema.table, column)
            let quoted = quoteIdentifier(join)
            try database.cachedStatement("SELECT _id FROM \(quoted) WHERE record_id = ?").forEachRow([.integer(id)]) {
                changes[join, default: .init()].deleted.insert($0.int64(at: 0))
            }
            try database.execute("DELETE FROM \(quoted) WHERE record_id = ?", [.integer(id)])
            let insert = try database.cachedStatement("INSERT INTO \(quoted) (record_id, position, value) VALUES (?, ?, ?)")
            for (position, value) in (lists[column] ?? []).enumerated() {
                try insert.execute([.integer(id), .integer(Int64(position)), .text(value)])
                changes[join, default: .init()].inserted.insert(database.lastInsertedRowID)
            }
        }
    }

    /// Deletes the rows of every source of the collection not in `sources` (files that were removed),
    /// with their list items.
    public func deleteRows(ofSourcesOtherThan sources: Set<String>, in schema: CollectionSchema) throws -> Changeset {
        let table = quoteIdentifier(schema.table)
        var changes = Changeset.TableChanges()
        var joinChanges: [String: Changeset.TableChanges] = [:]
        var stale: [String] = []
        try database.cachedStatement("SELECT DISTINCT _source FROM \(table)").forEachRow { row in
            if let source = row.string(at: 0), !sources.contains(source) { stale.append(source) }
        }
        for source in stale {
            var ids: [Int64] = []
            try database.cachedStatement("SELECT _id FROM \(table) WHERE _source = ?").forEachRow([.text(source)]) {
                ids.append($0.int64(at: 0))
            }
            for id in ids {
                try replaceListItems(of: id, with: [:], in: schema, changes: &joinChanges)
                changes.deleted.insert(id)
            }
            try database.execute("DELETE FROM \(table) WHERE _source = ?", [.text(source)])
            try database.execute("DELETE FROM sitegen_sources WHERE path = ?", [.text(source)])
        }
        return Changeset(tables: joinChanges.merging([schema.table: changes]) { $1 })
    }

    /// What the store knows of a source file from its last load.
    public struct SourceFingerprint: Sendable, Equatable {
        public var size: Int64
        public var modified: Double
        public var hash: Int64
        /// Whether that load succeeded (a failed source is always read again).
        public var succeeded: Bool

        /// Describes a file as loaded.
        public init(size: Int64, modified: Double, hash: Int64, succeeded: Bool) {
            self.size = size
            self.modified = modified
            self.hash = hash
            self.succeeded = succeeded
        }
    }

    /// The fingerprint recorded for `source` by its last load, if any.
    public func fingerprint(of source: String) throws -> SourceFingerprint? {
        let rows = try database.fetchAll("SELECT size, mtime, hash, status FROM sitegen_sources WHERE path = ?", [.text(source)])
        guard let row = rows.first, let size = row["size"]?.int64Value, let hash = row["hash"]?.int64Value else { return nil }
        let modified: Double
        switch row["mtime"] {
        case .real(let value)?: modified = value
        case .integer(let value)?: modified = Double(value)
        default: return nil
        }
        return SourceFingerprint(size: size, modified: modified, hash: hash, succeeded: row["status"] == .text("ok"))
    }

    /// Records how the last load of `source` went (`ok`, or `failed` with the message) and the file it read.
    public func recordSourceStatus(_ source: String, collection: String, failure: String?, fingerprint: SourceFingerprint? = nil) throws {
        let rows = try database.fetchValue("SELECT count(*) FROM \(quoteIdentifier(collection)) WHERE _source = ?", [.text(source)])
        try database.execute(
            "INSERT OR REPLACE INTO sitegen_sources (path, collection, status, message, size, mtime, hash, rows) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [.text(source), .text(collection), .text(failure == nil ? "ok" : "failed"), failure.map { .text($0) } ?? .null,
             fingerprint.map { .integer($0.size) } ?? .null, fingerprint.map { .real($0.modified) } ?? .null,
             fingerprint.map { .integer($0.hash) } ?? .null, rows ?? .null])
    }

    /// One source's last load, as `sitegen sources` lists it.
    public struct SourceStatus: Sendable, Equatable {
        public var path: String
        public var collection: String
        /// `ok` or `failed`.
        public var status: String
        /// Why it failed.
        public var message: String?
        /// Rows it holds in the store.
        public var rows: Int
    }

    /// Every source the store knows, by collection then path.
    public func sourceStatuses() throws -> [SourceStatus] {
        try database.fetchAll("SELECT path, collection, status, message, rows FROM sitegen_sources ORDER BY collection, path").map {
            SourceStatus(path: $0["path"]?.stringValue ?? "", collection: $0["collection"]?.stringValue ?? "",
                         status: $0["status"]?.stringValue ?? "", message: $0["message"]?.stringValue,
                         rows: Int($0["rows"]?.int64Value ?? 0))
        }
    }

    /// How many rows the collection's table holds.
    public func rowCount(of table: String) throws -> Int {
        Int(try database.fetchValue("SELECT count(*) FROM \(quoteIdentifier(table))")?.int64Value ?? 0)
    }

    /// The output files the last build wrote, with their content hashes.
    public func outputManifest() throws -> [String: Int64] {
        var manifest: [String: Int64] = [:]
        try database.cachedStatement("SELECT path, hash FROM sitegen_outputs").forEachRow { row in
            manifest[row.string(at: 0) ?? ""] = row.int64(at: 1)
        }
        return manifest
    }

    /// Replaces the output manifest with `manifest`.
    public func replaceOutputManifest(_ manifest: [String: Int64]) throws {
        try database.execute("DELETE FROM sitegen_outputs")
        let insert = try database.cachedStatement("INSERT INTO sitegen_outputs (path, hash) VALUES (?, ?)")
        for path in manifest.keys.sorted() { try insert.execute([.text(path), .integer(manifest[path]!)]) }
    }

    private var savepointDepth = 0

    private func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        let name = "sitegen_\(savepointDepth)"
        defer { savepointDepth -= 1 }
        try database.execute("SAVEPOINT \(name)")
        do {
            let result = try body()
            try database.execute("RELEASE \(name)")
            return result
        } catch {
            try? database.execute("ROLLBACK TO \(name)")
            try? database.execute("RELEASE \(name)")
            throw error
        }
    }
}
