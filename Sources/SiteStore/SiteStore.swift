import Foundation

/// The site's SQLite store (`.sitegen/store.sqlite`): collection tables, source status and the output manifest.
///
/// Every statement that touches these tables is here; callers change the store only inside `transaction`.
public final class SiteStore {
    /// The connection, for results controllers reading the collections.
    public let database: Database

    /// Where the store is (`:memory:` for none on disk).
    let path: String
    /// Whether the file was made by this opening: nothing in it is the last good version of anything yet.
    let isNew: Bool
    /// Whether a new store's first load was synced to the disk on another thread (see `bulkWriting`), and
    /// whether that has ended.
    private var syncedInBackground = false
    private let backgroundSync = BackgroundSync()

    /// Opens (creating if needed) the store at `path`, creating its folder.
    public init(path: String) throws {
        self.path = path
        if path != ":memory:" {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
            // A new store's first load whose sync a power cut (or a killed process) stopped: its pages may be
            // half on the disk, and nothing in it was not in the sources, so it is made again from them.
            Self.removeIfUnsynced(path)
        }
        isNew = path == ":memory:" || !FileManager.default.fileExists(atPath: path)
        // SQLite's 4 KiB pages: 64 KiB pages loaded large records faster but made every row read by id
        // bring a whole 64 KiB page, and rendering slower (decisions.md, 7).
        database = try Database(path: path)
        if path != ":memory:" {
            // Pages are read by row id in the listings' orders, and a record with its body fills a page of
            // its own, so an incremental build reads a hundred thousand pages. Mapped, a page costs no
            // system call or copy: the 100,000-record mutation round went from 2.42-2.78 s to 2.34-2.36 s.
            // Mapped pages count as resident memory (decisions.md 15).
            try database.execute("PRAGMA mmap_size = \(Self.mappedBytes)")
        }
        // The page manifest is one tree keyed by path (WITHOUT ROWID), where a first build of 120,000 pages
        // inserted into a table and its index on path alike; stores made before keep theirs, read the same way.
        // A listing's item pieces are one tree in the rows' order, so that a page's pieces are one range of it
        // (decisions.md 39h); the table before, keyed by row id, held only a cache and is dropped.
        try database.executeScript("""
            CREATE TABLE IF NOT EXISTS sitegen_collections (name TEXT PRIMARY KEY, signature TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS sitegen_sources (
                path TEXT PRIMARY KEY, collection TEXT NOT NULL, status TEXT NOT NULL, message TEXT,
                size INTEGER, mtime REAL, hash INTEGER, rows INTEGER, loaded_at TEXT);
            CREATE TABLE IF NOT EXISTS sitegen_state (name TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS sitegen_ids (name TEXT PRIMARY KEY, last INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS sitegen_folder_files (folder TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (folder, path)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS sitegen_pages (
                path TEXT PRIMARY KEY, settings INTEGER, template INTEGER, data INTEGER, content INTEGER, hash INTEGER NOT NULL,
                owner TEXT NOT NULL, section TEXT NOT NULL, page INTEGER NOT NULL, record INTEGER NOT NULL, key TEXT NOT NULL)
                WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS sitegen_pages_record ON sitegen_pages (record, page, owner);
            DROP TABLE IF EXISTS sitegen_fragments;
            CREATE TABLE IF NOT EXISTS sitegen_item_pieces (
                key INTEGER NOT NULL, section TEXT NOT NULL, place BLOB NOT NULL, id INTEGER NOT NULL,
                version INTEGER NOT NULL, html TEXT NOT NULL,
                PRIMARY KEY (key, section, place, id)) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS sitegen_sources_by_collection ON sitegen_sources (collection, path);
            CREATE TABLE IF NOT EXISTS sitegen_responses (
                url TEXT PRIMARY KEY, status INTEGER NOT NULL, etag TEXT, last_modified TEXT, fetched_at REAL NOT NULL,
                changed_at REAL NOT NULL, checked_at REAL NOT NULL, body BLOB NOT NULL, hash INTEGER NOT NULL, failure TEXT,
                moved_to TEXT);
            CREATE INDEX IF NOT EXISTS sitegen_sources_failed ON sitegen_sources (collection, path) WHERE status != 'ok';
            CREATE INDEX IF NOT EXISTS sitegen_sources_bundles ON sitegen_sources (collection, path)
                WHERE path LIKE '%/index.md' OR path LIKE '%/index.markdown';
            """)
        // Stores from before the page manifest list their files without inputs: the next build renders
        // every page and still deletes the files no page claims.
        if try database.tableExists("sitegen_outputs") {
            try transaction {
                try database.execute("""
                    INSERT OR IGNORE INTO sitegen_pages (path, hash, owner, section, page, record, key)
                    SELECT path, hash, '', '', 0, 0, '' FROM sitegen_outputs
                    """)
                try database.execute("DROP TABLE sitegen_outputs")
            }
        }
    }

