import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Watches folders of a site (recursively, folders created later included) and files at its top, and hands out
/// the changed paths in debounced batches: one batch per burst of edits, so one build per save.
///
/// ```swift
/// let watcher = try FileWatcher(FileWatcher.Configuration(root: site, folders: ["content"], files: ["sitegen.yml"]))
/// while let changed = try watcher.nextBatch() { print(changed) }   // until watcher.stop()
/// ```
///
/// `nextBatch()` is meant for one thread; `stop()` may be called from any other.
public final class FileWatcher: @unchecked Sendable {
    /// What to watch and how long to wait for quiet.
    public struct Configuration: Sendable {
        /// The folder the paths are relative to.
        public var root: URL
        /// Names of folders directly in `root`, watched with everything under them; they may appear or vanish
        /// later. A name with `*`, `?` or `[` is a pattern (`fnmatch`) for every folder it matches, hidden ones aside.
        /// An absolute path names a folder outside `root`, watched while it exists (one made later is watched
        /// from the next `watch(folders:files:)`); its changes are reported as absolute paths.
        public var folders: [String]
        /// Names (or patterns, as for `folders`) of files directly in `root`; watched through the root folder so
        /// an editor's save-by-rename is seen.
        public var files: [String]
        /// Folders whose changes never count (the build's output and store), wherever they are.
        public var ignoredFolders: [URL]

        /// The ignored folders inside `root`, by their paths from it: the names events give them there. Either
        /// may be named through a symbolic link (a site reached through one): both are compared as written and
        /// as resolved.
        public var ignoredPaths: [String] {
            let rootPaths = Set([root.standardizedFileURL.path, resolvedPath(root.path)])
            var paths: [String] = []
            for folder in ignoredFolders {
                for path in Set([folder.standardizedFileURL.path, resolvedPath(folder.path)]) {
                    for rootPath in rootPaths where path.hasPrefix(rootPath + "/") {
                        let relative = String(path.dropFirst(rootPath.count + 1))
                        if !paths.contains(relative) { paths.append(relative) }
                    }
                }
            }
            return paths
        }
        /// How long no change must arrive before a batch is handed out, in seconds.
        public var quietPeriod: Double
        /// The longest a batch waits after its first change, so a constant stream of changes still builds.
        public var maximumDelay: Double

        /// Describes a watch of `folders` and `files` under `root`; the defaults suit an editor's saves.
        public init(root: URL, folders: [String], files: [String], ignoredFolders: [URL] = [],
                    quietPeriod: Double = 0.1, maximumDelay: Double = 1.0) {
            self.root = root
            self.folders = folders
            self.files = files
            self.ignoredFolders = ignoredFolders
            self.quietPeriod = quietPeriod
            self.maximumDelay = maximumDelay
        }
    }

    /// The path in a batch that says events were lost (the kernel's queue overflowed): anything may have changed.
    public static let eventsLost = "(events lost; rebuilding everything)"

    /// What this watcher was asked to watch, with what `watch(folders:files:)` added since.
    public private(set) var configuration: Configuration

    #if canImport(Glibc)
    private let inotify: Inotify
    private let wakePipe: WakePipe
    private let rootPath: String
    private let ignoredPaths: [String]
    private var rootWatch: Int32 = -1
    /// Each watched folder by its watch, as a path relative to the root.
    private var folderByWatch: [Int32: String] = [:]
    /// The watched folders reached through a symbolic link, relative to the root: the link's deletion is no
    /// folder's, and takes their watches along.
    private var linkedFolders = Set<String>()
    private var stopped = false
    /// Files changed since the last `takeQuietChanges()` whose names never start a build.
    private var quietChanges = Set<String>()

    private static let folderEvents = IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK
    private static let rootEvents = IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
        | IN_ONLYDIR | IN_EXCL_UNLINK
    #endif

