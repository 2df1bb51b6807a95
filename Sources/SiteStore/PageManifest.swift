/// What a page was made from, in three parts, so that a build can tell which changed and why.
public struct PageInputs: Sendable, Hashable {
    /// The settings it depends on: the site's, its listing's or collection's, and the menu.
    public var settings: Int64
    /// Its template with every partial and layout it uses.
    public var template: Int64
    /// Its rows (ids and versions), its place among the pages, and what else of the data it shows.
    public var data: Int64
    /// What of that data it shows, when that is narrower (a detail page shows its neighbours' titles and
    /// links, not their other fields): computed only when `data` changed, to tell whether the page did.
    public var content: Int64

    /// Makes a page's inputs; `content` defaults to `data`.
    public init(settings: Int64, template: Int64, data: Int64, content: Int64? = nil) {
        self.settings = settings
        self.template = template
        self.data = data
        self.content = content ?? data
    }
}

/// One output file as the last build left it: what it was made from, its bytes' hash, and where it belongs.
public struct PageRecord: Sendable, Hashable {
    /// What it was made from; `nil` for files rebuilt every time (sitemap, robots.txt) and after an upgrade.
    public var inputs: PageInputs?
    /// The hash of the bytes written.
    public var hash: Int64
    /// The listing, or for a detail page the collection, that it belongs to; empty for site files.
    public var owner: String
    /// The section of a sectioned listing's page.
    public var section: String
    /// The page number of a listing page; 0 for other files.
    public var page: Int
    /// The row id of a detail page's record; 0 for other files.
    public var record: Int64
    /// The key of a detail page's record.
    public var key: String

    /// Describes an output file.
    public init(inputs: PageInputs?, hash: Int64, owner: String = "", section: String = "", page: Int = 0, record: Int64 = 0,
                key: String = "")
    {
        self.inputs = inputs
        self.hash = hash
        self.owner = owner
        self.section = section
        self.page = page
        self.record = record
        self.key = key
    }
}

extension SiteStore {
    /// Every output file the last complete build left: paths relative to the output folder, and their
    /// entries in the same order (arrays: the planner indexes them once, by path and by record).
    public func pageManifest() throws -> (paths: [String], records: [PageRecord]) {
        try Self.pageManifest(in: database)
    }

    /// The manifest as `pageManifest()` reads it, on any connection to the store (a reader beside the
    /// connection that loads the sources, which never changes the manifest).
    public static func pageManifest(in database: Database) throws -> (paths: [String], records: [PageRecord]) {
        var paths: [String] = [], records: [PageRecord] = []
        let count = Int(try database.fetchValue("SELECT count(*) FROM sitegen_pages")?.int64Value ?? 0)
        paths.reserveCapacity(count)
        records.reserveCapacity(count)
        try database.cachedStatement(
            "SELECT path, settings, template, data, hash, owner, section, page, record, key, content FROM sitegen_pages"
        ).forEachRow { row in
            let inputs = row.isNull(at: 1) ? nil
                : PageInputs(settings: row.int64(at: 1), template: row.int64(at: 2), data: row.int64(at: 3), content: row.int64(at: 10))
            paths.append(row.string(at: 0) ?? "")
            records.append(PageRecord(
                inputs: inputs, hash: row.int64(at: 4), owner: row.string(at: 5) ?? "", section: row.string(at: 6) ?? "",
                page: Int(row.int64(at: 7)), record: row.int64(at: 8), key: row.string(at: 9) ?? ""))
        }
        return (paths, records)
    }

    /// The stamp the manifest was last stored with (`updatePageManifest`), read on any connection to the store.
    public static func manifestStamp(in database: Database) throws -> String? {
        guard try database.tableExists("sitegen_state") else { return nil }
        return try database.fetchValue("SELECT value FROM sitegen_state WHERE name = 'manifest-stamp'")?.stringValue
    }

