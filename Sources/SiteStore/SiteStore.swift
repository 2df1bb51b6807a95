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
                path TEXT PRIMARY KEY, collection TEXT NOT NULL, status TEXT NOT NULL, message TEXT);
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
        try database.execute("DROP TABLE IF EXISTS \(quoteIdentifier(schema.table))")
        for statement in schema.createStatements { try database.execute(statement) }
        try database.execute(
            "INSERT OR REPLACE INTO sitegen_collections (name, signature) VALUES (?, ?)",
            [.text(schema.table), .text(schema.signature)])
        return true
    }

    /// Makes the rows from `source` exactly `rows`: inserts new keys, updates rows whose hash changed,
    /// deletes keys the source no longer has. All or nothing: on error the source's rows are as before.
    public func replaceRows(of source: String, in schema: CollectionSchema, with rows: [StoredRow]) throws
        -> Changeset.TableChanges
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
                } else {
                    if let other = try database.fetchValue("SELECT _source FROM \(table) WHERE _key = ?", [.text(row.key)]) {
                        throw StoreError.duplicateKey(collection: schema.table, key: row.key, otherSource: other.stringValue ?? "?")
                    }
                    try insert.execute([.text(row.key), .text(source), .integer(Int64(row.line)), .integer(row.contentHash)] + row.values)
                    changes.inserted.insert(database.lastInsertedRowID)
                }
            }
            let delete = try database.cachedStatement("DELETE FROM \(table) WHERE _id = ?")
            for (_, old) in existing {
                try delete.execute([.integer(old.id)])
                changes.deleted.insert(old.id)
            }
            return changes
        }
    }

    /// Deletes the rows of every source of the collection not in `sources` (files that were removed).
    public func deleteRows(ofSourcesOtherThan sources: Set<String>, in schema: CollectionSchema) throws
        -> Changeset.TableChanges
    {
        let table = quoteIdentifier(schema.table)
        var changes = Changeset.TableChanges()
        var stale: [String] = []
        try database.cachedStatement("SELECT DISTINCT _source FROM \(table)").forEachRow { row in
            if let source = row.string(at: 0), !sources.contains(source) { stale.append(source) }
        }
        for source in stale {
            try database.cachedStatement("SELECT _id FROM \(table) WHERE _source = ?").forEachRow([.text(source)]) {
                changes.deleted.insert($0.int64(at: 0))
            }
            try database.execute("DELETE FROM \(table) WHERE _source = ?", [.text(source)])
            try database.execute("DELETE FROM sitegen_sources WHERE path = ?", [.text(source)])
        }
        return changes
    }

    /// Records how the last load of `source` went (`ok`, or `failed` with the message).
    public func recordSourceStatus(_ source: String, collection: String, failure: String?) throws {
        try database.execute(
            "INSERT OR REPLACE INTO sitegen_sources (path, collection, status, message) VALUES (?, ?, ?, ?)",
            [.text(source), .text(collection), .text(failure == nil ? "ok" : "failed"), failure.map { .text($0) } ?? .null])
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
