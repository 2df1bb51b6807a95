import Foundation
import ResultsController
import SiteFetch
import SiteRender
import SiteSources
import SiteStore

/// Builds a site: loads its sources into the store, runs each listing through a results controller,
/// renders listing and detail pages through the templates, and writes them under the output folder.
///
/// ```swift
/// let summary = try SiteBuilder(root: URL(fileURLWithPath: "."), outputDirectory: nil).build()
/// print(summary.report)
/// ```
public struct SiteBuilder {
    /// The site root: where `sitegen.yml`, `content/` and `Templates/` are.
    public let root: URL
    /// Where pages go; `output/` under the root by default.
    public let outputDirectory: URL
    /// Where the store lives; `.sitegen/store.sqlite` under the root by default.
    public private(set) var storePath: URL
    /// A plan working on a copy of the store (`planningCopy()`).
    private var plansOnACopy = false
    /// Told, about twice a second, how the load of each source too large to read whole is going.
    public var onLoadProgress: ((LoadProgress) -> Void)?
    /// Told, about twice a second, how the pages of each listing and collection are coming along (only
    /// for steps that take longer than half a second).
    public var onRenderProgress: ((RenderProgress) -> Void)?
    /// The limits of the fetches of URL sources (time, size, redirects, requests per host).
    public var fetchSettings = FetchSettings()
    /// Told as each URL source's fetch finishes.
    public var onFetchProgress: (@Sendable (FetchProgress) -> Void)?
    /// Told, about twice a second, how many of a build's files are in their places, when that takes more
    /// than half a second (the step is the output folder's name, counted in files).
    public var onPublishProgress: ((RenderProgress) -> Void)?
    /// Seconds between the load's and the publish's progress reports: tests make it 0 to see every one.
    var progressInterval = 0.5
    /// Told when another sitegen process is building this site: this build waits for it to finish.
    public var onWaitingForAnotherBuild: (() -> Void)?
    /// Whether Markdown drafts (`draft: true`, `published: false`) are published, marked `draft` (`--drafts`).
    /// A build whose flag differs from the last one's reads every Markdown file again (decisions.md 41b).
    public var includesDrafts = false
    /// What a `watch` or `serve` keeps between its builds (controllers, the manifest's index, the store's
    /// connection); nil for a build that reads them from the store.
    public var session: BuildSession?

    /// Prepares a build of the site at `root`; the output and store locations default to `output/` and `.sitegen/`.
    public init(root: URL, outputDirectory: URL? = nil, storePath: URL? = nil) {
        self.root = root.standardizedFileURL
        self.outputDirectory = outputDirectory ?? root.appendingPathComponent("output")
        self.storePath = storePath ?? root.appendingPathComponent(".sitegen/store.sqlite")
    }

    /// The output folder as the store names it: its path from the site's folder when it is inside it, so
    /// that a site moved or copied whole with its `output/` and `.sitegen/` (a CI cache restored at
    /// another path, a renamed checkout) still builds only what changed; its absolute path otherwise.
    var outputFolderName: String {
        for (output, site) in [(outputDirectory.standardizedFileURL.path, root.path),
                               (outputDirectory.standardizedFileURL.resolvingSymlinksInPath().path, root.resolvingSymlinksInPath().path)] {
            let prefix = site.hasSuffix("/") ? site : site + "/"
            if output.hasPrefix(prefix) { return String(output.dropFirst(prefix.count)) }
        }
        return outputDirectory.standardizedFileURL.path
    }

    /// How a build runs.
    public struct Options: Sendable {
        /// Plan only: load and render as usual, inside a transaction that is rolled back, and write nothing.
        public var dryRun = false
        /// Whether URL sources are fetched (every one; only those due, in a watch; none, `--offline`).
        public var network: NetworkUse = .fetch
        /// Render every page, whatever the last build left (the output folder may have been edited by hand),
        /// from listings read afresh rather than caught up from their cached results.
        public var full = false
        /// The most pages one sitemap file lists, the sitemaps protocol's limit; past it, `sitemap.xml` is
        /// an index of files of this many (tests make it small).
        var pagesPerSitemap = 50_000
        /// Whether the render plan waits to be read until the controllers are fetched (tests ask, so that
        /// every controller is fetched ahead, as at 100,000 records).
        var plansAfterFetchingAhead = false
        /// The files and folders (relative to the site, or absolute) changed since the last build whose load
        /// was committed, when the caller knows them all (a watch, from inotify): the load then looks only
        /// at sources there and at those that failed, not at every source's status. nil: it looks at all.
        public var changedSources: Set<String>?
        /// Look for every page the last build left in the output folder, and make again those not there: a
        /// watch asks at its first build (pages deleted by hand since the last build) and after the output or
        /// store folder was deleted under it (`git clean -fdx`), whose files may have gone after a build had
        /// found them in place. A status read per page (on one thread, 0.33-0.44 s for 120,000).
        public var verifiesOutput = false