    /// Starts watching at once: changes made after this returns are in the next batch, even during a build.
    public init(_ configuration: Configuration) throws {
        self.configuration = configuration
        #if canImport(Glibc)
        inotify = try Inotify()
        wakePipe = try WakePipe()
        // A site reached through a symbolic link is watched where it is: inotify does not follow links (a
        // link's own events are not its folder's), and events name files after the folder watched.
        let rootPath = resolvedPath(configuration.root.path)
        self.rootPath = rootPath
        ignoredPaths = configuration.ignoredPaths
        rootWatch = try inotify.addWatch(rootPath, mask: Self.rootEvents)
        try watchFolders(configuration.folders)
        #else
        throw WatchError.unsupportedPlatform
        #endif
    }

    /// Blocks until changes arrive and then quiet lasts `quietPeriod` (or `maximumDelay` has passed since the
    /// first); returns the changed paths relative to the root, sorted, or nil once `stop()` was called. With
    /// `retryAfter`, returns an empty batch when that many seconds pass with nothing changed. With `whenQuiet`,
    /// runs its action once when its seconds pass with nothing changed, and waits on.
    public func nextBatch(retryAfter: Double? = nil, whenQuiet: (seconds: Double, action: () -> Void)? = nil) throws -> [String]? {
        #if canImport(Glibc)
        var changed = Set<String>(), created = Set<String>()
        var firstChange = 0.0, lastChange = 0.0
        let retryAt = retryAfter.map { Self.now() + $0 }
        var quietAt = whenQuiet.map { Self.now() + $0.seconds }
        while !stopped {
            var timeout: Int32 = -1
            if changed.isEmpty, let due = [retryAt, quietAt].compactMap({ $0 }).min() {
                let now = Self.now()
                if let retryAt, now >= retryAt { return [] }
                if let at = quietAt, now >= at {
                    whenQuiet?.action()
                    quietAt = nil
                    continue
                }
                timeout = Int32(((due - now) * 1_000).rounded(.up))
            }
            if !changed.isEmpty {
                let now = Self.now()
                let due = min(lastChange + configuration.quietPeriod, firstChange + configuration.maximumDelay)
                if now >= due {
                    // A file made and removed within the batch (sed -i's sedXXXXXX, an editor's scratch file)
                    // changed nothing; a batch of only such files builds nothing.
                    let batch = changed.filter { !created.contains($0) || exists($0) }
                    if !batch.isEmpty { return batch.sorted() }
                    changed = []
                    created = []
                    firstChange = 0
                    continue
                }
                timeout = Int32(((due - now) * 1_000).rounded(.up))
            }
            let (eventsReady, stopRequested) = try waitForInput(inotify.descriptor, wakePipe.readEnd, milliseconds: timeout)
            if stopRequested {
                stopped = true
                break
            }
            guard eventsReady else { continue }
            var relevant = false
            for event in try inotify.readEvents() where handle(event, into: &changed, created: &created) { relevant = true }
            if relevant {
                // Quiet is measured from the last change that counts: a swap file's writes do not hold a build back.
                let now = Self.now()
                if firstChange == 0 { firstChange = now }
                lastChange = now
            }
        }
        return nil
        #else
        throw WatchError.unsupportedPlatform
        #endif
    }

    /// Watches `folders` and `files` (named as in `Configuration`) too, from now on; those already watched are
    /// left as they are. Call it from the thread that calls `nextBatch()`, between batches.
    public func watch(folders: [String], files: [String]) throws {
        let newFolders = folders.filter { !configuration.folders.contains($0) }
        configuration.files += files.filter { !configuration.files.contains($0) }
        configuration.folders += newFolders
        #if canImport(Glibc)
        // A folder outside the root has no watched parent to see it made: it is looked for again each time.
        let watched = Set(folderByWatch.values)
        let missing = configuration.folders.filter { $0.hasPrefix("/") && !newFolders.contains($0) && !watched.contains($0) }
        try watchFolders(newFolders + missing)
        #endif
    }

    /// Stops watching `folders` and `files` (named as they were given), except what another name still
    /// watched covers. Call it from the thread that calls `nextBatch()`, between batches.
    public func unwatch(folders: [String], files: [String]) {
        configuration.files.removeAll { files.contains($0) }
        configuration.folders.removeAll { folders.contains($0) }
        #if canImport(Glibc)
        let tops = Set(folderByWatch.values.map { $0.hasPrefix("/") ? $0 : String($0.prefix { $0 != "/" }) })
        for top in tops where Self.covers(folders, top) && !Self.covers(configuration.folders, top) {
            unwatchTree(top)
        }
        #endif
    }

