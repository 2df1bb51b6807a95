import Foundation
import ResultsController
import SiteRender
import SiteSources
import SiteStore

/// The load stage: reads every collection's sources and makes the store match them, in one transaction.
///
/// A source that fails keeps its previous rows; its problem is reported and the others still load.
struct CollectionLoader {
    let root: URL
    let config: SiteConfig
    let store: SiteStore
    /// Told how the load of each large (streamed) source is going.
    var progress: ((LoadProgress) -> Void)?
    /// Seconds between reports of a collection's files (`SiteBuilder.progressInterval`).
    var progressInterval = 0.5
    /// The files and folders (relative to the site, or absolute) changed since the last load, when the
    /// caller knows them (a watch, from inotify): only sources there, and those that failed, are looked at.
    /// nil: the status of every source is read.
    var changedPaths: Set<String>?
    /// Reads every source, whatever its status says (`--full`): a file whose bytes changed under a status
    /// restored by hand is read too. Bytes that are the last load's are still not parsed.
    var readsEverySource = false
    /// The output folder's absolute path, which no pattern's walk enters.
    var outputFolder: String?
    /// The kept bodies of the URL sources (`RemoteRefresh`), read in place of files; a URL without one
    /// (never fetched) is no source of this load.
    var remote: [String: RemoteBody] = [:]
    /// Whether Markdown drafts are records (`--drafts`). Part of a Markdown table's schema, so that a build
    /// whose flag differs from the last one's reads every Markdown file again (decisions.md 41b).
    var includesDrafts = false

    struct Outcome {
        var changeset = Changeset()
        var problems: [SourceError] = []
        var warnings: [SourceError] = []
        var sourcesRead = 0
        /// Sources skipped because their size and change time (or bytes) were unchanged.
        var sourcesUnchanged = 0
        /// Sources read whose bytes were those of their last load.
        var sourcesSameBytes = 0
    }

    /// Files up to this size are read whole, once, to hash and parse; larger ones are streamed.
    static let wholeFileLimit: Int64 = 8 << 20
    /// A load that reads more than this many bytes writes with a rollback journal (`SiteStore.bulkWriting`).
    static let bulkLoadBytes: Int64 = 64 << 20

    func load() throws -> Outcome {
        // Before the first file's status is read: a file changed after this, in the same tick of the file
        // system's clock, is not vouched for by this load.
        store.sourcesLookedAt = Date().timeIntervalSince1970
        let plans = try config.collections.map { collection in try plan(of: collection, changedOnly: changedPaths != nil) }
        var bytesToRead: Int64 = 0
        for plan in plans {
            for file in plan.files { bytesToRead += file.stat.size }
        }
        func loadAll() throws -> Outcome {
            try store.transaction {
                var outcome = Outcome()
                for plan in plans { try load(plan: plan, into: &outcome) }
                try store.database.advanceGeneration(for: &outcome.changeset)
                return outcome
            }
        }
        return bytesToRead > Self.bulkLoadBytes ? try store.bulkWriting(loadAll) : try loadAll()
    }

    /// A collection's table and files, as found before the load's transaction.
    private struct CollectionPlan {
        let collection: CollectionConfig
        let schema: CollectionSchema
        /// The files whose size or change time changed since their last good load (or that are new),
        /// in the loading order.
        let files: [FilePlan]
        /// The others: read only into a rebuilt table, or when a feed of the collection changed. Empty
        /// when only the changed files were looked at (`complete` is false).
        let unchangedFiles: UnchangedFiles
        /// How many sources are unchanged, whether listed in `unchangedFiles` or not.
        let unchangedCount: Int
        /// Whether every source was looked at, rather than only those the caller said changed.
        let complete: Bool
        /// Sources of the last load whose files are gone: their rows go.
        let removed: [String]
        /// Folders of its patterns that are missing, each an error: their files' rows stay.
        let missing: [SourceError]
        /// Sources out of sight (in a folder that cannot be listed, or links to nothing), with why: their
        /// rows stay, and they are marked failed, so that every build looks at them again until they load.
        var hidden: [(path: String, reason: String)] = []
        /// Links to nothing that no record came from: said, but no error.
        var warnings: [SourceError] = []
    }

    private struct FilePlan {
        let path: String
        let stat: SiteStore.SourceFingerprint
        /// What the store recorded of it at its last load, if anything.
        let previous: SiteStore.SourceFingerprint?
        /// Which of the collection's source patterns found it first.
        let pattern: Int

        /// The order files are read and stored in: pattern by pattern, each pattern's files by path. New
        /// rows take ids in this order, so it never depends on the order in which the file system lists a
        /// folder (and rows of one line of one file, which tie on every sort field, fall to their ids).
        static func loadingOrder(_ a: FilePlan, _ b: FilePlan) -> Bool {
            a.pattern != b.pattern ? a.pattern < b.pattern : a.path < b.path
        }
    }

    /// The collection's files and sources to load, from every source's status or, when `changedOnly` and
    /// they suffice, from the changed paths alone.
    private func plan(of collection: CollectionConfig, changedOnly: Bool) throws -> CollectionPlan {
        let schema = Self.schema(for: collection, listings: config.listings, timeZone: config.timeZone, includesDrafts: includesDrafts)
        // Feeds are read all together when one changed, and are few: they are always looked at whole.
        if changedOnly, collection.kind != .feed, let changed = try changedFiles(of: collection) {
            return CollectionPlan(collection: collection, schema: schema, files: changed.files, unchangedFiles: UnchangedFiles(),
                                  unchangedCount: changed.unchanged, complete: false, removed: changed.removed, missing: [])
        }
        let found = try files(of: collection)
        var plan = CollectionPlan(collection: collection, schema: schema, files: found.toRead, unchangedFiles: found.unchanged,
                                  unchangedCount: found.unchanged.count, complete: true, removed: found.removed, missing: found.missing)
        plan.hidden = found.hidden
        plan.warnings = found.warnings
        return plan
    }

