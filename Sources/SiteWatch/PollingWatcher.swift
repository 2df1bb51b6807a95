import Foundation
import SiteBuild

/// The watcher for any system: walks the watched folders and the root every `pollInterval` and compares each
/// path's status (kind, size, modification and change times, inode) with the last walk's.
///
/// It reports what `InotifyWatcher` reports, with the same rules for names, folders and batches, but sees a
/// file only if it lives across a walk: one made and deleted between two walks is no change, even a quiet one.
/// A walk costs a listing per folder and an `lstat` per file (a quarter second for 50,000 files here), so the
/// next waits at least four times as long as the last took: polling a large site uses at most a fifth of a
/// core (13% measured at 50,000 files), and sees a change within about six walks' time (decisions.md 41d).
///
/// ```swift
/// let watcher = try PollingWatcher(FileWatcher.Configuration(root: site, folders: ["content"], files: ["sitegen.yml"]))
/// while let changed = try watcher.nextBatch() { print(changed) }   // until watcher.stop()
/// ```
public final class PollingWatcher: ChangeWatcher, @unchecked Sendable {
    public private(set) var configuration: FileWatcher.Configuration

    /// What a walk records of one path.
    private struct EntryStatus: Equatable {
        var isFolder: Bool
        var size: Int64
        var modified: Double
        var changed: Double
        var inode: UInt64
    }

    /// What one walk found.
    private struct Walk {
        /// Every path that counts, relative to the root (absolute outside it).
        var entries: [String: EntryStatus] = [:]
        /// Files whose names never start a build, hidden ones aside (`takeQuietChanges()`).
        var quiet: [String: EntryStatus] = [:]
        /// The ignored folders at the top of the root (the output, the store) that are there: their deletion counts.
        var builtFolders = Set<String>()
        /// Folders walked, by device and inode: one reached under two names (a link) is walked once.
        var visited = Set<[UInt64]>()
    }

    private let wakePipe: WakePipe
    private let rootPath: String
    private let ignoredPaths: [String]
    /// Where relative paths are, and which are left alone.
    private let root: WatchedRoot
    /// The folders outside the root that were there at the last `watch(folders:files:)`, as `InotifyWatcher`
    /// watches them: one made later is watched from the next call.
    private var outsideFolders: [String] = []
    private var last = Walk()
    private var nextWalk = 0.0
    private var stopped = false
    private var quietChanges = Set<String>()

    /// Starts watching at once: the first walk is made now, and changes after it are in the next batch.
    public init(_ configuration: FileWatcher.Configuration) throws {
        self.configuration = configuration
        wakePipe = try WakePipe()
        rootPath = resolvedPath(configuration.root.path)
        ignoredPaths = configuration.ignoredPaths
        root = WatchedRoot(path: rootPath, ignoredPaths: configuration.ignoredPaths)
        outsideFolders = existingOutsideFolders()
        last = timedWalk()
    }

    public func nextBatch(retryAfter: Double?, whenQuiet: (seconds: Double, action: () -> Void)?) throws -> [String]? {
        guard !stopped else { return nil }
        return try PendingBatch.collect(quietPeriod: configuration.quietPeriod, maximumDelay: configuration.maximumDelay,
                                        retryAfter: retryAfter, whenQuiet: whenQuiet, exists: root.exists) { batch, deadline in
            try waitAndWalk(into: &batch, until: deadline)
        }
    }

    /// Sleeps until the next walk is due or `deadline` comes, walks, and adds what changed to `batch`; walks
    /// again until something counts or the deadline passes. A deadline is always met by a walk, so that a
    /// batch is handed out only once a walk has seen the site quiet.
    private func waitAndWalk(into batch: inout PendingBatch, until deadline: Double?) throws -> PendingBatch.WaitOutcome {
        while true {
            let wakeAt = deadline.map { min($0, nextWalk) } ?? nextWalk
            if try waitForInput([wakePipe.readEnd], milliseconds: pollTimeout(until: wakeAt))[0] {
                stopped = true
                return .stopped
            }
            let walk = timedWalk()
            let counted = compare(last, with: walk, into: &batch)
            last = walk
            if counted { return .changed }
            if let deadline, monotonicNow() >= deadline { return .nothing }
        }
    }

    public func watch(folders: [String], files: [String]) throws {
        let before = (folders: configuration.folders, files: configuration.files, outside: outsideFolders)
        configuration.files += files.filter { !configuration.files.contains($0) }
        configuration.folders += folders.filter { !configuration.folders.contains($0) }
        outsideFolders = existingOutsideFolders()
        // A watch calls this after every build: with nothing new to watch, there is no walk to make.
        guard configuration.folders != before.folders || configuration.files != before.files || outsideFolders != before.outside else { return }
        // What is watched from now on is taken as it is; what was watched before keeps its last walk, so that
        // changes made there since are still seen.
        let wasWatched = { Self.isWatched($0, folders: before.folders, files: before.files, outside: before.outside) }
        let walk = self.walk()
        for (path, status) in walk.entries where last.entries[path] == nil && !wasWatched(path) { last.entries[path] = status }
        for (path, status) in walk.quiet where last.quiet[path] == nil && !wasWatched(path) { last.quiet[path] = status }
    }

    public func unwatch(folders: [String], files: [String]) {
        configuration.files.removeAll { files.contains($0) }
        configuration.folders.removeAll { folders.contains($0) }
        outsideFolders = outsideFolders.filter { FileWatcher.covers(configuration.folders, $0) }
        // Forgotten without a word: a path no longer watched neither changes nor vanishes.
        last.entries = last.entries.filter { isWatched($0.key) }
        last.quiet = last.quiet.filter { isWatched($0.key) }
    }

