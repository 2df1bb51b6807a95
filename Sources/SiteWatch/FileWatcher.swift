import Foundation

/// What `watch` and `serve` need from a file watcher: batches of the paths changed under a site, one batch per
/// burst of edits, and a call when the site has been quiet for a while. Two implementations: `InotifyWatcher`
/// (Linux's change notifications) and `PollingWatcher` (a walk of the watched folders at an interval, on any
/// system); `FileWatcher.make(_:kind:)` picks one. A kqueue or FSEvents watcher for macOS would be a third,
/// sharing the batching (`PendingBatch`) and the naming rules (`FileWatcher.Configuration`) with these two.
///
/// ```swift
/// let watcher = try FileWatcher.make(FileWatcher.Configuration(root: site, folders: ["content"], files: ["sitegen.yml"]))
/// while let changed = try watcher.nextBatch() { print(changed) }   // until watcher.stop()
/// ```
///
/// `nextBatch`, `watch`, `unwatch` and `takeQuietChanges` are meant for one thread; `stop()` may be called from any other.
public protocol ChangeWatcher: AnyObject, Sendable {
    /// What this watcher was asked to watch, with what `watch(folders:files:)` added since.
    var configuration: FileWatcher.Configuration { get }

    /// Blocks until changes arrive and then quiet lasts `quietPeriod` (or `maximumDelay` has passed since the
    /// first); returns the changed paths relative to the root (absolute outside it), sorted, or nil once
    /// `stop()` was called. With `retryAfter`, returns an empty batch when that many seconds pass with nothing
    /// changed. With `whenQuiet`, runs its action once when its seconds pass with nothing changed, and waits on.
    func nextBatch(retryAfter: Double?, whenQuiet: (seconds: Double, action: () -> Void)?) throws -> [String]?

    /// Watches `folders` and `files` (named as in `Configuration`) too, from now on; those already watched are
    /// left as they are, and a folder outside the root made since the last call is watched now.
    func watch(folders: [String], files: [String]) throws

    /// Stops watching `folders` and `files` (named as they were given), except what another name still
    /// watched covers.
    func unwatch(folders: [String], files: [String])

    /// The files (relative to the root, or absolute) changed since the last call whose names never start a
    /// build (`ChangeFilter`), hidden ones aside: a source pattern may still match them.
    func takeQuietChanges() -> Set<String>

    /// Makes the blocked (or next) `nextBatch` return nil; safe from any thread.
    func stop()
}

extension ChangeWatcher {
    /// The next batch, waiting as long as it takes (`nextBatch(retryAfter:whenQuiet:)` without either).
    public func nextBatch() throws -> [String]? {
        try nextBatch(retryAfter: nil, whenQuiet: nil)
    }
}

/// The watchers' shared vocabulary: what to watch (`Configuration`), which implementation (`Kind`), and the
/// factory that makes one.
public enum FileWatcher {
    /// The path in a batch that says events were lost (the kernel's queue overflowed): anything may have changed.
    public static let eventsLost = "(events lost; rebuilding everything)"

    /// The environment variable that picks the watcher: `poll` for `PollingWatcher`, `native` for the system's
    /// notifications (the default where sitegen has them: Linux). Tests set it to run the watch tests on both.
    public static let kindVariable = "SITEGEN_WATCHER"

    /// Which implementation watches.
    public enum Kind: String, Sendable, CaseIterable {
        /// The system's change notifications: inotify on Linux. Elsewhere none is written yet, and this is polling.
        case native
        /// Walks the watched folders every `Configuration.pollInterval` and compares what it finds: any
        /// system, any file system (a network mount whose changes made elsewhere inotify never hears of).
        case poll

        /// The kind `SITEGEN_WATCHER` names, else `native`.
        public static func fromEnvironment() throws -> Kind {
            guard let name = ProcessInfo.processInfo.environment[FileWatcher.kindVariable], !name.isEmpty else { return .native }
            guard let kind = Kind(rawValue: name) else { throw WatchError.unknownWatcher(name) }
            return kind
        }
    }

    /// A watcher of `kind`, watching from now on: changes made after this returns are in its next batch.
    public static func make(_ configuration: Configuration, kind: Kind) throws -> any ChangeWatcher {
        #if os(Linux)
        if kind == .native { return try InotifyWatcher(configuration) }
        #endif
        return try PollingWatcher(configuration)
    }

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
        /// How long no change must arrive before a batch is handed out, in seconds.
        public var quietPeriod: Double
        /// The longest a batch waits after its first change, so a constant stream of changes still builds.
        public var maximumDelay: Double
        /// How often a `PollingWatcher` walks the folders, in seconds (at least four times a walk's own time).
        public var pollInterval: Double

        /// Describes a watch of `folders` and `files` under `root`; the defaults suit an editor's saves.
        public init(root: URL, folders: [String], files: [String], ignoredFolders: [URL] = [],
                    quietPeriod: Double = 0.1, maximumDelay: Double = 1.0, pollInterval: Double = 0.25) {
            self.root = root
            self.folders = folders
            self.files = files
            self.ignoredFolders = ignoredFolders
            self.quietPeriod = quietPeriod
            self.maximumDelay = maximumDelay
            self.pollInterval = pollInterval
        }

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
    }

    /// Whether `name` is one of `names`, or matches one that is a pattern.
    static func matches(_ name: String, _ names: [String]) -> Bool {
        names.contains { $0 == name || (isPattern($0) && fnmatch($0, name, FNM_PERIOD) == 0) }
    }

    /// Whether the folder `path` (a name in the root, or an absolute path) is one of `folders`, matches one of
    /// their patterns, or is under one of them.
    static func covers(_ folders: [String], _ path: String) -> Bool {
        path.hasPrefix("/") ? folders.contains { path == $0 || path.hasPrefix($0 + "/") } : matches(path, folders)
    }

    /// Whether a folder or file name given to watch is a pattern rather than a name.
    static func isPattern(_ name: String) -> Bool {
        name.contains { "*?[".contains($0) }
    }
}

/// `path` with every symbolic link in it resolved, or as it is (standardized) when it does not exist.
func resolvedPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return URL(fileURLWithPath: path).standardizedFileURL.path }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// The watched site's folder as both watchers name paths in it: relative to it, or absolute.
struct WatchedRoot: Sendable {
    /// The folder's real path.
    let path: String
    /// Paths (relative to the folder) never reported, nor anything inside them.
    let ignoredPaths: [String]

    /// Where `path` (relative to the folder, or absolute) is.
    func location(of path: String) -> String {
        path.hasPrefix("/") ? path : self.path + "/" + path
    }

    /// Whether anything is at `path` (a link counts, wherever it points).
    func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(location(of: path), &status) == 0
    }

    /// Whether `path` is an ignored path or inside one.
    func ignores(_ path: String) -> Bool {
        ignoredPaths.contains { path == $0 || path.hasPrefix($0 + "/") }
    }
}
