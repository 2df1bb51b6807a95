import Foundation
import SiteBuild

/// The loop of `sitegen watch` and `sitegen serve`: a first build, then one build per batch of changes to the
/// site's `content/`, `Templates/` and `sitegen.yml`, and to the folders its collections' sources are in (inside
/// the site or out), until `stop()`.
///
/// ```swift
/// let session = try WatchSession(builder: SiteBuilder(root: site))
/// session.run { report in print(report.line) }   // returns after session.stop()
/// ```
public final class WatchSession: @unchecked Sendable {
    /// The folders (recursively) and files of every site whose changes rebuild it, relative to the site.
    public static let watchedFolders = ["content", "Templates"]
    /// The files at the top of every site whose changes rebuild it.
    public static let watchedFiles = ["sitegen.yml"]

    /// The watcher, started when the session is made so that no change during the first build is missed.
    public let watcher: any ChangeWatcher
    private let rebuilder: Rebuilder
    /// The source folders and files `sitegen.yml` named when last read, watched beside the fixed ones.
    private var sources: (folders: [String], files: [String]) = ([], [])
    /// Why some source folder could not be watched, told with the next build.
    private var watchWarnings: [String] = []
    /// Every path changed since the last build whose load was committed, or nil when that is not known
    /// (no such build yet, events lost, `sitegen.yml` changed): then the next build looks at every source.
    private var changedSinceLoad: Set<String>?
    private let buildingLock = NSLock()
    private var building = false
    /// When the next URL source is due for a fetch, as the last build or refresh said; nil without URL sources.
    private var nextRemoteRefresh: Double?
    /// Whether URL sources are never fetched (`--offline`).
    private let offline: Bool
    /// What the last refresh of URL sources had to say (failed fetches), told with the next build.
    private var refreshWarnings: [String] = []

    /// Whether a build is under way now (a stop request then waits for it); safe from any thread.
    public var isBuilding: Bool { buildingLock.withLock { building } }
    private var stopping = false

    /// Starts watching the site of `builder`; its output folder and store folder are never watched. Only the
    /// fixed folders must be watchable: a source folder that is not is a warning of the first build.
    /// With `offline`, no build touches the network and URL sources are never fetched: they load their kept copies.
    /// `watcherKind` picks the watcher; by default, the one `SITEGEN_WATCHER` names (`FileWatcher.Kind.fromEnvironment()`).
    public init(builder: SiteBuilder, quietPeriod: Double = 0.03, maximumDelay: Double = 1.0, offline: Bool = false,
                watcherKind: FileWatcher.Kind? = nil) throws {
        self.offline = offline
        // Controllers, the manifest's index and the store's connection stay in memory between builds.
        var builder = builder
        if builder.session == nil { builder.session = BuildSession() }
        rebuilder = Rebuilder(builder: builder)
        watcher = try FileWatcher.make(FileWatcher.Configuration(
            root: builder.root, folders: Self.watchedFolders, files: Self.watchedFiles,
            ignoredFolders: [builder.outputDirectory, builder.storePath.deletingLastPathComponent()],
            quietPeriod: quietPeriod, maximumDelay: maximumDelay), kind: watcherKind ?? FileWatcher.Kind.fromEnvironment())
        builtFolders = Set(watcher.configuration.ignoredPaths)
        (watchLock, anotherWatchesTheSite) = Self.lockWatch(beside: builder.storePath)
        followSources()
    }

    /// The output and store folders, as the watcher names them when they vanish (relative to the site).
    private let builtFolders: Set<String>

    /// Whether another `watch` or `serve` was already watching the site when this one started: both then
    /// build each change, and the second to get there finds it done.
    public let anotherWatchesTheSite: Bool
    /// The open file holding the lock that says this session watches the site, if it holds it.
    private let watchLock: Int32?