    /// The collection's files to read and sources gone, found from `changedPaths` and the sources whose last
    /// load failed, without the status of the others: with a hundred thousand sources, reading every one's
    /// status and fingerprint was most of a watch's rebuild before its first page. nil when a change holds
    /// a folder a pattern starts in, such a folder is missing, or a pattern reads outside the site: then
    /// only a walk of them all will do.
    private func changedFiles(of collection: CollectionConfig) throws -> (files: [FilePlan], unchanged: Int, removed: [String])? {
        // URL sources have no file whose change a watch sees: their collections are looked at whole.
        guard let changedPaths, missingFolders(of: collection).isEmpty, !collection.sources.contains(where: RemoteSource.isURL) else { return nil }
        let rootPath = root.standardizedFileURL.path
        func location(_ path: String) -> String {
            URL(fileURLWithPath: SourceGlob.location(of: path, under: rootPath)).standardizedFileURL.path
        }
        // Folders outside the site are watched less surely (one made, or swapped for another, after the
        // watch began is not seen whole): their collections are looked at whole.
        guard collection.sources.allSatisfy({ location($0).hasPrefix(rootPath + "/") }) else { return nil }
        // A source that failed may load now though its file did not change (the key it repeated is gone);
        // a file a pattern names outright is looked at every time (a watch ignores hidden names, and a
        // pattern may name `.special.csv`).
        let named = collection.sources.filter { pattern in !pattern.contains(where: { "*?[".contains($0) }) }
        let locations = Set(changedPaths.map(location) + (try store.failedSourcePaths(ofCollection: collection.name)).map(location)
                            + named.map(location)).sorted()
        var found: [String: (entry: SourceGlob.Entry, pattern: Int)] = [:], places: Set<String> = []
        for (number, pattern) in collection.sources.enumerated() {
            let glob = SourceGlob(pattern: pattern)
            for location in locations {
                guard let change = glob.entries(at: location, under: root) else { return nil }
                // The first pattern that finds a file is its pattern, as in a walk of them all.
                for entry in change.found where found[entry.path] == nil { found[entry.path] = (entry, number) }
                places.formUnion(change.paths)
            }
        }
        // The sources the store knows there: at a changed path, or under it when it is (or was) a folder.
        var candidates = places.union(found.keys)
        for place in places { candidates.formUnion(try store.sourcePaths(ofCollection: collection.name, under: place)) }
        let known = try store.fingerprints(ofCollection: collection.name, paths: candidates)
        var toRead: [FilePlan] = [], unchanged = 0
        for (path, (entry, pattern)) in found {
            let stat = SiteStore.SourceFingerprint(size: entry.size, modified: entry.modified, hash: 0, succeeded: true)
            if !readsEverySource && Self.isUnchanged(stat, since: known[path]) {
                unchanged += 1
            } else {
                toRead.append(FilePlan(path: path, stat: stat, previous: known[path], pattern: pattern))
            }
        }
        toRead.sort(by: FilePlan.loadingOrder)
        let removed = known.keys.filter { found[$0] == nil }.sorted()
        // The sources not looked at are as they were: unchanged.
        unchanged += try store.sourceCount(ofCollection: collection.name) - known.count
        return (toRead, unchanged, removed)
    }