    public func takeQuietChanges() -> Set<String> {
        defer { quietChanges = [] }
        return quietChanges
    }

    public func stop() {
        wakePipe.wake()
    }

    /// Adds to `batch` what changed from `old` to `new`, and notes quiet changes; returns whether anything counts.
    private func compare(_ old: Walk, with new: Walk, into batch: inout PendingBatch) -> Bool {
        var counted = false
        for (path, status) in new.entries {
            guard let before = old.entries[path] else {
                batch.add(path, appeared: true)
                counted = true
                continue
            }
            // A folder's own times change with what it holds; those changes are its files'.
            if before != status && !(before.isFolder && status.isFolder) {
                batch.add(path)
                counted = true
            }
        }
        // A folder gone is one change, as inotify tells a folder moved away: what it held went with it (a
        // build drops a vanished folder's sources by its path), and a batch need not name its every file.
        for path in old.entries.keys where new.entries[path] == nil && !Self.parentVanished(path, old: old, new: new) {
            batch.add(path)
            counted = true
        }
        // The output folder (or the store's) deleted while watching: the next build makes it again.
        for name in old.builtFolders.subtracting(new.builtFolders) {
            batch.add(name)
            counted = true
        }
        for (path, status) in new.quiet where old.quiet[path] != status { quietChanges.insert(path) }
        for path in old.quiet.keys where new.quiet[path] == nil { quietChanges.insert(path) }
        return counted
    }

    /// Whether the folder holding `path` was there at the `old` walk and is gone at the `new` one.
    private static func parentVanished(_ path: String, old: Walk, new: Walk) -> Bool {
        guard let slash = path.lastIndex(of: "/") else { return false }
        let parent = String(path[..<slash])
        return old.entries[parent]?.isFolder == true && new.entries[parent] == nil
    }

    /// A walk, after which the next is due in `pollInterval`, or four times the walk's time if that is longer.
    private func timedWalk() -> Walk {
        let start = monotonicNow()
        let walk = self.walk()
        let end = monotonicNow()
        nextWalk = end + max(configuration.pollInterval, 4 * (end - start))
        return walk
    }

    /// Everything watched now: the root's files and folders that the configuration names, the folders under
    /// those, and the folders outside the root.
    private func walk() -> Walk {
        var walk = Walk()
        for name in Self.names(in: rootPath) {
            guard let status = Self.status(of: rootPath + "/" + name) else { continue }
            if status.isFolder {
                if ignoredPaths.contains(name) {
                    walk.builtFolders.insert(name)
                } else if FileWatcher.matches(name, configuration.folders) {
                    walk.entries[name] = status
                    walkFolder(name, into: &walk)
                }
            } else if FileWatcher.matches(name, configuration.files) {
                if configuration.files.contains(name) || !ChangeFilter.ignores(name: name) {
                    walk.entries[name] = status
                } else if !name.hasPrefix(".") {
                    walk.quiet[name] = status
                }
            }
        }
        for folder in outsideFolders { walkFolder(folder, into: &walk) }
        return walk
    }

    /// Adds what the folder at `path` (relative to the root, or absolute) holds to `walk`, folders inside it
    /// included; hidden folders and the ignored ones are passed over, as `InotifyWatcher` passes them.
    private func walkFolder(_ path: String, into walk: inout Walk) {
        var folderStatus = stat()
        guard stat(root.location(of: path), &folderStatus) == 0,
              walk.visited.insert([UInt64(folderStatus.st_dev), UInt64(folderStatus.st_ino)]).inserted else { return }
        for name in Self.names(in: root.location(of: path)) {
            let child = path + "/" + name
            guard !root.ignores(child), let status = Self.status(of: root.location(of: child)) else { continue }
            if status.isFolder {
                guard !name.hasPrefix(".") else { continue }
                walk.entries[child] = status
                walkFolder(child, into: &walk)
            } else if !ChangeFilter.ignores(name: name) {
                walk.entries[child] = status
            } else if !name.hasPrefix(".") {
                walk.quiet[child] = status
            }
        }
    }

    /// The status of the file at `path`, a link's own unless it leads to a folder (a build reads through it); nil when gone.
    private static func status(of path: String) -> EntryStatus? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        var target = stat()
        if status.st_mode & S_IFMT == S_IFLNK, stat(path, &target) == 0, target.st_mode & S_IFMT == S_IFDIR { status = target }
        return EntryStatus(isFolder: status.st_mode & S_IFMT == S_IFDIR, size: Int64(status.st_size),
                           modified: Self.seconds(status.modificationTime), changed: Self.seconds(status.changeTime),
                           inode: UInt64(status.st_ino))
    }

    private static func seconds(_ time: timespec) -> Double {
        Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The names in the folder at `path`, sorted; none when it cannot be read.
    private static func names(in path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// The absolute folders of the configuration that are folders now.
    private func existingOutsideFolders() -> [String] {
        configuration.folders.filter { path in
            var status = stat()
            return path.hasPrefix("/") && stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
        }
    }

    /// Whether `path` (relative, or absolute) is under what the configuration names now.
    private func isWatched(_ path: String) -> Bool {
        Self.isWatched(path, folders: configuration.folders, files: configuration.files, outside: outsideFolders)
    }

    /// Whether `path` (relative, or absolute) is under `folders` or `outside`, or is one of `files` at the top.
    private static func isWatched(_ path: String, folders: [String], files: [String], outside: [String]) -> Bool {
        if path.hasPrefix("/") { return outside.contains { path.hasPrefix($0 + "/") } }
        let top = String(path.prefix { $0 != "/" })
        return (top == path && FileWatcher.matches(top, files)) || FileWatcher.matches(top, folders)
    }



}