        /// Options for a build; the defaults write, rendering only the pages whose inputs changed.
        public init(dryRun: Bool = false, full: Bool = false, changedSources: Set<String>? = nil, verifiesOutput: Bool = false) {
            self.dryRun = dryRun
            self.full = full
            self.changedSources = changedSources
            self.verifiesOutput = verifiesOutput
        }
    }

    /// The entries of `manifest` whose files are in the folder `output`, read on two threads.
    static func present(_ manifest: (paths: [String], records: [PageRecord]), in output: URL)
        -> (paths: [String], records: [PageRecord])
    {
        let folder = open(output.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return ([], []) }
        defer { close(folder) }
        let count = manifest.paths.count, parts = count >= 4_096 ? 2 : 1
        // Each thread writes its own half.
        nonisolated(unsafe) let missing = UnsafeMutableBufferPointer<Bool>.allocate(capacity: count)
        missing.initialize(repeating: false)
        defer { missing.deallocate() }
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var status = stat()
            for index in count * part / parts..<count * (part + 1) / parts {
                missing[index] = fstatat(folder, manifest.paths[index], &status, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT
            }
        }
        guard missing.contains(true) else { return manifest }
        let kept = manifest.paths.indices.filter { !missing[$0] }
        return (kept.map { manifest.paths[$0] }, kept.map { manifest.records[$0] })
    }

    /// Why the output folder cannot hold this site's pages: it is (or holds) the site folder, where pages would
    /// lie among the sources, or is in the store's folder, `Templates/` or a folder a collection reads sources
    /// from (whose patterns could read the pages back as sources); nil when it can.
    func outputFolderProblem(_ config: SiteConfig) -> String? {
        let resolved = Self.realPath
        let output = resolved(outputDirectory), site = resolved(root)
        func isIn(_ folder: String) -> Bool { output == folder || output.hasPrefix(folder == "/" ? "/" : folder + "/") }
        if output == site || site.hasPrefix(output == "/" ? "/" : output + "/") {
            return (output == site ? "it is the site folder" : "it holds the site folder")
                + ": the pages would lie among its sources; write them to a folder of their own, such as output/ or docs/"
        }
        var places = [(resolved(storePath.deletingLastPathComponent()), "the store's folder"), (resolved(root.appendingPathComponent("Templates")), "Templates/")]
        for collection in config.collections {
            for pattern in collection.sources where !RemoteSource.isURL(pattern) {
                let folder = SourceGlob(pattern: pattern).folder
                places.append((resolved(URL(fileURLWithPath: SourceGlob.location(of: folder, under: root.path))),
                               "'\(folder)', where collection '\(collection.name)' reads its sources"))
            }
        }
        // A folder that is the site's or holds it (a store beside `sitegen.yml`, `../*.csv`) holds every output
        // folder inside the site too: its patterns do not walk into the output.
        let below = places.filter { $0.0 != site && !site.hasPrefix($0.0 == "/" ? "/" : $0.0 + "/") }
        guard let (_, name) = below.first(where: { isIn($0.0) }) else { return nil }
        return "it is in \(name); write the pages to a folder of their own, such as output/ or docs/"
    }