    /// The collection's files as found now (those to read, in the loading order, and the others), the
    /// sources of its last load that are gone, and the errors of its patterns' folders that are missing.
    private func files(of collection: CollectionConfig) throws
        -> (toRead: [FilePlan], unchanged: UnchangedFiles, removed: [String], missing: [SourceError], hidden: [(path: String, reason: String)],
            warnings: [SourceError])
    {
        // The folders are walked while this thread reads what the store knows of the files: at 100,000
        // records each took a third of an incremental build's load.
        let root = root, outputFolder = outputFolder, remote = remote
        let walk = BackgroundWork { () -> ([SourceScan], [SourceGlob.Unreadable]) in
            // Only two patterns can name one file twice; one pattern's files are distinct already.
            var present: Set<String>? = collection.sources.count > 1 ? [] : nil
            var scans: [SourceScan] = [], unreadable: [SourceGlob.Unreadable] = []
            for pattern in collection.sources {
                if RemoteSource.isURL(pattern) {
                    scans.append(Self.scan(ofURL: pattern, body: remote[pattern]))
                    continue
                }
                var glob = SourceGlob(pattern: pattern)
                glob.skipping = outputFolder
                var scan = glob.scan(under: root, unreadable: &unreadable)
                if present != nil {
                    let scanned = scan
                    scan.filter { present!.insert(scanned.path(of: $0)).inserted }
                }
                scans.append(scan)
            }
            return (scans, unreadable)
        }
        let known = try store.fingerprints(ofCollection: collection.name)
        let (scans, unreadable) = try walk.value()
        // Each file is compared with its fingerprint as the walk left it: only the files to read get a path
        // and a plan (decisions.md 39b).
        var toRead: [FilePlan] = [], unchanged = UnchangedFiles(known: known), knownFound = 0
        for (pattern, scan) in scans.enumerated() {
            var same: [UInt32] = []
            // A URL's kept body has an exact hash: no clock to distrust, so a 304 is unchanged by it.
            let body = remote[collection.sources[pattern]]
            for (index, file) in scan.files.enumerated() {
                let stat = SiteStore.SourceFingerprint(size: file.size, modified: file.modified, hash: body?.hash ?? 0, succeeded: true)
                let previous = known[file.key]
                if previous != nil { knownFound += 1 }
                // Estimated before the transaction: a schema change makes every file need reading.
                if !readsEverySource && (body == nil ? Self.isUnchanged(stat, since: previous) : Self.hasSameBody(stat, since: previous)) {
                    same.append(UInt32(index))
                } else {
                    toRead.append(FilePlan(path: scan.path(of: file), stat: stat, previous: previous, pattern: pattern))
                }
            }
            unchanged.add(same, of: scan, pattern: pattern)
        }
        // Only the files to read need an order (a rebuilt table puts all of them in it, `load(plan:)`):
        // sorting a folder of 100,000 records by name was 68 ms of the load of an incremental build that
        // reads a few of them (decisions.md 21).
        toRead.sort(by: FilePlan.loadingOrder)
        // The sources the store knows that are gone, by their rows; their paths are read only when there are some.
        // Found files are distinct, so as many as the store knows means none is gone (unless two paths share
        // a 64-bit key, which the lookup by key already takes to be impossible).
        let gone: [Int64]
        if knownFound == known.count {
            gone = []
        } else {
            let foundRows = Set(scans.flatMap { scan in scan.files.compactMap { known[$0.key]?.row } })
            gone = known.values.map(\.row).filter { !foundRows.contains($0) }
        }
        var removed = gone.isEmpty ? [] : try store.sourcePaths(atRows: gone), missing: [SourceError] = []
        // A pattern's folder that is not there is a checkout or a mount missing, not a collection emptied
        // on purpose (that leaves the folder): its files' rows are kept, and the build fails, a first
        // build too (a clean checkout in CI that lacks its data must not publish an empty site).
        // A folder that cannot be listed, or a file behind a link to nothing, is out of sight, not deleted:
        // its sources keep their rows, and the build fails until it can be read or is removed.
        var seen = Set<String>(), hidden: [(path: String, reason: String)] = [], warnings: [SourceError] = []
        for place in unreadable where seen.insert(place.path).inserted {
            let kept = removed.filter { place.isFolder ? $0.hasPrefix(place.path + "/") : $0 == place.path }
            removed.removeAll { place.isFolder ? $0.hasPrefix(place.path + "/") : $0 == place.path }
            let reason = (place.isFolder ? "folder " : "") + place.reason
            hidden += kept.map { ($0, place.isFolder ? "in \(place.path): \(reason)" : reason) }
            // A new link to nothing loses nothing; a folder out of sight may hold anything, a first build's too.
            if kept.isEmpty && !place.isFolder && !place.isMisnamed {
                warnings.append(SourceError(file: place.path, reason: reason + "; left out"))
                continue
            }
            let outcome = kept.isEmpty ? "" : place.isFolder
                ? "; the records of its \(kept.count) file\(kept.count == 1 ? "" : "s") from the last build are kept"
                : "; its records from the last build are kept"
            missing.append(SourceError(file: place.path, reason: reason + outcome))
        }
        for folder in missingFolders(of: collection) {
            let kept = removed.filter { $0.hasPrefix(folder + "/") }
            removed.removeAll { $0.hasPrefix(folder + "/") }
            let outcome = kept.isEmpty ? "to build the collection empty, make the folder"
                : "the records of its \(kept.count) file\(kept.count == 1 ? "" : "s") from the last build are kept "
                    + "(to empty the collection, keep the folder and remove its files)"
            missing.append(SourceError(file: config.file, line: collection.sourcesMark?.line, column: collection.sourcesMark?.column,
                reason: "collection '\(collection.name)': the folder '\(folder)' is missing; " + outcome))
        }
        return (toRead, unchanged, removed, missing, hidden, warnings)
    }

    /// A URL source as a walk finds a file: its path is the URL, its size and change time its kept body's.
    /// Without a kept body (never fetched) it is not found, and none of its rows can be there.
    private static func scan(ofURL url: String, body: RemoteBody?) -> SourceScan {
        var scan = SourceScan()
        let folder = scan.addFolder(prefix: "")
        guard let body else { return scan }
        var name = url
        name.withUTF8 { scan.add(name: UnsafeRawBufferPointer($0), folder: folder, size: Int64(body.data.count), modified: body.changedAt) }
        return scan
    }

    /// Whether `file` is read whole, once (small files, and URL sources, whose bodies are in memory).
    private func readsWhole(_ file: FilePlan) -> Bool {
        file.stat.size <= Self.wholeFileLimit || remote[file.path] != nil
    }