    /// The files (relative to the root, or absolute) changed since the last call whose names never start a
    /// build (`ChangeFilter`), hidden ones aside: a source pattern may still match them. Call it from the thread
    /// that calls `nextBatch()`.
    public func takeQuietChanges() -> Set<String> {
        #if canImport(Glibc)
        defer { quietChanges = [] }
        return quietChanges
        #else
        return []
        #endif
    }

    /// Makes the blocked (or next) `nextBatch()` return nil; safe from any thread.
    public func stop() {
        #if canImport(Glibc)
        wakePipe.wake()
        #endif
    }

    #if canImport(Glibc)
    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Adds what `event` changed to `changed`, and to `created` when it made the path appear; returns whether it
    /// counts (false for ignored names and folders).
    private func handle(_ event: InotifyEvent, into changed: inout Set<String>, created: inout Set<String>) -> Bool {
        if event.has(IN_Q_OVERFLOW) {
            // Events were lost: watch every folder again (adding an existing watch is harmless) and build anyway.
            try? watchFolders(configuration.folders)
            changed.insert(Self.eventsLost)
            return true
        }
        if event.has(IN_IGNORED) {
            folderByWatch[event.watch] = nil
            return false
        }
        let appeared = event.has(IN_CREATE) || event.has(IN_MOVED_TO)
        let vanished = event.has(IN_DELETE) || event.has(IN_MOVED_FROM)
        // A link to a folder is a folder here, as a build reads through it; once gone, it is one if it was watched.
        let linkPath = event.watch == rootWatch ? event.name : folderByWatch[event.watch].map { $0 + "/" + event.name }
        let isFolder = event.has(IN_ISDIR) || linkPath.map { appeared ? isFolderLink($0) : vanished && linkedFolders.contains($0) } == true
        let path: String
        if event.watch == rootWatch {
            if !isFolder && Self.matches(event.name, configuration.files) {
                guard configuration.files.contains(event.name) || !ChangeFilter.ignores(name: event.name) else {
                    noteQuiet(event.name)
                    return false
                }
                if appeared && !changed.contains(event.name) { created.insert(event.name) }
                changed.insert(event.name)
                return true
            }
            // The output folder (or the store's) deleted or moved away while watching: the next build makes it
            // again, rather than the next save.
            if isFolder && vanished && ignoredPaths.contains(event.name) {
                changed.insert(event.name)
                return true
            }
            guard isFolder && Self.matches(event.name, configuration.folders) else { return false }
            path = event.name
        } else {
            // A folder's own deletion or move is seen, and handled, as an event of its parent.
            guard let folder = folderByWatch[event.watch], !event.name.isEmpty else { return false }
            // Only hidden folders are ignored: a source pattern walks into `old~` or `4913` as into any other.
            guard isFolder ? !event.name.hasPrefix(".") : !ChangeFilter.ignores(name: event.name) else {
                if !isFolder { noteQuiet(folder + "/" + event.name) }
                return false
            }
            path = folder + "/" + event.name
        }
        guard !isIgnored(path) else { return false }
        // Made in this batch only if that is the first thing that happened to it: a file deleted and made
        // again, then deleted, was there before and is gone.
        if appeared && !changed.contains(path) { created.insert(path) }
        if isFolder && appeared {
            // Files may have been written into the folder before its watch existed: they count as changed. Whether
            // a path inside is reported by an event or by this scan depends on timing; either way it is there once.
            changed.insert(path)
            for file in (try? watchTree(path)) ?? [] { changed.insert(file) }
        } else if isFolder && vanished {
            unwatchTree(path)
            linkedFolders.remove(path)
            changed.insert(path)
        } else if !isFolder {
            changed.insert(path)
        }
        return true
    }

    /// Notes a change of a file whose name never starts a build (an editor's backup or lock file), unless it
    /// is hidden or in an ignored folder: a build may still want to know it changed (`takeQuietChanges()`).
    private func noteQuiet(_ path: String) {
        guard !(path.split(separator: "/").last ?? "").hasPrefix("."), !isIgnored(path) else { return }
        quietChanges.insert(path)
    }