    /// Takes `.sitegen/watch` (an advisory lock the kernel drops with the process): its open file, or nil with
    /// whether another process holds it. A store folder that cannot be made or opened counts as not shared.
    private static func lockWatch(beside storePath: URL) -> (descriptor: Int32?, heldElsewhere: Bool) {
        let folder = storePath.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let descriptor = open(folder.appendingPathComponent("watch").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return (nil, false) }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return (descriptor, false) }
        let held = errno == EWOULDBLOCK
        close(descriptor)
        return (nil, held)
    }

    deinit {
        if let watchLock { close(watchLock) }
    }

    /// Builds the site once, as the first build of a watch does; the paths given are what changed since the
    /// last build of this session. `full` renders every page and reads every source (`sitegen build --full`).
    /// `network`: which URL sources are fetched first (those due, unless told otherwise).
    public func buildOnce(changedPaths: [String] = [], full: Bool = false, verifiesOutput: Bool = false,
                          network: SiteBuilder.NetworkUse = .whenDue) -> RebuildReport {
        // What the watcher saw is all that changed only when every event arrived and the sources are still
        // where sitegen.yml said (a new pattern matches files that never changed).
        if changedPaths.contains(FileWatcher.eventsLost) || changedPaths.contains(where: Self.watchedFiles.contains) {
            changedSinceLoad = nil
        } else {
            changedSinceLoad?.formUnion(changedPaths)
        }
        // Backup and lock files do not start a build, but a source pattern may match them.
        let quiet = watcher.takeQuietChanges()
        changedSinceLoad?.formUnion(quiet)
        buildingLock.withLock { building = true }
        var rebuilt = rebuilder.rebuild(changedPaths: changedPaths, changedSources: changedSinceLoad, full: full, verifiesOutput: verifiesOutput,
                                        network: offline ? .offline : network)
        buildingLock.withLock { building = false }
        if let summary = rebuilt.summary, !offline { nextRemoteRefresh = summary.nextURLRefresh }
        // A build that did not load leaves the store as it was: its changes are still to be loaded.
        if rebuilt.loaded { changedSinceLoad = [] }
        rebuilt.warnings += watchWarnings + refreshWarnings
        watchWarnings = []
        refreshWarnings = []
        return rebuilt
    }

    /// Builds once per batch of changes, telling `report` about each, until `stop()`; throws only when the watch
    /// itself breaks (the system's watcher), never for a failed build.
    public func watch(report: (RebuildReport) -> Void) throws {
        var schedule = WatchSchedule()
        // The controllers' caches are saved once the site is quiet, and when the watch ends.
        defer { saveCaches() }
        while let changed = try watcher.nextBatch(retryAfter: Self.earliest(schedule.retryAfter, secondsUntilRemoteRefresh),
                                                  whenQuiet: (Self.cacheSavingDelay, saveCaches)) {
            // The `refresh:` timer of URL sources: a fetch, and a build only when a body changed.
            if changed.isEmpty, let due = secondsUntilRemoteRefresh, due <= 0 {
                if let rebuilt = refreshRemoteSources() { report(rebuilt) }
                if schedule.retryAfter == nil { continue }
            }
            // sitegen.yml may now read sources from somewhere new: watched before the build reads it, so that
            // files written there during the build are seen. Otherwise the folders stay as they were (parsing
            // sitegen.yml for every save was a thirtieth of a one-record build), and those outside the site
            // not made yet are looked for again.
            if changed.contains(where: Self.watchedFiles.contains) || changed.contains(FileWatcher.eventsLost) { followSources() } else { watchSourcesAgain() }
            let folderGone = changed.contains(where: builtFolders.contains)
            let kind = schedule.kind(of: changed)
            var rebuilt = buildOnce(changedPaths: changed, verifiesOutput: schedule.verifiesNext || folderGone)
            if kind == .check { rebuilt.cause = "pages missing from the output folder" }
            if schedule.record(rebuilt, of: kind, folderGone: folderGone) { report(rebuilt) }
        }
    }

    /// How long the site is quiet after a build before the controllers' caches are saved (for the next
    /// `sitegen build` process): a save of four listings' caches was a tenth of a one-record build at
    /// 100,000 records, and a watch's own builds do not need them.
    static let cacheSavingDelay = 0.25

    /// Saves the session's controller caches (`BuildSession.saveCaches`).
    private func saveCaches() {
        rebuilder.builder.session?.saveCaches(storePath: rebuilder.builder.storePath)
    }

    /// Seconds until the next URL source is due (at most a day, so that a long wait still wakes); nil without URL sources.
    private var secondsUntilRemoteRefresh: Double? {
        nextRemoteRefresh.map { min($0 - Date().timeIntervalSince1970, 86_400) }
    }

    /// The smaller of two waits, either of which may be none.
    private static func earliest(_ a: Double?, _ b: Double?) -> Double? {
        [a, b].compactMap { $0 }.map { max($0, 0) }.min()
    }

    /// Fetches the URL sources that are due and, when a body changed, builds from what the store now holds
    /// (offline: the fetch is done); nil when nothing changed. Failed fetches are told with the next build.
    private func refreshRemoteSources() -> RebuildReport? {
        let refreshed: SiteBuilder.RemoteRefreshReport
        do {
            refreshed = try rebuilder.builder.refreshRemoteSources()
        } catch {
            watchWarnings.append("URL sources could not be refreshed: \(error)")
            nextRemoteRefresh = Date().timeIntervalSince1970 + Self.retryInterval
            return nil
        }
        nextRemoteRefresh = refreshed.nextDue
        refreshWarnings = refreshed.warnings.map(\.description)
        guard !refreshed.changed.isEmpty else { return nil }
        var rebuilt = buildOnce(network: .offline)
        rebuilt.cause = "\(refreshed.changed.count) URL source\(refreshed.changed.count == 1 ? "" : "s") changed: "
            + refreshed.changed.joined(separator: ", ")
        return rebuilt
    }

    /// How long a watch waits before trying again a build the machine failed.
    public static let retryInterval = 5.0
    /// How long the site must be quiet after its output or store folder was deleted before the watch looks
    /// for pages deleted after its build: a `git clean` or `rm -rf` is done by then.
    public static let settlingTime = 1.0

    /// Watches the folders and files `sitegen.yml` reads sources from now, and no longer those it stopped
    /// naming (a save there would build for nothing).
    private func followSources() {
        let now = Self.sourceFolders(of: rebuilder.builder.root)
        watcher.unwatch(folders: sources.folders.filter { !now.folders.contains($0) },
                        files: sources.files.filter { !now.files.contains($0) })
        sources = now
        do {
            try watcher.watch(folders: now.folders, files: now.files)
        } catch {
            watchWarnings.append("sitegen.yml: sources are read from \(now.folders.joined(separator: ", ")), "
                                 + "but not all of them can be watched: \(error)")
        }
    }

    /// Watches the folders `followSources` found, again: one outside the site made since is watched now.
    private func watchSourcesAgain() {
        do {
            try watcher.watch(folders: sources.folders, files: sources.files)
        } catch {
            watchWarnings.append("sitegen.yml: sources are read from \(sources.folders.joined(separator: ", ")), "
                                 + "but not all of them can be watched: \(error)")
        }
    }

    /// The first build of a watch (or a serve): it looks for every page, so that pages deleted by hand while
    /// no watch ran come back. `full` renders every page (`--full`).
    public func firstBuild(full: Bool = false) -> RebuildReport {
        var first = buildOnce(full: full, verifiesOutput: true, network: .fetch)
        first.isFirst = true
        return first
    }

    /// The first build, then `watch(report:)`.
    public func run(fullFirstBuild: Bool = false, report: (RebuildReport) -> Void) throws {
        report(firstBuild(full: fullFirstBuild))
        try watch(report: report)
    }

    /// Where the collections of the site at `root` read their files (and its static folders are): names (or patterns) of the folders and
    /// files directly in the site (a source pattern's first part), and absolute paths of folders outside it
    /// (the folder a pattern's matches all share). A folder that holds the site is left out: watched, it would
    /// watch the site's output. None are named while `sitegen.yml` does not load (the build says why).
    public static func sourceFolders(of root: URL) -> (folders: [String], files: [String]) {
        guard let config = try? SiteConfig(contentsOf: root.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")
        else { return ([], []) }
        let rootPath = root.standardizedFileURL.path
        var folders: [String] = [], files: [String] = []
        // A URL has no folder to watch: a watch fetches it every `refresh:` interval instead.
        for pattern in config.collections.flatMap(\.sources) where !RemoteSource.isURL(pattern) {
            let parts = pattern.split(separator: "/").filter { $0 != "." }
            guard let first = parts.first else { continue }
            if pattern.hasPrefix("/") || first == ".." {
                let shared = parts.dropLast().prefix { !$0.contains(where: { "*?[".contains($0) }) }.joined(separator: "/")
                let folder = URL(fileURLWithPath: pattern.hasPrefix("/") ? "/" + shared : rootPath + "/" + shared).standardizedFileURL.path
                if folder.hasPrefix(rootPath + "/") {
                    folders.append(String(folder.dropFirst(rootPath.count + 1).prefix { $0 != "/" }))
                } else if folder != "/" && folder != rootPath && !rootPath.hasPrefix(folder + "/") {
                    folders.append(folder)
                }
                continue
            }
            if first.contains("**") {
                // Any depth from the top: every folder of the site, which the ignored ones (output, store) leave
                // out, and the files at the top that the last part names.
                folders.append("*")
                files.append(parts.last!.replacingOccurrences(of: "**", with: "*"))
            } else if parts.count == 1 {
                files.append(String(first))
            } else {
                folders.append(String(first))
            }
        }
        // The static folders are published file by file: a save there is a build too, and so is making one.
        folders += config.staticFolders.compactMap { $0.split(separator: "/").first { $0 != "." }.map(String.init) }
        var seen = Set(watchedFolders + watchedFiles.map { "file:" + $0 })
        return (folders.filter { seen.insert($0).inserted }, files.filter { seen.insert("file:" + $0).inserted })
    }

    /// What is watched, for a line such as `watching content/, Templates/, data/ and sitegen.yml for changes`.
    public var watchedNames: String {
        let names = watcher.configuration.folders.map { $0 + "/" } + watcher.configuration.files
        return names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    /// Ends the watch after the build under way, if any; safe from any thread.
    public func stop() {
        buildingLock.withLock { stopping = true }
        watcher.stop()
    }

    /// Whether `stop()` was called: a build that ends now is the last, and the watch is not to be announced.
    public var isStopping: Bool { buildingLock.withLock { stopping } }
}

/// When a watch builds without a save, and what it says then. A build the machine failed (a full disk, the
/// store's folder) is tried again every `retryInterval` until it builds: no save of the user's would be the
/// fix. After the output or store folder was deleted (`git clean -fdx`, `rm -rf .sitegen output`), pages a
/// build found in place may go after it, which no event tells (the output folder is not watched): every
/// build then looks for every page, until one has looked with the site quiet for `settlingTime`.
struct WatchSchedule {
    /// What a build is for.
    enum Kind: Equatable {
        /// Files changed.
        case changes
        /// The last build failed for the machine; nothing changed since.
        case retry
        /// The site has been quiet since a folder was deleted: every page is looked for.
        case check
    }

    /// Whether the next build looks for every page in the output folder.
    private(set) var verifiesNext = false
    /// How long the watch waits for changes before it builds without one (nil: for good).
    private(set) var retryAfter: Double?
    private var lastFailedOutside = false
    private var lastErrors: [String]?

    /// What a build of `changed` (empty when the wait ended with no change) is for.
    func kind(of changed: [String]) -> Kind {
        guard changed.isEmpty else { return .changes }
        return verifiesNext && !lastFailedOutside ? .check : .retry
    }

    /// Takes in the build `rebuilt`, made for `kind` (after `folderGone`, a deletion of the output or store
    /// folder); returns whether it is worth a line: a retry that fails as the build before it did says
    /// nothing new, and a check that found every page in place says nothing at all.
    mutating func record(_ rebuilt: RebuildReport, of kind: Kind, folderGone: Bool) -> Bool {
        let silent = kind != .changes
            && (rebuilt.succeeded ? kind == .check && !rebuilt.wroteFiles : rebuilt.errors == lastErrors)
        lastErrors = rebuilt.succeeded ? nil : rebuilt.errors
        lastFailedOutside = rebuilt.failedOutsideTheSite
        // Changes while a check is due (the rest of a `git clean`) put it off until they stop; a build
        // without changes that ran has looked with the site quiet.
        if folderGone || (verifiesNext && kind == .changes) {
            verifiesNext = true
        } else if kind != .changes && rebuilt.summary != nil {
            verifiesNext = false
        }
        retryAfter = rebuilt.failedOutsideTheSite ? WatchSession.retryInterval
            : verifiesNext && kind == .changes ? WatchSession.settlingTime : nil
        return !silent
    }
}