    /// The path of `url` with its links resolved in the longest part of it that exists: Foundation leaves a
    /// path that does not exist (an output folder a first build makes) as it is, links in its parents included.
    static func realPath(_ url: URL) -> String {
        var existing = url.standardizedFileURL, rest: [String] = []
        while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" {
            rest.insert(existing.lastPathComponent, at: 0)
            existing = existing.deletingLastPathComponent()
        }
        guard let real = realpath(existing.path, nil) else { return url.standardizedFileURL.path }
        defer { free(real) }
        return ([String(cString: real)] + rest).joined(separator: "/").replacingOccurrences(of: "//", with: "/")
    }

    /// Whether a build of this process is waiting for another process's build of its site to finish: it
    /// has read and changed nothing yet, so the process may stop without waiting for it.
    public static var isWaitingForAnotherBuild: Bool { BuildLock.waiting.load(ordering: .sequentiallyConsistent) > 0 }

    /// Throws when the output folder cannot hold the site's pages (`outputFolderProblem`): what `watch` and
    /// `serve` ask before their first build, since no save would fix it. Says nothing while `sitegen.yml`
    /// does not load (the first build says why).
    public func checkOutputFolder() throws {
        guard let config = try? readConfig() else { return }
        try checkOutputFolder(for: config)
    }

    /// Throws when the output folder cannot hold the site's pages (`outputFolderProblem`), or is in a static
    /// folder, which would publish the last build's pages again as static files: before anything is written.
    func checkOutputFolder(for config: SiteConfig) throws {
        if let problem = outputFolderProblem(config) { throw BuildError.output(path: outputDirectory.path, reason: problem) }
        let output = Self.realPath(outputDirectory)
        for folder in config.staticFolders {
            let path = Self.realPath(root.appendingPathComponent(folder, isDirectory: true))
            guard output == path || output.hasPrefix(path + "/") else { continue }
            throw BuildError.config(ConfigError(file: config.file, at: config.staticMark, reason: "static folder '\(folder)' holds the output folder; "
                                                    + "write the site elsewhere, or name another static folder"))
        }
    }

    /// Runs the whole pipeline. Throws when the site cannot be built at all (configuration, templates);
    /// bad sources are reported in the summary and the rest still builds.
    ///
    /// Only the pages whose inputs changed since the last complete build are rendered (see `RenderPlan`);
    /// the result is the same, file for file, as a build from nothing.
    public func build(options: Options = Options()) throws -> BuildSummary {
        // A folder that is no site is said so before `.sitegen/` is made in it.
        if !FileManager.default.fileExists(atPath: root.appendingPathComponent("sitegen.yml").path) { _ = try readConfig() }
        if options.dryRun, !plansOnACopy, let scratch = try planningCopy() {
            // A plan changes nothing, not even by making a store: on a new site, or one whose `.sitegen/`
            // this user may not write (a read-only checkout), it plans on a copy of the store.
            defer { try? FileManager.default.removeItem(at: scratch) }
            var copy = self
            copy.storePath = scratch.appendingPathComponent("store.sqlite")
            copy.plansOnACopy = true
            copy.session = nil
            return try copy.build(options: options)
        }
        let lock = try BuildLock(beside: storePath, onWait: onWaitingForAnotherBuild)
        defer { withExtendedLifetime(lock) {} }
        // A plan's changes are taken back: the session's controllers would be ahead of the store.
        let session = options.dryRun ? nil : session
        let store = try session?.store(at: storePath.path) ?? SiteStore(path: storePath.path)
        let run = BuildRun(builder: self, store: store, options: options, session: session)
        do {
            guard options.dryRun else { return try run.run() }
            // A dry run changes the store as a build would, so that it plans exactly what a build would do,
            // then takes it all back.
            try store.database.execute("BEGIN IMMEDIATE")
            defer { try? store.database.execute("ROLLBACK") }
            return try run.run()
        } catch let error as BuildError where run.loaded {
            session?.reset()
            // What the load found is said too: the next build sees those sources unchanged and would not.
            throw BuildError.stopped(error, summary: run.summary)
        } catch {
            session?.reset()
            throw error
        }
    }
}

extension SiteBuilder {
    /// The template files' fingerprints as the last build kept them (`name<TAB>fingerprint` lines).
    static func templateFiles(from text: String?) -> [String: Int64]? {
        guard let text else { return nil }
        var files: [String: Int64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t")
            if parts.count == 2, let fingerprint = Int64(parts[1]) { files[String(parts[0])] = fingerprint }
        }
        return files
    }