    /// Whether `name` is one of `names`, or matches one that is a pattern.
    private static func matches(_ name: String, _ names: [String]) -> Bool {
        names.contains { $0 == name || (isPattern($0) && fnmatch($0, name, FNM_PERIOD) == 0) }
    }

    /// Whether the folder `path` (a name in the root, or an absolute path) is one of `folders`, matches one of
    /// their patterns, or is under one of them.
    private static func covers(_ folders: [String], _ path: String) -> Bool {
        path.hasPrefix("/") ? folders.contains { path == $0 || path.hasPrefix($0 + "/") } : matches(path, folders)
    }

    private static func isPattern(_ name: String) -> Bool {
        name.contains { "*?[".contains($0) }
    }

    /// Watches each of `folders` (named as in `Configuration`) that is there, with everything under it; one
    /// that cannot be watched (no permission, no inotify watches left) does not keep the others from it, and
    /// the first such error is thrown once they are all watched.
    private func watchFolders(_ folders: [String]) throws {
        let patterns = folders.filter(Self.isPattern)
        var names = folders.filter { !Self.isPattern($0) }
        if !patterns.isEmpty {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: rootPath)) ?? [] where Self.matches(name, patterns) {
                var status = stat()
                if stat(rootPath + "/" + name, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { names.append(name) }
            }
        }
        var firstError: Error?
        for name in names {
            do {
                _ = try watchTree(name)
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }

    /// Whether `path` (relative to the root, or absolute) is a symbolic link to a folder.
    private func isFolderLink(_ path: String) -> Bool {
        var status = stat()
        guard lstat(location(of: path), &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return false }
        return stat(location(of: path), &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    private func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(location(of: path), &status) == 0
    }

    /// Where `path` (relative to the root, or absolute) is.
    private func location(of path: String) -> String {
        path.hasPrefix("/") ? path : rootPath + "/" + path
    }

    private func isIgnored(_ path: String) -> Bool {
        ignoredPaths.contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    /// Watches the folder at `relative` and every folder under it; returns the files and folders found in it,
    /// relative to the root.
    private func watchTree(_ relative: String) throws -> [String] {
        guard !isIgnored(relative) else { return [] }
        let absolute = location(of: relative)
        let watch: Int32
        do {
            // A linked folder is watched where the link leads (see `init`).
            watch = try inotify.addWatch(resolvedPath(absolute), mask: Self.folderEvents)
        } catch let error as WatchError {
            // Gone again, or not a folder: its parent's events will say what happened.
            if case .system(_, _, let code) = error, code == ENOENT || code == ENOTDIR { return [] }
            throw error
        }
        // A folder watched already by another name (a link to a folder of the site, or to one this one is
        // in) is watched once, under its first name: a link to a folder above it would never end.
        if watch == rootWatch || folderByWatch[watch].map({ $0 != relative }) == true { return [] }
        folderByWatch[watch] = relative
        if isFolderLink(relative) { linkedFolders.insert(relative) }
        var files: [String] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: absolute)) ?? []
        for name in names.sorted() where !name.hasPrefix(".") {
            let child = relative + "/" + name
            var status = stat()
            guard lstat(location(of: child), &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR || isFolderLink(child) {
                files.append(child)
                files += try watchTree(child)
            } else if !ChangeFilter.ignores(name: name) {
                files.append(child)
            }
        }
        return files
    }

    private func unwatchTree(_ relative: String) {
        for (watch, folder) in folderByWatch where folder == relative || folder.hasPrefix(relative + "/") {
            inotify.removeWatch(watch)
            folderByWatch[watch] = nil
        }
        linkedFolders = linkedFolders.filter { $0 != relative && !$0.hasPrefix(relative + "/") }
    }
    #endif
}

/// `path` with every symbolic link in it resolved, or as it is (standardized) when it does not exist.
func resolvedPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return URL(fileURLWithPath: path).standardizedFileURL.path }
    defer { free(resolved) }
    return String(cString: resolved)
}