    /// Stores the manifest of a complete build as changes to the last one (`changed` entries written,
    /// `removed` paths dropped: O(pages that changed), not O(site)), and notes that the output folder is complete.
    /// `stamp` marks this state of the manifest (a watch that kept its index of the manifest trusts it while
    /// the stamp is its own), and `planInputs` the settings and templates its pages were made with.
    /// `counts` are the manifest's after the change, kept so that the next build can read it in part.
    public func updatePageManifest(changed: PageEntries, removed: [String], stamp: String? = nil, planInputs: String? = nil,
                                   counts: ManifestCounts? = nil) throws {
        try transaction {
            try database.execute("""
                DELETE FROM sitegen_state WHERE name IN ('writing-output', 'pending-changes', 'manifest-stamp', 'plan-inputs', 'manifest-counts')
                """)
            let state = try database.cachedStatement("INSERT INTO sitegen_state (name, value) VALUES (?, ?)")
            if let stamp { try state.execute([.text("manifest-stamp"), .text(stamp)]) }
            if let planInputs { try state.execute([.text("plan-inputs"), .text(planInputs)]) }
            if let counts { try state.execute([.text("manifest-counts"), .text("\(counts.files) \(counts.pageFiles) \(counts.pages)")]) }
            let delete = try database.cachedStatement("DELETE FROM sitegen_pages WHERE path = ?")
            for path in removed.sorted() { try delete.execute([.text(path)]) }
            let upsert = try database.cachedStatement(
                "INSERT OR REPLACE INTO sitegen_pages (path, settings, template, data, hash, owner, section, page, record, key, content) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            try changed.forEachInPathOrder { path, entry in
                try upsert.execute([
                    .text(path), entry.inputs.map { .integer($0.settings) } ?? .null, entry.inputs.map { .integer($0.template) } ?? .null,
                    entry.inputs.map { .integer($0.data) } ?? .null, .integer(entry.hash), .text(entry.owner), .text(entry.section),
                    .integer(Int64(entry.page)), .integer(entry.record), .text(entry.key),
                    entry.inputs.map { .integer($0.content) } ?? .null,
                ])
            }
        }
    }
}

extension SiteStore {
    /// How many files a manifest lists, how many of them are pages (`…/index.html`), and how many pages they
    /// make (a listing page with its feeds and Markdown twin is one).
    public struct ManifestCounts: Sendable, Equatable {
        public var files = 0
        public var pageFiles = 0
        public var pages = 0

        /// Counts of an empty manifest.
        public init() {}
    }

    /// Reads the page manifest a row at a time, by path or by record, on a connection of its own: a build
    /// that looks at a few pages reads their rows, not the manifest whole. Used from one thread at a time.
    public final class ManifestReader: @unchecked Sendable {
        private let database: Database
        /// Where the store is: `pagePaths` reads on a connection of its own.
        private let storePath: String
        private static let columns = "path, settings, template, data, hash, owner, section, page, record, key, content"

        /// Reads the manifest of the store at `storePath`, which `database` is open on.
        public init(database: Database, storePath: String) {
            self.database = database
            self.storePath = storePath
        }

        /// Starts the read the lookups share until `endRead`, unless one is open: a read of its own for each
        /// of a build's thousands of lookups took the store's locks each time.
        private func beginRead() throws {
            if !database.isInsideTransaction { try database.execute("BEGIN") }
        }

        /// Ends the lookups' read: the next lookup sees the store as it is then (a watch's next build).
        public func endRead() {
            database.endReads()
            if database.isInsideTransaction { try? database.execute("COMMIT") }
        }

        /// The counts kept with the manifest; nil when the store keeps none (written before they were).
        public func counts() throws -> ManifestCounts? {
            try beginRead()
            guard let text = try database.fetchValue("SELECT value FROM sitegen_state WHERE name = 'manifest-counts'")?.stringValue
            else { return nil }
            let numbers = text.split(separator: " ").compactMap { Int($0) }
            guard numbers.count == 3 else { return nil }
            var counts = ManifestCounts()
            (counts.files, counts.pageFiles, counts.pages) = (numbers[0], numbers[1], numbers[2])
            return counts
        }