    /// A first build into a folder that has files it did not make (an `output/` kept while `.sitegen/`
    /// was not, as a CI cache may): the pages of records deleted since are among them, and no build
    /// will delete them, as it deletes only what a build made. Said once, with a few of them.
    func strangers(in writer: OutputWriter) -> [SourceError] {
        let made = writer.renderedFiles
        guard let walker = FileManager.default.enumerator(at: outputDirectory, includingPropertiesForKeys: [.isRegularFileKey],
                                                          options: [.skipsHiddenFiles]) else { return [] }
        let prefix = outputDirectory.standardizedFileURL.path + "/"
        var found: [String] = []
        // Files of the names sitegen writes: a CNAME or notes of your own are no sign of an old build.
        let names: Set<String> = ["index.html", "index.md", "atom.xml", "rss.xml", "feed.json", "404.html", "robots.txt"]
        for case let url as URL in walker where names.contains(url.lastPathComponent) || url.lastPathComponent.hasPrefix("sitemap") {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let path = String(url.standardizedFileURL.path.dropFirst(prefix.count))
            if !made.contains(path) { found.append(path) }
        }
        guard !found.isEmpty else { return [] }
        let shown = found.sorted().prefix(3).joined(separator: ", ") + (found.count > 3 ? ", …" : "")
        return [SourceError(file: outputDirectory.lastPathComponent, reason: "\(found.count) file\(found.count == 1 ? "" : "s") here this build did not "
            + "make (\(shown)), and its store is new: pages of records deleted since the folder was built stay, as builds delete only "
            + "pages they made; empty the folder for a clean build")]
    }

    /// Loads the site's sources into the store and renders nothing: the first stage of `build()`, for
    /// tools and benchmarks that want the store alone.
    public func loadSources() throws -> BuildSummary {
        var summary = BuildSummary()
        var clock = StageClock()
        let config = try readConfig()
        let lock = try BuildLock(beside: storePath, onWait: onWaitingForAnotherBuild)
        defer { withExtendedLifetime(lock) {} }
        let store = try SiteStore(path: storePath.path)
        clock.lap("config", into: &summary)
        // The next build will not see this load's changes: it must render every page.
        try store.beginWritingOutput()
        try load(config: config, store: store, into: &summary)
        clock.lap("load", into: &summary)
        return summary
    }