    /// How much of the store file the build's connection reads through memory mapping.
    static let mappedBytes = 1 << 30

    /// Reads the store through `pread` from now on, not through its mapping: for a build that reads every row
    /// once (every page rendered), whose mapped pages would all count as the process's resident memory, up to
    /// `mappedBytes` (the 1,000,000-record full build: 1 GiB of its 2.9 GiB peak, decisions.md 39c). The
    /// kernel's page cache keeps those pages either way.
    public func readWithoutMapping() throws {
        try database.execute("PRAGMA mmap_size = 0")
    }

    /// What is wrong with the store file at `path`, if SQLite finds it damaged (`quick_check`, or a file
    /// that is no database); nil when it is sound or not there. Asked after a build fails, never before:
    /// the check reads the whole file.
    public static func damage(at path: String) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let database = try Database(path: path, readOnly: true)
            let rows = try database.fetchAll("PRAGMA quick_check(1)")
            let verdict = rows.first?["quick_check"]?.stringValue ?? "ok"
            return verdict == "ok" ? nil : verdict
        } catch let error as SQLiteError where [11, 26].contains(error.code & 0xFF) {
            return error.message
        } catch {
            return nil
        }
    }

    /// A value the builds keep between them under `name` (in `sitegen_state`); nil when none is kept.
    public func state(_ name: String) throws -> String? {
        try database.fetchValue("SELECT value FROM sitegen_state WHERE name = ?", [.text(name)])?.stringValue
    }

    /// Keeps `value` under `name` for the next build.
    public func setState(_ name: String, _ value: String) throws {
        try database.execute("INSERT OR REPLACE INTO sitegen_state (name, value) VALUES (?, ?)", [.text(name), .text(value)])
    }

    /// Runs `body` in one transaction.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try database.transaction(body)
    }

    /// Runs `body`, a transaction that writes a lot (a first load of a large source), with a rollback
    /// journal instead of the write-ahead log, then goes back to the log.
    ///
    /// A write-ahead log writes every new page twice (to the log, then to the database when it is
    /// checkpointed); a rollback journal saves only the pages that existed before, so pages appended to
    /// a new table are written once: loading the 3.2 GB benchmark corpus took half the time. Crash safety
    /// is the same. Small transactions stay on the log, which needs fewer syncs. When another connection
    /// keeps the log in use, the switch is not made and `body` runs as usual.
    ///
    /// The first load of a new store does not wait for the disk at its commit (0.5 to 0.8 s of a 100,000-record
    /// first build with both cores idle, decisions.md 23): its pages are synced on another thread while the
    /// build goes on. Until they are, a marker file says so, and a store found with it (a power cut before the
    /// sync ended, or a process killed before it ended) is made again from the sources: it holds nothing else.
    public func bulkWriting<T>(_ body: () throws -> T) throws -> T {
        let switched = (try? database.fetchValue("PRAGMA journal_mode = DELETE")?.stringValue) == "delete"
        let marker = switched && isNew && path != ":memory:" && !syncedInBackground ? Self.createMarker(Self.unsyncedMarker(of: path)) : nil
        defer {
            if let marker {
                try? database.execute("PRAGMA synchronous = NORMAL")
                syncedInBackground = true
                backgroundSync.start(path: path, marker: marker)
            }
        }
        if marker != nil { try database.execute("PRAGMA synchronous = OFF") }
        // Rows arrive in file order, but the listings' sort indexes and the list join tables' value index
        // are written all over: past a few hundred thousand rows their pages no longer fit the default
        // 2 MB cache, and each insert goes back to the kernel for them.
        try database.execute("PRAGMA cache_size = -65536")
        defer {
            if switched { _ = try? database.fetchValue("PRAGMA journal_mode = WAL") }
            try? database.execute("PRAGMA cache_size = -32768")
        }
        return try body()
    }

    /// Whether the collection's table exists with `schema`'s columns and indexes (`prepareTable` then keeps it).
    public func hasTable(_ schema: CollectionSchema) throws -> Bool {
        let stored = try database.fetchValue(
            "SELECT signature FROM sitegen_collections WHERE name = ?", [.text(schema.table)])?.stringValue
        return try stored == schema.signature && database.tableExists(schema.table)
    }

    /// Creates the collection's table, or drops and recreates it when its columns changed
    /// (the sources are the truth; every row is then read again). Returns whether it was (re)created.
    @discardableResult
    public func prepareTable(_ schema: CollectionSchema) throws -> Bool {
        if try hasTable(schema) { return false }
        // Join tables of list columns first: they refer to the collection's table.
        for row in try database.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ESCAPE '\\'",
                                         [.text(schema.table.replacingOccurrences(of: "_", with: "\\_") + "\\_\\_%")]) {
            if let name = row["name"]?.stringValue { try database.execute("DROP TABLE IF EXISTS \(quoteIdentifier(name))") }
        }
        try database.execute("DROP TABLE IF EXISTS \(quoteIdentifier(schema.table))")
        // Every source of the collection must be read again into the new table.
        try database.execute("DELETE FROM sitegen_sources WHERE collection = ?", [.text(schema.table)])
        try sourcesChanged(schema.table, by: nil)
        for statement in schema.createStatements { try database.execute(statement) }
        try database.execute(
            "INSERT OR REPLACE INTO sitegen_collections (name, signature) VALUES (?, ?)",
            [.text(schema.table), .text(schema.signature)])
        return true
    }

    /// Makes the rows from `source` exactly `rows` (see `replaceRows(of:in:_:)`, which takes them one at a time).
    public func replaceRows(of source: String, in schema: CollectionSchema, with rows: [StoredRow]) throws -> Changeset {
        try replaceRows(of: source, in: schema) { replacement in
            for row in rows { try replacement.write(row) }
        }
    }

    /// Deletes the rows of the sources `paths` of the collection (files that were removed), with their
    /// list items.
    public func deleteRows(ofSources paths: [String], in schema: CollectionSchema) throws -> Changeset {
        let table = quoteIdentifier(schema.table)
        var changes = Changeset.TableChanges()
        let lists = try ListItemWriter(database: database, schema: schema)
        for source in paths {
            var ids: [Int64] = []
            try database.cachedStatement("SELECT _id FROM \(table) WHERE _source = ?").forEachRow([.text(source)]) {
                ids.append($0.int64(at: 0))
            }
            for id in ids {
                try lists.replaceItems(of: id, with: [:], isNew: false)
                changes.deleted.insert(id)
            }
            try database.execute("DELETE FROM \(table) WHERE _source = ?", [.text(source)])
            let known = try sourceCollection(of: source)
            try database.execute("DELETE FROM sitegen_sources WHERE path = ?", [.text(source)])
            try sourcesChanged(known ?? schema.table, by: known == nil ? 0 : -1)
        }
        return Changeset(tables: lists.changes.merging([schema.table: changes]) { $1 })
    }

    /// What the store knows of a source file from its last load.
    public struct SourceFingerprint: Sendable, Equatable {
        public var size: Int64
        public var modified: Double
        public var hash: Int64
        /// Whether that load succeeded (a failed source is always read again).
        public var succeeded: Bool
        /// The source's row in the store (0 for a file as found on disk), to find its path by when it is gone.
        public var row: Int64

        /// Describes a file as loaded.
        public init(size: Int64, modified: Double, hash: Int64, succeeded: Bool, row: Int64 = 0) {
            self.size = size
            self.modified = modified
            self.hash = hash
            self.succeeded = succeeded
            self.row = row
        }
    }

    /// When the build began looking at its sources, before it read any file's status: recorded with each
    /// source it loads, to tell a file changed in that clock tick (`racyWindow`).
    public var sourcesLookedAt: Double?

    /// Every source of `collection` the store knows, with the fingerprint of its last load, by `pathKey`
    /// of its path: one query, and no string made per file (a hundred thousand sources took 80 ms as strings).
    public func fingerprints(ofCollection collection: String) throws -> [Int64: SourceFingerprint] {
        // Listed first, then put in a dictionary of their number: counting them first was a second scan of the table.
        var listed: [(key: Int64, fingerprint: SourceFingerprint)] = []
        // Read in the table's order (NOT INDEXED): through the index by collection, SQLite looked each row up.
        try database.cachedStatement("SELECT path, size, mtime, hash, status = 'ok', loaded_at, rowid FROM sitegen_sources NOT INDEXED WHERE collection = ?")
            .forEachRow([.text(collection)]) { row in
                // A source that never loaded has no fingerprint, but it is known: it may have to be deleted.
                var fingerprint = Self.sourceFingerprint(row, from: 1)
                fingerprint.row = row.int64(at: 6)
                listed.append((row.withText(at: 0) { Self.pathKey($0) }, fingerprint))
            }
        var found = [Int64: SourceFingerprint](minimumCapacity: listed.count)
        for (key, fingerprint) in listed { found[key] = fingerprint }
        return found
    }

    /// The sources of `collection` among `paths` the store knows, with the fingerprints of their last loads,
    /// by path: what a build told which files changed looks up instead of all of them.
    public func fingerprints(ofCollection collection: String, paths: some Sequence<String>) throws -> [String: SourceFingerprint] {
        var found: [String: SourceFingerprint] = [:]
        let statement = try database.cachedStatement(
            "SELECT size, mtime, hash, status = 'ok', loaded_at, rowid FROM sitegen_sources WHERE path = ? AND collection = ?")
        for path in paths {
            try statement.forEachRow([.text(path), .text(collection)]) { row in
                var fingerprint = Self.sourceFingerprint(row, from: 0)
                fingerprint.row = row.int64(at: 5)
                found[path] = fingerprint
            }
        }
        return found
    }

    /// The paths of the sources of `collection` under the folder `folder` (as the sources' paths are written).
    public func sourcePaths(ofCollection collection: String, under folder: String) throws -> [String] {
        // A range of the primary key: every path that starts with "folder/" sorts between it and "folder0".
        try database.fetchAll("SELECT path FROM sitegen_sources WHERE path > ? AND path < ? AND collection = ?",
                              [.text(folder + "/"), .text(folder + "0"), .text(collection)]).compactMap { $0["path"]?.stringValue }
    }

    /// The paths of the sources of `collection` whose last load failed: they are read again by every build.
    public func failedSourcePaths(ofCollection collection: String) throws -> [String] {
        // Through the index of the failed alone (SQLite would take the index by collection, of every source).
        try database.fetchAll("SELECT path FROM sitegen_sources INDEXED BY sitegen_sources_failed WHERE collection = ? AND status != 'ok'",
                              [.text(collection)])
            .compactMap { $0["path"]?.stringValue }
    }

    /// The sources of `collection` that are page bundles (`…/index.md`, `…/index.markdown`), found through an
    /// index of them alone: a build lists a site's bundles without reading every source's row.
    public static func bundleSources(ofCollection collection: String, in database: Database) throws -> [String] {
        try database.cachedStatement("""
            SELECT path FROM sitegen_sources INDEXED BY sitegen_sources_bundles
            WHERE collection = ? AND (path LIKE '%/index.md' OR path LIKE '%/index.markdown') ORDER BY path
            """).fetchAll([.text(collection)]).compactMap { $0["path"]?.stringValue }
    }

    /// How many sources of `collection` the store knows. Counted once, then again only after a source's row
    /// was written (by any connection: each write changes the `sources-stamp` state): a watch's build asked
    /// it every time, and counting 100,000 sources was a quarter of that build.
    public func sourceCount(ofCollection collection: String) throws -> Int {
        let stamp = try sourcesStamp()
        if let known = sourceCounts, known.stamp == stamp, let count = known.counts[collection] { return count }
        let count = Int(try database.fetchValue("SELECT count(*) FROM sitegen_sources WHERE collection = ?", [.text(collection)])?.int64Value ?? 0)
        var counts = sourceCounts?.stamp == stamp ? sourceCounts!.counts : [:]
        counts[collection] = count
        sourceCounts = (stamp, counts)
        return count
    }

    /// The source counts `sourceCount(ofCollection:)` found, with the `sources-stamp` they are good for.
    private var sourceCounts: (stamp: String, counts: [String: Int])?
    /// Notes that a source's row of `collection` is written, which changes its count `by` rows (nil: not
    /// known): the stamp changes, so that every other connection counts again, and this one's counts follow.
    private func sourcesChanged(_ collection: String, by change: Int?) throws {
        let before = try sourcesStamp(), stamp = UUID().uuidString
        try database.cachedStatement("INSERT OR REPLACE INTO sitegen_state (name, value) VALUES ('sources-stamp', ?)").execute([.text(stamp)])
        guard var known = sourceCounts, known.stamp == before, let change else {
            sourceCounts = nil
            return
        }
        if let count = known.counts[collection] { known.counts[collection] = count + change }
        known.stamp = stamp
        sourceCounts = known
    }

    /// The stamp the sources' rows were last written under ("" before any).
    private func sourcesStamp() throws -> String {
        try database.cachedStatement("SELECT value FROM sitegen_state WHERE name = 'sources-stamp'").fetchAll().first?["value"]?.stringValue ?? ""
    }

    /// The collection the store has a source at `path` of; nil when it has none.
    private func sourceCollection(of path: String) throws -> String? {
        try database.cachedStatement("SELECT collection FROM sitegen_sources WHERE path = ?").fetchAll([.text(path)]).first?["collection"]?.stringValue
    }

    /// The paths of the sources at `rows` (their fingerprints' `row`), sorted.
    public func sourcePaths(atRows rows: [Int64]) throws -> [String] {
        var found: [String] = []
        for start in stride(from: 0, to: rows.count, by: 500) {
            let chunk = rows[start..<min(start + 500, rows.count)]
            let list = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            try database.makeStatement("SELECT path FROM sitegen_sources WHERE rowid IN (\(list))")
                .forEachRow(chunk.map { .integer($0) }) { row in
                    if let path = row.string(at: 0) { found.append(path) }
                }
        }
        return found.sorted()
    }

    /// A 64-bit FNV-1a hash of a source path, to look sources up by (a collision needs the same size and
    /// modification time too before it could hide a change).
    public static func pathKey(_ path: String) -> Int64 {
        var path = path
        return path.withUTF8 { pathKey(UnsafeRawBufferPointer($0)) }
    }

    /// The state `pathKey` hashes a path's bytes from (FNV-1a's offset basis): a path's key may be
    /// hashed in parts, its folder's once and each name's from there.
    public static let pathKeyStart: UInt64 = 0xcbf2_9ce4_8422_2325

    static func pathKey(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        var hash = pathKeyStart
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int64(bitPattern: hash)
    }

    /// How close to the moment its build began looking at the sources a file's change time has to be for
    /// that build's load not to vouch for the file. A file system stamps changes with a clock that moves in
    /// ticks (a jiffy on ext4 before Linux 6.13, a second or two on FAT and some network file systems), and
    /// a file written again in the tick its build read it keeps its change time: at the same size, only its
    /// bytes tell (git's "racily clean" entries). A time in whole seconds is taken to come from such a clock.
    static func racyWindow(_ modified: Double) -> Double { modified.rounded(.down) == modified ? 2.5 : 0.05 }

    /// The fingerprint of a row of `size, mtime, hash, status = 'ok', loaded_at` starting at column `first` (the
    /// status compared by SQLite rather than made into a string per row). A source
    /// that never loaded has none that matches a file; one whose file changed within `racyWindow` of its
    /// build's look keeps its size and hash but no change time, so that the next build compares its bytes.
    private static func sourceFingerprint(_ row: Statement, from first: Int) -> SourceFingerprint {
        guard !row.isNull(at: first), !row.isNull(at: first + 1), !row.isNull(at: first + 2) else {
            return SourceFingerprint(size: -1, modified: 0, hash: 0, succeeded: false)
        }
        var modified = row.double(at: first + 1)
        if !row.isNull(at: first + 4), modified > row.double(at: first + 4) - racyWindow(modified) { modified = -1 }
        return SourceFingerprint(size: row.int64(at: first), modified: modified, hash: row.int64(at: first + 2),
                                 succeeded: row.int64(at: first + 3) != 0)
    }

    /// Records how the last load of `source` went (`ok`, or `failed` with the message) and the file it read.
    public func recordSourceStatus(_ source: String, collection: String, failure: String?, fingerprint: SourceFingerprint? = nil) throws {
        let rows = try database.fetchValue("SELECT count(*) FROM \(quoteIdentifier(collection)) WHERE _source = ?", [.text(source)])
        try recordSource(source, collection: collection, failure: failure, fingerprint: fingerprint,
                         rows: rows?.int64Value ?? 0)
    }

    /// Writes the source's row in `sitegen_sources` when its row count is known (a replacement counts its own).
    func recordSource(_ source: String, collection: String, failure: String?, fingerprint: SourceFingerprint?, rows: Int64) throws {
        let known = try sourceCollection(of: source)
        try sourcesChanged(collection, by: known == nil ? 1 : known == collection ? 0 : nil)
        try database.execute(
            """
            INSERT OR REPLACE INTO sitegen_sources (path, collection, status, message, size, mtime, hash, rows, loaded_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(source), .text(collection), .text(failure == nil ? "ok" : "failed"), failure.map { .text($0) } ?? .null,
             fingerprint.map { .integer($0.size) } ?? .null, fingerprint.map { .real($0.modified) } ?? .null,
             fingerprint.map { .integer($0.hash) } ?? .null, .integer(rows), sourcesLookedAt.map { .real($0) } ?? .null])
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

    /// Notes that a build is writing the output folder `folder`, and returns whether the previous one was
    /// still doing so when it stopped (killed, or failed half-way: then the folder may hold files no
    /// manifest names, and the next build must look at every file), and which folder the manifest describes.
    @discardableResult
    public func beginWritingOutput(to folder: String = "") throws -> (interrupted: Bool, lastFolder: String?) {
        try transaction {
            let interrupted = try database.fetchValue("SELECT value FROM sitegen_state WHERE name = 'writing-output'") != nil
            let lastFolder = try database.fetchValue("SELECT value FROM sitegen_state WHERE name = 'output-folder'")?.stringValue
            try database.execute("INSERT OR REPLACE INTO sitegen_state (name, value) VALUES ('writing-output', '1')")
            if !folder.isEmpty {
                try database.execute("INSERT OR REPLACE INTO sitegen_state (name, value) VALUES ('output-folder', ?)", [.text(folder)])
            }
            return (interrupted, lastFolder)
        }
    }

    /// Keeps the changes of a build that stopped before publishing (a template error) for the next build,
    /// in place of any an earlier stopped build kept (the build merged those into its own), and unmarks the
    /// output as being written: the folder still holds the last complete build's files, and the next build,
    /// handed these changes with its own, renders the pages they touch rather than every page. False when
    /// the changes cannot be kept (a table name with a line break), and the mark stays.
    @discardableResult
    public func keepPendingChanges(_ changes: Changeset) throws -> Bool {
        guard !changes.tables.keys.contains(where: { $0.contains("\n") }) else { return false }
        try transaction {
            try setState("pending-changes", changes.encoded)
            try database.execute("DELETE FROM sitegen_state WHERE name = 'writing-output'")
        }
        return true
    }

    /// The changes stopped builds kept for the next one (`keepPendingChanges`), if any.
    public func pendingChanges() throws -> Changeset? {
        try state("pending-changes").flatMap(Changeset.init(encoded:))
    }

    /// Keeps the manifest's paths as the files builds left in `folder`, the output folder the manifest
    /// describes, before a build writes another one: a later build back into `folder` deletes those it no
    /// longer makes (the pages of records deleted meanwhile), as a clean build would leave the folder.
    public func rememberFiles(ofFolder folder: String) throws {
        try transaction {
            try database.execute("DELETE FROM sitegen_folder_files WHERE folder = ?", [.text(folder)])
            try database.execute("INSERT INTO sitegen_folder_files (folder, path) SELECT ?, path FROM sitegen_pages", [.text(folder)])
        }
    }

    /// Remembers `paths` as files builds left in `folder` (a file a build could not delete there).
    public func remember(_ paths: [String], ofFolder folder: String) throws {
        try transaction {
            let insert = try database.cachedStatement("INSERT OR IGNORE INTO sitegen_folder_files (folder, path) VALUES (?, ?)")
            for path in paths { try insert.execute([.text(folder), .text(path)]) }
        }
    }

    /// The files builds left in `folder` when they last wrote it before writing another (`rememberFiles`).
    public func rememberedFiles(ofFolder folder: String) throws -> [String] {
        try database.fetchAll("SELECT path FROM sitegen_folder_files WHERE folder = ?", [.text(folder)]).compactMap { $0["path"]?.stringValue }
    }

    /// Forgets the files remembered for `folder`: the manifest describes that folder now.
    public func forgetFiles(ofFolder folder: String) throws {
        try database.execute("DELETE FROM sitegen_folder_files WHERE folder = ?", [.text(folder)])
    }

    private var savepointDepth = 0

    /// The file whose presence says that the store's first load may not be on the disk yet.
    static func unsyncedMarker(of path: String) -> String { path + "-unsynced" }

    /// Makes the marker file at `path`, locked by this process until its descriptor (returned) is closed,
    /// and syncs it and its folder, so that it is on the disk before anything it warns of is written; nil
    /// when it cannot be made (then the load waits for the disk as usual, and no marker is left). It is
    /// made and locked under another name, then renamed: no other process can find it unlocked.
    private static func createMarker(_ path: String) -> Int32? {
        let made = path + ".\(getpid())"
        unlink(made)
        let descriptor = open(made, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX) == 0, fsync(descriptor) == 0, rename(made, path) == 0 else {
            unlink(made)
            close(descriptor)
            return nil
        }
        guard syncFolder(of: path) else {
            unlink(path)
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Deletes the store at `path` when its marker was left by a process that is gone: no one holds the
    /// marker's lock, and once locked here it is still the file at its path (else its sync had just ended
    /// and removed it). The lock is held until the store and the marker are gone, so that two processes
    /// cannot both find it stale.
    private static func removeIfUnsynced(_ path: String) {
        let marker = unsyncedMarker(of: path)
        let descriptor = open(marker, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return }
        var locked = stat(), named = stat()
        guard fstat(descriptor, &locked) == 0, stat(marker, &named) == 0, locked.st_ino == named.st_ino, locked.st_dev == named.st_dev else {
            return
        }
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
        unlink(marker)
    }

    /// Writes the open file's bytes to the disk: `fdatasync` where there is one (Linux), else `fsync`.
    private static func syncData(_ descriptor: Int32) -> Bool {
        #if os(Linux)
        fdatasync(descriptor) == 0
        #else
        fsync(descriptor) == 0
        #endif
    }

    @discardableResult
    private static func syncFolder(of path: String) -> Bool {
        let folder = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return false }
        defer { close(folder) }
        return fsync(folder) == 0
    }

    /// A sync of the store file running on a thread of its own.
    private final class BackgroundSync: @unchecked Sendable {
        private let condition = NSCondition()
        private var running = false

        /// Syncs the file at `path`, then removes its marker and lets go of it (`marker`, its locked
        /// descriptor); a file that cannot be synced keeps its marker, and the next opening makes the store again.
        func start(path: String, marker: Int32) {
            condition.withLock { running = true }
            let thread = Thread { [self] in
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                if descriptor >= 0 {
                    if SiteStore.syncData(descriptor) {
                        unlink(SiteStore.unsyncedMarker(of: path))
                        SiteStore.syncFolder(of: path)
                    }
                    close(descriptor)
                }
                close(marker)
                condition.withLock {
                    running = false
                    condition.broadcast()
                }
            }
            thread.start()
        }

        func wait() {
            condition.withLock {
                while running { condition.wait() }
            }
        }
    }

    /// Waits until a first load synced in the background is on the disk (at once when there is none).
    public func waitUntilDurable() {
        backgroundSync.wait()
    }

    deinit {
        // Ended, the sync removes the marker; else the next opening would make the store again for nothing.
        backgroundSync.wait()
    }

    /// Runs `body` in a savepoint: all of it or, when it throws, none of it.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        try beginSavepoint()
        do {
            let result = try body()
            try endSavepoint(keeping: true)
            return result
        } catch {
            try? endSavepoint(keeping: false)
            throw error
        }
    }

    /// Opens a savepoint (inside any open one), to be ended by `endSavepoint`, for work that a closure
    /// cannot hold (`savepoint` is the usual way).
    public func beginSavepoint() throws {
        try database.execute("SAVEPOINT sitegen_\(savepointDepth + 1)")
        savepointDepth += 1
    }

    /// Ends the innermost savepoint `beginSavepoint` opened: what was written since is kept, or undone.
    /// It is ended even when this throws (an undoing that fails, after a full disk, has lost the whole
    /// transaction), so it must not be ended again.
    public func endSavepoint(keeping: Bool) throws {
        precondition(savepointDepth > 0, "no savepoint is open")
        let name = "sitegen_\(savepointDepth)"
        savepointDepth -= 1
        if !keeping { try database.execute("ROLLBACK TO \(name)") }
        try database.execute("RELEASE \(name)")
    }
}