        /// The entry of the file at `path`; nil when the manifest has none.
        public func file(at path: String) throws -> (String, PageRecord)? {
            try beginRead()
            var found: (String, PageRecord)?
            try database.cachedStatement("SELECT \(Self.columns) FROM sitegen_pages WHERE path = ?").forEachRow([.text(path)]) { found = Self.file($0) }
            return found
        }

        /// The file of record `id`'s page among `owner`'s; nil when the manifest has none.
        public func page(of owner: String, record id: Int64) throws -> (String, PageRecord)? {
            try beginRead()
            var found: (String, PageRecord)?
            try database.cachedStatement("SELECT \(Self.columns) FROM sitegen_pages WHERE record = ? AND page = 0 AND owner = ?")
                .forEachRow([.integer(id), .text(owner)]) { found = Self.file($0) }
            return found
        }

        /// Every file whose path starts with `folder` + "/", in path order: one range of the table.
        public func files(under folder: String, _ body: (String, PageRecord) -> Void) throws {
            try beginRead()
            // Every path that starts with "folder/" sorts between it and "folder0".
            try database.cachedStatement("SELECT \(Self.columns) FROM sitegen_pages WHERE path > ? AND path < ?")
                .forEachRow([.text(folder + "/"), .text(folder + "0")]) {
                    let (path, entry) = Self.file($0)
                    body(path, entry)
                }
        }

        /// Every file of `owner`.
        public func files(ownedBy owner: String, _ body: (String, PageRecord) -> Void) throws {
            try beginRead()
            try database.cachedStatement("SELECT \(Self.columns) FROM sitegen_pages WHERE owner = ?").forEachRow([.text(owner)]) {
                let (path, entry) = Self.file($0)
                body(path, entry)
            }
        }

        /// The files every build visits: neither listing pages nor detail pages (site files, static files,
        /// aliases, section indexes).
        public func visitedEveryBuild(_ body: (String, PageRecord) -> Void) throws {
            try beginRead()
            try database.cachedStatement("SELECT \(Self.columns) FROM sitegen_pages WHERE record = 0 AND page = 0").forEachRow {
                let (path, entry) = Self.file($0)
                body(path, entry)
            }
        }

        /// The paths of the manifest's pages (`…/index.html`) in the order of their bytes, the table's own,
        /// each as its UTF-8 bytes: the sitemap's, read without decoding the rest of each row or making strings.
        /// Read on a connection of its own, so that `body` may look files up meanwhile (on other threads too).
        public func pagePaths(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
            let database = try Database(path: storePath, readOnly: true)
            // Told apart here, not by `GLOB '*index.html'`: SQLite's matching of the pattern was half of this read.
            try database.makeStatement("SELECT path FROM sitegen_pages ORDER BY path").forEachRow { row in
                try row.withText(at: 0) { path in
                    if Self.isPagePath(path) { try body(path) }
                }
            }
        }

        /// Whether the UTF-8 bytes `path` are a page's path, `…/index.html`: a sitemap's entry.
        public static func isPagePath(_ path: UnsafeRawBufferPointer) -> Bool {
            path.count >= pageFileName.count && path.suffix(pageFileName.count).elementsEqual(pageFileName)
        }
        private static let pageFileName = Array("index.html".utf8)

        /// Every file of the manifest.
        public func allFiles(_ body: (String, PageRecord) -> Void) throws {
            try beginRead()
            try database.cachedStatement("SELECT \(Self.columns) FROM sitegen_pages").forEachRow {
                let (path, entry) = Self.file($0)
                body(path, entry)
            }
        }

        private static func file(_ row: Statement) -> (String, PageRecord) {
            let inputs = row.isNull(at: 1) ? nil
                : PageInputs(settings: row.int64(at: 1), template: row.int64(at: 2), data: row.int64(at: 3), content: row.int64(at: 10))
            return (row.string(at: 0) ?? "", PageRecord(
                inputs: inputs, hash: row.int64(at: 4), owner: row.string(at: 5) ?? "", section: row.string(at: 6) ?? "",
                page: Int(row.int64(at: 7)), record: row.int64(at: 8), key: row.string(at: 9) ?? ""))
        }
    }
}