    /// A new temporary folder holding a copy of the store (none, when there is none) for a plan to work in,
    /// when the store is not there or its folder may not be written; nil when the plan can use the store.
    private func planningCopy() throws -> URL? {
        let folder = storePath.deletingLastPathComponent().path
        let exists = FileManager.default.fileExists(atPath: storePath.path)
        guard !exists || access(folder, W_OK) != 0 || access(storePath.path, W_OK) != 0 else { return nil }
        // Copied while no build writes it: a shared lock on the lock file a build holds alone.
        let lockFile = open(storePath.deletingLastPathComponent().appendingPathComponent("lock").path, O_RDONLY | O_CLOEXEC)
        defer { if lockFile >= 0 { close(lockFile) } }
        if lockFile >= 0 { while flock(lockFile, LOCK_SH) != 0 && errno == EINTR {} }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        if exists {
            // The file as it is, with a write-ahead log a killed build left: SQLite cannot open a store in
            // a folder it may not write in.
            do {
                for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: storePath.path + suffix) {
                    let copy = scratch.appendingPathComponent("store.sqlite" + suffix).path
                    try FileManager.default.copyItem(atPath: storePath.path + suffix, toPath: copy)
                    // The copy keeps the store's mode, which may forbid writing it.
                    chmod(copy, 0o600)
                }
            } catch {
                try? FileManager.default.removeItem(at: scratch)
                throw BuildError.input(path: storePath.path, reason: "cannot be copied for a plan: \(error.localizedDescription)")
            }
        }
        return scratch
    }

    func readConfig() throws -> SiteConfig {
        do {
            return try SiteConfig(contentsOf: root.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")
        } catch {
            throw BuildError.config(error)
        }
    }

    /// Loads the sources and returns what changed in the store.
    @discardableResult
    func load(config: SiteConfig, store: SiteStore, changedSources: Set<String>? = nil, readingEverySource: Bool = false,
              network: NetworkUse = .fetch, into summary: inout BuildSummary) throws -> Changeset {
        let remote = try fetchRemoteSources(config: config, store: store, network: network, into: &summary)
        var loader = CollectionLoader(root: root, config: remote.config, store: store)
        loader.remote = remote.bodies
        loader.changedPaths = changedSources
        loader.readsEverySource = readingEverySource
        loader.outputFolder = outputDirectory.standardizedFileURL.path
        loader.progress = onLoadProgress
        loader.progressInterval = progressInterval
        loader.includesDrafts = includesDrafts
        let loaded: CollectionLoader.Outcome
        do {
            loaded = try loader.load()
        } catch let failure as CollectionLoader.RebuildFailed {
            throw BuildError.newFieldsFailed(collection: failure.collection, problems: failure.problems)
        }
        // A URL source whose body cannot be read keeps its items, as any failing source does; its server's
        // mistake is no reason to fail the site: a warning (decisions.md 40a).
        summary.problems += loaded.problems.filter { !RemoteSource.isURL($0.file) }
        let unreadable = loaded.problems.filter { RemoteSource.isURL($0.file) }
        summary.warnings += unreadable.map {
            SourceError(file: $0.file, line: $0.line, column: $0.column, reason: $0.reason + "; the items of its last good copy are kept")
        }
        try RemoteRefresh(root: root, store: store).restoreLastGoodCopies(
            of: unreadable.map(\.file), replaced: remote.replaced,
            reasons: Dictionary(unreadable.map { ($0.file, $0.description) }) { first, _ in first })
        summary.warnings += config.collections.flatMap { $0.hiddenFields(file: config.file) }
            + untitledFeeds(config) + highlightingProblem(config) + loaded.warnings
        summary.sourcesRead = loaded.sourcesRead
        summary.sourcesUnchanged = loaded.sourcesUnchanged
        summary.sourcesSameBytes = loaded.sourcesSameBytes
        // Records only: the rows of list join tables are not records.
        for (table, changes) in loaded.changeset.tables where config.collection(named: table) != nil {
            summary.rowsInserted += changes.inserted.count
            summary.rowsUpdated += changes.updated.count
            summary.rowsDeleted += changes.deleted.count
        }
        summary.warnings += try danglingReferences(config: config, store: store, changed: Set(loaded.changeset.tables.keys))
        if includesDrafts { summary.drafts = try draftCount(config: config, store: store) }
        return loaded.changeset
    }

    /// How many drafts the store's Markdown tables hold: counted through each table's index on `draft`, so
    /// the count costs the drafts, not the records.
    private func draftCount(config: SiteConfig, store: SiteStore) throws -> Int {
        var count = 0
        for collection in config.collections where collection.kind == .markdown {
            let rows = try store.database.fetchAll("SELECT count(*) AS drafts FROM \(quoteIdentifier(collection.name)) WHERE draft = 1")
            count += Int(rows.first?["drafts"]?.int64Value ?? 0)
        }
        return count
    }

    /// The warning that fenced code is left unhighlighted although `highlight:` asks for it: the library's
    /// language definitions cannot be read (a binary copied to a machine without them). Never an error: the
    /// pages are as with `highlight: false`.
    private func highlightingProblem(_ config: SiteConfig) -> [SourceError] {
        guard config.highlightsCode, let problem = CodeHighlighter.shared.problem else { return [] }
        return [SourceError(file: config.file, reason: "fenced code is not highlighted: \(problem); "
            + "install Debian's libsource-highlight-common (or point SOURCE_HIGHLIGHT_DATADIR at its files), or set highlight: false")]
    }

    /// Fetches the URL sources (as `network` says) into the store, and expands OPML subscription lists.
    private func fetchRemoteSources(config: SiteConfig, store: SiteStore, network: NetworkUse,
                                    into summary: inout BuildSummary) throws -> RemoteRefresh.Outcome {
        var refresh = RemoteRefresh(root: root, store: store)
        refresh.settings = fetchSettings
        refresh.network = network
        refresh.progress = onFetchProgress
        let outcome = try refresh.run(config)
        summary.problems += outcome.problems
        summary.warnings += outcome.warnings
        summary.urlsFetched += outcome.fetched
        summary.urlsNotModified += outcome.notModified
        summary.urlsFailed += outcome.failed
        summary.nextURLRefresh = outcome.nextDue
        return outcome
    }

    /// What a refresh of the URL sources found.
    public struct RemoteRefreshReport: Sendable {
        /// The URLs whose bodies changed: a build then has something to load.
        public var changed: [String] = []
        /// Fetches that failed, moved sources, lists that could not be read.
        public var warnings: [SourceError] = []
        /// When the next URL source is due (seconds since 1970); nil without URL sources.
        public var nextDue: Double?
    }

    /// Fetches the URL sources whose collection's `refresh:` interval has passed since they were last
    /// tried, and keeps the answers in the store, without loading or rendering anything: a `watch`'s
    /// timer, which builds (offline) only when a body changed.
    public func refreshRemoteSources() throws -> RemoteRefreshReport {
        let config = try readConfig()
        let lock = try BuildLock(beside: storePath, onWait: onWaitingForAnotherBuild)
        defer { withExtendedLifetime(lock) {} }
        let store = try SiteStore(path: storePath.path)
        var refresh = RemoteRefresh(root: root, store: store)
        refresh.settings = fetchSettings
        refresh.network = .whenDue
        refresh.progress = onFetchProgress
        let outcome = try refresh.run(config)
        return RemoteRefreshReport(changed: outcome.changed, warnings: outcome.warnings + outcome.problems, nextDue: outcome.nextDue)
    }

    /// Warns about listings whose feeds would title every entry by its record's key: the collection has
    /// no `title` field and no detail page naming one.
    private func untitledFeeds(_ config: SiteConfig) -> [SourceError] {
        config.listings.compactMap { listing in
            guard !listing.feeds.isEmpty, let collection = config.collection(named: listing.from), !collection.hasTitles else { return nil }
            let mark = listing.marks["feeds"] ?? listing.marks[""]
            return SourceError(file: config.file, line: mark?.line, column: mark?.column, reason:
                "listing '\(listing.name)': its feeds title each entry by its key, since collection '\(collection.name)' has no "
                    + "'title' field; name one in its detail (detail: {path: ..., title: FIELD}) or call a field 'title'")
        }
    }

    /// Warns about keys in relationship fields that name no record, for the collections whose rows, or
    /// whose related collections' rows, this load changed (a reference breaks from either side).
    private func danglingReferences(config: SiteConfig, store: SiteStore, changed: Set<String>) throws -> [SourceError] {
        let limit = 10
        var warnings: [SourceError] = []
        for collection in config.collections where !collection.relationships.isEmpty {
            let touched = changed.contains(collection.name) || collection.relationships.contains {
                changed.contains($0.target) || changed.contains(CollectionSchema.listTable(collection.name, $0.field))
            }
            guard touched else { continue }
            let found = try RelatedRecords(database: store.database, collection: collection).danglingKeys(limit: limit + 1)
            for reference in found.prefix(limit) {
                let target = collection.relationships.first { $0.field == reference.field }?.target ?? ""
                warnings.append(SourceError(file: reference.source, line: reference.line, reason:
                    "record '\(reference.key)': \(reference.field) '\(reference.missing)' is not a key of '\(target)'; templates see no record for it"))
            }
            if found.count > limit {
                warnings.append(SourceError(file: "sitegen.yml", reason:
                    "collection '\(collection.name)': more records refer to missing keys; only the first \(limit) are listed"))
            }
        }
        return warnings
    }
}

extension SiteBuilder {
    /// The fingerprint of everything besides the records that the pages are made of: the settings and the
    /// menu (`site`), each listing's and collection's declaration, the templates, the sitemap's size. A build
    /// whose fingerprint is the last build's looks only at the pages its deltas name.
    func planInputsFingerprint(config: SiteConfig, site: Int64, templates: [String: Int64], pagesPerSitemap: Int) -> Int64 {
        var fingerprint = Fingerprint()
        fingerprint.combine(site)
        fingerprint.combine(pagesPerSitemap)
        for listing in config.listings { fingerprint.combine(listing.fingerprint) }
        for collection in config.collections { fingerprint.combine(collection.fingerprint) }
        for (name, template) in templates.sorted(by: { $0.key < $1.key }) {
            fingerprint.combine(name)
            fingerprint.combine(template)
        }
        return fingerprint.signed
    }
}