    /// The folders the collection's patterns look in (the part before the first wildcard, or a file's
    /// folder) that are not folders on the disk; the site's own folder is always there.
    private func missingFolders(of collection: CollectionConfig) -> [String] {
        collection.sources.compactMap { pattern in
            guard !RemoteSource.isURL(pattern) else { return nil }
            let folder = SourceGlob(pattern: pattern).folder
            guard !folder.isEmpty, folder != "/" else { return nil }
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: SourceGlob.location(of: folder, under: root.path), isDirectory: &isFolder)
            return exists && isFolder.boolValue ? nil : folder
        }
    }

    /// Where file `path` (relative to the site, or absolute) is. Said to be a file: else the URL asks the
    /// file system whether the path is a folder.
    private func url(of path: String) -> URL {
        if RemoteSource.isURL(path), let url = URL(string: path) { return url }
        return path.hasPrefix("/") ? URL(fileURLWithPath: path, isDirectory: false) : root.appendingPathComponent(path, isDirectory: false)
    }

    /// Same size and change time (ctime) as a good load: not even read.
    private static func isUnchanged(_ stat: SiteStore.SourceFingerprint, since previous: SiteStore.SourceFingerprint?) -> Bool {
        guard let previous, previous.succeeded else { return false }
        return previous.size == stat.size && previous.modified == stat.modified
    }

    /// A URL source's kept body is the one of its last good load: same size and hash.
    private static func hasSameBody(_ stat: SiteStore.SourceFingerprint, since previous: SiteStore.SourceFingerprint?) -> Bool {
        guard let previous, previous.succeeded else { return false }
        return previous.size == stat.size && previous.hash == stat.hash
    }

    /// The files a status pass found unchanged, as the walk left them: listed (`plans`) only when a rebuilt
    /// table, or a feed that changed, reads them all.
    private struct UnchangedFiles {
        private var parts: [(scan: SourceScan, pattern: Int, indexes: [UInt32])] = []
        private var known: [Int64: SiteStore.SourceFingerprint] = [:]
        private(set) var count = 0

        /// No files.
        init() {}

        /// Files whose fingerprints are in `known`.
        init(known: [Int64: SiteStore.SourceFingerprint]) { self.known = known }

        /// Adds the files at `indexes` of `scan`, found by the pattern numbered `pattern`.
        mutating func add(_ indexes: [UInt32], of scan: SourceScan, pattern: Int) {
            parts.append((scan, pattern, indexes))
            count += indexes.count
        }

        /// Each file's plan.
        var plans: [FilePlan] {
            parts.flatMap { part in
                part.indexes.map { index in
                    let file = part.scan.files[Int(index)]
                    return FilePlan(path: part.scan.path(of: file),
                                    stat: SiteStore.SourceFingerprint(size: file.size, modified: file.modified, hash: 0, succeeded: true),
                                    previous: known[file.key], pattern: part.pattern)
                }
            }
        }
    }

    /// A small source file as the read-ahead thread leaves it: read, hashed and parsed into rows.
    private enum PreparedFile {
        /// Its bytes are the ones of its last good load (only touched).
        case unchanged(hash: Int64)
        /// Its rows, up to `failure` if parsing stopped at one, with its warnings.
        case parsed(rows: [StoredRow], warnings: [SourceError], failure: SourceError?, hash: Int64)
        /// It could not be read.
        case unreadable(SourceError)
    }

    /// Reads (from `path`, the root's path joined with the file's, made once per collection), hashes and
    /// parses one small file, off the caller's thread (nothing here touches the store).
    private func prepare(_ file: FilePlan, at path: String, previous: SiteStore.SourceFingerprint?, collection: CollectionConfig,
                         schema: CollectionSchema) -> PreparedFile
    {
        let data: Data
        if let body = remote[file.path] {
            data = body.data
        } else {
            do {
                data = try readWhole(file, at: path)
            } catch {
                return .unreadable(error)
            }
        }
        var hash = ContentHash()
        hash.combine(bytes: data)
        if let previous, previous.succeeded, previous.hash == hash.signed { return .unchanged(hash: previous.hash) }
        var input = SourceInput(data: data, displayName: file.path)
        var rows: [StoredRow] = []
        do {
            let warnings = try source(for: collection, file: file.path, at: path).read(&input) { (record: Record) throws(SourceError) in
                rows.append(Self.storedRow(record, schema: schema))
            }
            return .parsed(rows: rows, warnings: warnings, failure: nil, hash: hash.signed)
        } catch {
            return .parsed(rows: rows, warnings: [], failure: error, hash: hash.signed)
        }
    }

    /// Whether `file`, looked at because its status changed, still holds the bytes of its last good load (a
    /// checkout or a cache restore gives every file a new status): a feed collection with nothing else
    /// changed is then not read again whole.
    private func hasItsLastBytes(_ file: FilePlan) -> Bool {
        guard let previous = file.previous, previous.succeeded, previous.size == file.stat.size else { return false }
        return (try? hash(of: file)) == previous.hash
    }

    /// A collection whose table was made again for new fields, and whose sources did not all load into it:
    /// keeping the new table would lose the failing files' rows, which the old one still has.
    struct RebuildFailed: Error {
        let collection: String
        let problems: [SourceError]
    }

    private func load(plan: CollectionPlan, into outcome: inout Outcome) throws {
        var plan = plan
        let collection = plan.collection, schema = plan.schema
        // The files that have rows now, which a table made again would lose if they failed.
        let holding = try store.hasTable(schema) ? [] : Set(try store.database.fetchAll(
            "SELECT path FROM sitegen_sources WHERE collection = ? AND rows > 0", [.text(collection.name)]).compactMap { $0["path"]?.stringValue })
        // A rebuilt table (the fields changed) forgets its sources: every file is read again.
        let rebuilt = try store.prepareTable(schema)
        // A rebuilt table reads every file, so every file must be found.
        if rebuilt && !plan.complete { plan = try self.plan(of: collection, changedOnly: false) }
        let problemsBefore = outcome.problems.count
        outcome.problems += plan.missing
        outcome.warnings += plan.warnings
        for (path, reason) in plan.hidden {
            try store.recordSourceStatus(path, collection: collection.name, failure: reason)
        }
        try loadFiles(plan: plan, rebuilt: rebuilt, into: &outcome)
        // The load's transaction is then rolled back whole, the old table and its rows with it, and the build
        // stops before any page is rendered.
        let failed = outcome.problems[problemsBefore...]
        // (A missing folder loses rows only when the collection had some: a first build goes on.)
        if rebuilt, !plan.missing.isEmpty && !holding.isEmpty || failed.contains(where: { holding.contains($0.file) }) {
            throw RebuildFailed(collection: collection.name, problems: Array(failed))
        }
    }

    private func loadFiles(plan: CollectionPlan, rebuilt: Bool, into outcome: inout Outcome) throws {
        let collection = plan.collection, schema = plan.schema
        // Its rows are stored again with new ids: no cached results of a listing may outlive the old ones.
        if rebuilt { try ResultsController.deleteAllCaches(in: store.database) }
        let statements = try store.rowStatements(for: schema)
        var changes = Changeset()
        // Feeds carry each other's items: an item two files have is the first file's, and the other skips
        // it. Which file is first for an item can change with any file (the first drops it, a file before it
        // gains it), so when any feed of the collection changed, all of them are read again, in the order a
        // clean build reads them. Feed files are few; records, kept in files by the thousand, fail instead.
        statements.keepsFirstOfSharedKeys = collection.kind == .feed
        // An archive's items stay when they leave their feed (`keep: all`), flagged in `leftFeed`.
        if collection.mayKeepItems { statements.keepsRowsLeftOut = { collection.retention(ofSource: $0) == .all } }
        let readsAll = rebuilt || (collection.kind == .feed && (!plan.removed.isEmpty || plan.files.contains { !hasItsLastBytes($0) }))
        // Every file is read into a rebuilt table, in the loading order.
        let files = readsAll ? (plan.files + plan.unchangedFiles.plans).sorted(by: FilePlan.loadingOrder) : plan.files
        if !readsAll { outcome.sourcesUnchanged += plan.unchangedCount }
        // Small files are read and parsed on another thread, ahead of the rows being stored here.
        let small = files.filter(readsWhole)
        let rootPath = root.path
        let readAhead = ReadAhead(count: small.count) { [self] index in
            // Files not in the page cache (a first build after a reboot, or after other work filled the
            // cache) are asked for a window ahead, so the disk reads them while earlier ones are parsed
            // instead of one at a time: a sixth of a 100,000-file load's reads waited for the disk.
            for ahead in (index == 0 ? 1 : Self.hintDistance)...Self.hintDistance where index + ahead < small.count {
                Self.announce(SourceGlob.location(of: small[index + ahead].path, under: rootPath))
            }
            return prepare(small[index], at: SourceGlob.location(of: small[index].path, under: rootPath), previous: readsAll ? nil : small[index].previous,
                           collection: collection, schema: schema)
        }
        defer { readAhead.cancel() }
        let order = LoadOrder(files: files, removed: plan.removed, patterns: collection.sources)
        let target = Target(collection: collection, schema: schema, statements: statements, readsAll: readsAll, order: order)
        statements.releasesKey = { owner, file in order.releases(owner, to: file) }
        var batch = Batch()
        // A failure that ends the load leaves no savepoint open behind it.
        defer { if batch.isOpen { try? store.endSavepoint(keeping: false) } }
        let meter = FilesProgress(collection: collection.name, total: files.count, report: progress, interval: progressInterval)
        for (index, file) in files.enumerated() {
            outcome.sourcesRead += 1
            let prepared = readsWhole(file) ? readAhead.next()! : nil
            if case .parsed(let rows, _, _, _)? = prepared { meter.advance(to: index + 1, adding: rows.count) } else { meter.advance(to: index + 1, adding: 0) }
            switch prepared {
            case .unchanged?, .parsed(_, _, nil, _)?:
                if !batch.isOpen {
                    try store.beginSavepoint()
                    batch.isOpen = true
                }
                batch.files.append((file, prepared!))
                batch.bytes += file.stat.size
                do {
                    try store(file, prepared: prepared, alone: false, in: target, into: &batch.outcome, changes: &batch.changes)
                } catch {
                    // Undone, with the files before it in the batch; stored again a file at a time. When even
                    // the undoing fails (a full disk), the transaction is lost: the first error says why.
                    let files = batch.files
                    batch = Batch()
                    do { try store.endSavepoint(keeping: false) } catch _ { throw error }
                    for (file, prepared) in files {
                        try storeAlone(file, prepared: prepared, in: target, into: &outcome, changes: &changes)
                    }
                    continue
                }
                if batch.files.count == Self.batchSize || batch.bytes >= Self.batchBytes {
                    try keep(&batch, into: &outcome, changes: &changes)
                }
            case .unreadable?, .parsed?, nil:
                // Large, or failing whatever is stored: in a savepoint of its own, after the files before it.
                try keep(&batch, into: &outcome, changes: &changes)
                try storeAlone(file, prepared: prepared, in: target, into: &outcome, changes: &changes)
            }
        }
        try keep(&batch, into: &outcome, changes: &changes)
        meter.finish()
        // A source that gave its key up to a file before it is read again, whatever its bytes: it now fails
        // on that key as in a clean build, and keeps its other rows as any failing source does.
        for owner in order.rereads {
            let stat: SiteStore.SourceFingerprint
            if let body = remote[owner] {
                stat = body.fingerprint
            } else {
                guard let entry = SourceGlob.entry(at: owner, under: rootPath) else { continue }
                stat = SiteStore.SourceFingerprint(size: entry.size, modified: entry.modified, hash: 0, succeeded: true)
            }
            let pattern = collection.sources.firstIndex { SourceGlob(pattern: $0).matches(owner) } ?? 0
            let file = FilePlan(path: owner, stat: stat, previous: nil, pattern: pattern)
            let prepared = readsWhole(file)
                ? prepare(file, at: SourceGlob.location(of: owner, under: rootPath), previous: nil, collection: collection, schema: schema) : nil
            try storeAlone(file, prepared: prepared, in: target, into: &outcome, changes: &changes)
        }
        if plan.files.isEmpty && plan.unchangedCount == 0 && plan.missing.isEmpty {
            outcome.warnings.append(SourceError(file: config.file, line: collection.sourcesMark?.line, column: collection.sourcesMark?.column,
                reason: "collection '\(collection.name)': no file matches \(collection.sources.joined(separator: ", "))"))
        }
        changes.merge(try store.deleteRows(ofSources: plan.removed, in: schema))
        try statements.saveIDs()
        outcome.changeset.merge(changes)
    }

    /// Where a load stores one collection's files.
    private struct Target {
        let collection: CollectionConfig
        let schema: CollectionSchema
        let statements: RowStatements
        /// Whether every file is parsed, changed or not (the table was made again, or a feed changed).
        let readsAll: Bool
        /// Who gives keys up to whom in this load.
        let order: LoadOrder
    }

    /// Which source gives up a key that a file being stored has too: a file renamed, or keys moved between
    /// files, chains and swaps included, load as a clean build loads them.
    private final class LoadOrder {
        private let files: [FilePlan]
        private let removed: [String]
        private let patterns: [SourceGlob]
        /// Each file's place in the loading order, made at the first clash: most loads have none.
        private lazy var places = Dictionary(files.enumerated().map { ($1.path, $0) }) { first, _ in first }
        private lazy var gone = Set(removed)
        /// Sources this load did not read that gave a key up to a file before them in the loading order, in
        /// the order they did: read again once the load's files are stored, they fail as in a clean build.
        private(set) var rereads: [String] = []
        /// Sources of this load that gave a key up to a file before them. Parsed, they find the key taken;
        /// found with their last bytes (only touched), they are not parsed, and so are read again after.
        private var gaveUp: Set<String> = []

        /// Says that `path` was found with its last bytes and not parsed: read again once the load's files
        /// are stored if it gave a key up, so that it fails on that key as in a clean build.
        func touched(_ path: String) {
            if gaveUp.contains(path) && !rereads.contains(path) { rereads.append(path) }
        }

        init(files: [FilePlan], removed: [String], patterns: [String]) {
            self.files = files
            self.removed = removed
            self.patterns = patterns.map(SourceGlob.init(pattern:))
        }

        /// Whether `owner` gives the key up to `file`: `owner`'s file is gone, or comes after `file` in the
        /// loading order (and finds the key taken when it is read, in this load or after it, as a clean
        /// build would).
        func releases(_ owner: String, to file: String) -> Bool {
            guard !gone.contains(owner) else { return true }
            guard let place = places[file] else { return false }
            if let ownerPlace = places[owner] {
                guard ownerPlace > place else { return false }
                gaveUp.insert(owner)
                return true
            }
            // Not read in this load: its pattern, then its path, say whether it comes after.
            guard let ownerPattern = patterns.firstIndex(where: { $0.matches(owner) }) else { return false }
            let filePattern = files[place].pattern
            guard filePattern != ownerPattern ? filePattern < ownerPattern : file < owner else { return false }
            if !rereads.contains(owner) { rereads.append(owner) }
            return true
        }
    }

    /// Small files stored one after another in one savepoint, as the read-ahead hands them over.
    ///
    /// A savepoint per file was a fifth of a 100,000-file first load (5.7 s, against 4.4–4.7 s with no
    /// savepoints at all): in a savepoint, SQLite copies each page it changes that the transaction had
    /// changed already (the table's last page, the indexes' pages) before changing it. When a file of a batch fails (its key is another
    /// file's), the batch is undone and its files stored again a file at a time, each in a savepoint of its
    /// own, so that the failing file alone keeps its previous rows. (Files that failed to read or parse are
    /// never in a batch: they fail whatever is stored.) A batch is stored as its files arrive, not gathered
    /// first: gathered, the read-ahead, a window ahead, waited while the batch was stored (a load of 6.5 s took 8.7).
    private struct Batch {
        /// Whether its savepoint is open (`keep` and a failure end it, and close the batch).
        var isOpen = false
        /// Its files, with their rows, kept until the batch is kept, for storing again one at a time.
        var files: [(file: FilePlan, prepared: PreparedFile)] = []
        /// Their sizes, added: the rows held are about as large.
        var bytes: Int64 = 0
        /// What its files did, kept apart until the batch is kept.
        var outcome = Outcome()
        var changes = Changeset()
    }

    /// How many small files share a savepoint, and how many of their bytes at most (a batch's rows are
    /// held until it is kept, and a small file may be 8 MiB).
    static let batchSize = 256
    static let batchBytes: Int64 = 8 << 20

    /// Keeps what the open batch stored, if one is open, and starts the next afresh.
    private func keep(_ batch: inout Batch, into outcome: inout Outcome, changes: inout Changeset) throws {
        guard batch.isOpen else { return }
        batch.isOpen = false
        try store.endSavepoint(keeping: true)
        outcome.warnings += batch.outcome.warnings
        outcome.sourcesUnchanged += batch.outcome.sourcesUnchanged
        outcome.sourcesSameBytes += batch.outcome.sourcesSameBytes
        changes.merge(batch.changes)
        batch = Batch()
    }

    /// Stores one file in a savepoint of its own: when it fails, its problem is recorded and its rows
    /// stay as they were. `prepared` is what the read-ahead made of a small file; nil for a large one.
    private func storeAlone(_ file: FilePlan, prepared: PreparedFile?, in target: Target, into outcome: inout Outcome,
                            changes: inout Changeset) throws
    {
        var fingerprint = file.stat
        // A file that failed is recorded with its bytes' hash when they were read.
        if case .parsed(_, _, _, let hash)? = prepared { fingerprint.hash = hash }
        let problem: SourceError
        do {
            try store(file, prepared: prepared, alone: true, in: target, into: &outcome, changes: &changes)
            return
        } catch let error as SourceError {
            problem = error
        } catch let error as StoreError {
            problem = SourceError(file: file.path, reason: error.description)
        }
        outcome.problems += problem.all
        fingerprint.succeeded = false
        // The first problem (`description` says only it), and how many more there are.
        let message = problem.description + (problem.count == 1 ? "" : " (and \(problem.count - 1) more problem\(problem.count == 2 ? "" : "s"))")
        try store.recordSourceStatus(file.path, collection: target.collection.name, failure: message, fingerprint: fingerprint)
    }

    /// Makes the store's rows of `file` those it now yields, or records it as touched; throws when it
    /// fails. `alone`: its rows are replaced in a savepoint of their own, else in the caller's.
    private func store(_ file: FilePlan, prepared: PreparedFile?, alone: Bool, in target: Target, into outcome: inout Outcome,
                       changes: inout Changeset) throws
    {
        let collection = target.collection, statements = target.statements
        var fingerprint = file.stat
        let previous = target.readsAll ? nil : file.previous
        var warnings: [SourceError] = []
        switch prepared {
        case .unreadable(let error)?:
            throw error
        case .unchanged(let hash)?:
            try recordTouched(file.path, collection: collection.name, fingerprint: fingerprint, hash: hash, into: &outcome)
            target.order.touched(file.path)
            return
        case .parsed(let rows, let parsedWarnings, let failure, let hash)?:
            fingerprint.hash = hash
            changes.merge(try store.replaceRows(of: file.path, using: statements, fingerprint: fingerprint, inSavepoint: alone) { replacement in
                for row in rows {
                    do {
                        try replacement.write(row)
                    } catch let error as StoreError {
                        // A key another file has (or this one, twice): the source fails at the row's line.
                        throw SourceError(file: file.path, line: row.line, reason: error.description)
                    }
                }
                if let failure { throw failure }
                warnings = parsedWarnings + Self.skippedWarnings(replacement, file: file.path)
            })
        case nil:
            let source = source(for: collection, file: file.path)
            // Too large to hold: a file of the same size may only have been touched, which one
            // hashing pass (no parsing, no store) tells; else it is streamed through the parser.
            if let previous, previous.succeeded, previous.size == fingerprint.size, try hash(of: file) == previous.hash {
                try recordTouched(file.path, collection: collection.name, fingerprint: fingerprint, hash: previous.hash, into: &outcome)
                target.order.touched(file.path)
                return
            }
            changes.merge(try store.replaceRows(of: file.path, using: statements, fingerprint: fingerprint, inSavepoint: alone) { rows in
                let result = try RowPipeline.load(source, from: url(of: file.path), into: rows, schema: target.schema,
                                                  size: fingerprint.size, progress: progress)
                warnings = result.warnings + Self.skippedWarnings(rows, file: file.path)
                // Known once the file is read: the status recorded with the rows has it.
                rows.fingerprint?.hash = result.hash
            })
        }
        // The source's status was recorded with its rows.
        outcome.warnings += warnings
    }

    /// A warning for each item a feed skipped because a file before it has the item.
    private static func skippedWarnings(_ replacement: RowReplacement, file: String) -> [SourceError] {
        replacement.skipped.map {
            SourceError(file: file, line: $0.line, reason: "item id '\($0.key)' is also in \($0.otherSource), which comes first; that one is kept")
        }
    }

    /// Touched but identical bytes: nothing to parse; the new time is remembered.
    private func recordTouched(_ path: String, collection: String, fingerprint: SiteStore.SourceFingerprint, hash: Int64,
                               into outcome: inout Outcome) throws
    {
        var fingerprint = fingerprint
        fingerprint.hash = hash
        try store.recordSourceStatus(path, collection: collection, failure: nil, fingerprint: fingerprint)
        outcome.sourcesSameBytes += 1
    }

    /// How many files ahead of the one being read the kernel is asked to read.
    static let hintDistance = 32

    /// Asks the kernel to start reading the file into the page cache. The data's reads are not waited
    /// for (opening the file may still read its inode, which the file's own read would have to anyway). A
    /// file that cannot be opened is left to `readWhole`, which reports it.
    private static func announce(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        #if os(Linux)
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_WILLNEED))
        #else
        // Darwin has no posix_fadvise; F_RDADVISE would be its hint. Reading without one is only slower.
        #endif
        close(descriptor)
    }

    /// The bytes of `file`, at `path`, read with one `open` and `read`: building a URL and going through
    /// `Data(contentsOf:)` cost more than parsing a small Markdown file.
    private func readWhole(_ file: FilePlan, at path: String) throws(SourceError) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw SourceError(file: file.path, reason: "cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw SourceError(file: file.path, reason: "cannot be read: \(String(cString: strerror(errno)))")
        }
        var data = Data(count: Int(status.st_size))
        var filled = 0
        var failure: Int32 = 0
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            while filled < buffer.count {
                let count = Foundation.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
                if count < 0 && errno == EINTR { continue }
                if count < 0 { failure = errno }
                if count <= 0 { break }
                filled += count
            }
        }
        if failure != 0 { throw SourceError(file: file.path, reason: "cannot be read: \(String(cString: strerror(failure)))") }
        // A file that shrank while being read is taken as far as it went.
        if filled < data.count { data.removeSubrange(filled...) }
        return data
    }

    /// The hash of a file's bytes, read a chunk at a time.
    private func hash(of file: FilePlan) throws(SourceError) -> Int64 {
        if let body = remote[file.path] { return body.hash }
        var input = try SourceInput(contentsOf: url(of: file.path), displayName: file.path)
        input.forEachChunk { _ in }
        return input.hash.signed
    }

    /// The source that reads `file`, whose full path is `path` when the caller has made it already.
    private func source(for collection: CollectionConfig, file: String, at path: String? = nil) -> any Source {
        Self.source(for: collection, at: path.map { .path($0) } ?? .url(url(of: file)), displayName: file, timeZone: config.timeZone,
                    includesDrafts: includesDrafts)
    }

    /// Where a source file is: a URL, or a full path (a Markdown file per record is read without making a URL
    /// per file: a tenth of the read-ahead thread's time, decisions.md 23).
    enum FileLocation {
        case url(URL)
        case path(String)

        var url: URL {
            switch self {
            case .url(let url): return url
            case .path(let path): return URL(fileURLWithPath: path)
            }
        }
    }

    /// The source that reads a file of `collection`, named `displayName` in messages, as a build reads it
    /// (datetimes without an offset in `timeZone`, drafts as records when `includesDrafts`): `sitegen parse`
    /// shows what a build stores.
    static func source(for collection: CollectionConfig, at location: FileLocation, displayName: String, timeZone: TimeZone?,
                       includesDrafts: Bool = false) -> any Source {
        switch collection.kind {
        case .csv:
            var source = CSVSource(url: location.url, displayName: displayName, key: collection.key!, fields: collection.fields)
            source.timeZone = timeZone
            return source
        case .json, .ndjson:
            var source = JSONRecordSource(url: location.url, displayName: displayName, layout: collection.kind == .json ? .array : .lines,
                                          key: collection.key!, fields: collection.fields)
            source.timeZone = timeZone
            return source
        case .feed: return FeedSource(url: location.url, displayName: displayName)
        case .opml: return SubscriptionListSource(url: location.url, displayName: displayName)
        case .markdown:
            let path: String
            switch location {
            case .path(let given): path = given
            case .url(let url): path = url.path
            }
            var source = MarkdownSource(path: path, displayName: displayName, fields: collection.fields)
            source.timeZone = timeZone
            source.includesDrafts = includesDrafts
            return source
        }
    }

    /// The table for a collection: a column per field, indexes for the fields its listings sort on first
    /// (and, for Markdown under `includesDrafts`, for `draft`, which each build counts).
    static func schema(for collection: CollectionConfig, listings: [ListingConfig], timeZone: TimeZone?, includesDrafts: Bool = false)
        -> CollectionSchema
    {
        let columns = collection.fields.map { field -> (String, CollectionSchema.ColumnType) in
            switch field.type {
            case .integer, .bool: return (field.name, .integer)
            case .real: return (field.name, .real)
            case .list: return (field.name, .list)
            case .text, .date, .datetime: return (field.name, .text)
            }
        }
        var indexed: [String] = []
        // A taxonomy sorts its list table (indexed by value already), not the collection's; and only a field
        // is a column: SQLite would take another name in double quotes for a string and index a constant.
        for listing in listings where listing.from == collection.name && listing.taxonomy == nil {
            if let first = listing.sort.first?.field, collection.fields.contains(where: { $0.name == first }),
                !indexed.contains(first)
            {
                indexed.append(first)
            }
        }
        // Text, date and datetime fields are all text columns, but a value is read (and checked) by its field's
        // type: a type changed must read every file again, as a clean build would.
        let types = collection.fields.map { "\($0.name):\($0.type)" }.joined(separator: ",")
        // A datetime written without an offset is read in the site's zone: another zone, other values.
        let zone = collection.kind != .feed && collection.fields.contains { $0.type == .datetime } ? timeZone.map { " zone=\($0.identifier)" } ?? "" : ""
        // A feed's HTML is stored with its links made absolute: "srcset" says each candidate of a `srcset` is,
        // "web bases" that only an http(s) address is a base (issue 40), so that a store of an earlier build
        // reads its feeds again once.
        let links = collection.kind == .feed ? " links=srcset,web-bases" : ""
        // Drafts are records or not: the flag flipped, the files are read again, as a clean build with it reads them.
        let drafts = collection.kind == .markdown && includesDrafts ? " drafts" : ""
        if !drafts.isEmpty && !indexed.contains("draft") { indexed.append("draft") }
        return CollectionSchema(table: collection.name, columns: columns, indexedColumns: indexed,
                                origin: "\(collection.kind.rawValue) key=\(collection.key ?? "") types=\(types)\(zone)\(links)\(drafts)")
    }

    /// Whether `text` has a line feed, found by `memchr`: a body's kilobytes, not broken into characters.
    private static func hasLineFeed(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.count > 0 && memchr(bytes.baseAddress!, 0x0A, bytes.count) != nil }
    }

    static func storedRow(_ record: Record, schema: CollectionSchema) -> StoredRow {
        var hash = ContentHash()
        var lists: [String: [String]] = [:]
        let values = schema.columns.map { column -> DatabaseValue in
            let value = record.fields[column.name] ?? .null
            hash.combine(column.name)
            switch value {
            case .null: hash.combine("\u{0}"); return .null
            case .text(let written):
                // A line of text may be a section, a key another record refers to, or a slug's source: stored
                // composed, so that bytes compare as Swift compares. Bodies (with line breaks) stay as written.
                let text = Self.hasLineFeed(written) ? written : composedCanonically(written)
                hash.combine("t" + text)
                return .text(text)
            case .integer(let number): hash.combine("i\(number)"); return .integer(number)
            case .real(let number): hash.combine("r\(number)"); return .real(number)
            case .bool(let flag): hash.combine(flag ? "b1" : "b0"); return .integer(flag ? 1 : 0)
            case .list(let listed):
                // Every format's items are trimmed, a blank one is no item, and an item is listed once (front
                // matter's `tags: [data, " data", ""]` made a section named "" and took `data`'s address from it).
                var seen = Set<String>()
                let items = listed.map { composedCanonically(String($0.trimmingBlanks(newlines: true))) }.filter { !$0.isEmpty && seen.insert($0).inserted }
                hash.combine("l\(items.count)")
                items.forEach { hash.combine($0) }
                lists[column.name] = items
                return .text(StoredList.encode(items))
            }
        }
        return StoredRow(key: composedCanonically(record.key), line: record.line, contentHash: hash.signed, values: values, lists: lists)
    }
}
