#if os(Linux)
import Foundation
import Glibc

/// The watcher on Linux: inotify watches on the site's folders (recursively, folders created later included)
/// and on its root for the files at its top, read as events.
///
/// ```swift
/// let watcher = try InotifyWatcher(FileWatcher.Configuration(root: site, folders: ["content"], files: ["sitegen.yml"]))
/// while let changed = try watcher.nextBatch() { print(changed) }   // until watcher.stop()
/// ```
public final class InotifyWatcher: ChangeWatcher, @unchecked Sendable {
    public private(set) var configuration: FileWatcher.Configuration

    private let inotify: Inotify
    private let wakePipe: WakePipe
    private let rootPath: String
    private let ignoredPaths: [String]
    /// Where relative paths are, and which are left alone.
    private let root: WatchedRoot
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

    /// Starts watching at once: changes made after this returns are in the next batch, even during a build.
    public init(_ configuration: FileWatcher.Configuration) throws {
        self.configuration = configuration
        inotify = try Inotify()
        wakePipe = try WakePipe()
        // A site reached through a symbolic link is watched where it is: inotify does not follow links (a
        // link's own events are not its folder's), and events name files after the folder watched.
        let rootPath = resolvedPath(configuration.root.path)
        self.rootPath = rootPath
        ignoredPaths = configuration.ignoredPaths
        root = WatchedRoot(path: rootPath, ignoredPaths: configuration.ignoredPaths)
        rootWatch = try inotify.addWatch(rootPath, mask: Self.rootEvents)
        try watchFolders(configuration.folders)
    }

    public func nextBatch(retryAfter: Double?, whenQuiet: (seconds: Double, action: () -> Void)?) throws -> [String]? {
        guard !stopped else { return nil }
        return try PendingBatch.collect(quietPeriod: configuration.quietPeriod, maximumDelay: configuration.maximumDelay,
                                        retryAfter: retryAfter, whenQuiet: whenQuiet, exists: root.exists) { batch, deadline in
            let ready = try waitForInput([inotify.descriptor, wakePipe.readEnd], milliseconds: pollTimeout(until: deadline))
            if ready[1] {
                stopped = true
                return .stopped
            }
            guard ready[0] else { return .nothing }
            var relevant = false
            for event in try inotify.readEvents() where handle(event, into: &batch) { relevant = true }
            return relevant ? .changed : .nothing
        }
    }

    /// Watches `folders` and `files` (named as in `Configuration`) too, from now on; those already watched are
    /// left as they are. Call it from the thread that calls `nextBatch()`, between batches.
    public func watch(folders: [String], files: [String]) throws {
        let newFolders = folders.filter { !configuration.folders.contains($0) }
        configuration.files += files.filter { !configuration.files.contains($0) }
        configuration.folders += newFolders
        // A folder outside the root has no watched parent to see it made: it is looked for again each time.
        let watched = Set(folderByWatch.values)
        let missing = configuration.folders.filter { $0.hasPrefix("/") && !newFolders.contains($0) && !watched.contains($0) }
        try watchFolders(newFolders + missing)
    }

    /// Stops watching `folders` and `files` (named as they were given), except what another name still
    /// watched covers. Call it from the thread that calls `nextBatch()`, between batches.
    public func unwatch(folders: [String], files: [String]) {
        configuration.files.removeAll { files.contains($0) }
        configuration.folders.removeAll { folders.contains($0) }
        let tops = Set(folderByWatch.values.map { $0.hasPrefix("/") ? $0 : String($0.prefix { $0 != "/" }) })
        for top in tops where FileWatcher.covers(folders, top) && !FileWatcher.covers(configuration.folders, top) {
            unwatchTree(top)
        }
    }

    /// The files (relative to the root, or absolute) changed since the last call whose names never start a
    /// build (`ChangeFilter`), hidden ones aside: a source pattern may still match them. Call it from the thread
    /// that calls `nextBatch()`.
    public func takeQuietChanges() -> Set<String> {
        defer { quietChanges = [] }
        return quietChanges
    }

    /// Makes the blocked (or next) `nextBatch()` return nil; safe from any thread.
    public func stop() {
        wakePipe.wake()
    }

    /// Adds what `event` changed to `batch`; returns whether it counts (false for ignored names and folders).
    private func handle(_ event: InotifyEvent, into batch: inout PendingBatch) -> Bool {
        if event.has(IN_Q_OVERFLOW) {
            // Events were lost: watch every folder again (adding an existing watch is harmless) and build anyway.
            try? watchFolders(configuration.folders)
            batch.add(FileWatcher.eventsLost)
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
            if !isFolder && FileWatcher.matches(event.name, configuration.files) {
                guard configuration.files.contains(event.name) || !ChangeFilter.ignores(name: event.name) else {
                    noteQuiet(event.name)
                    return false
                }
                batch.add(event.name, appeared: appeared)
                return true
            }
            // The output folder (or the store's) deleted or moved away while watching: the next build makes it
            // again, rather than the next save.
            if isFolder && vanished && ignoredPaths.contains(event.name) {
                batch.add(event.name)
                return true
            }
            guard isFolder && FileWatcher.matches(event.name, configuration.folders) else { return false }
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
        guard !root.ignores(path) else { return false }
        if isFolder && appeared {
            // Files may have been written into the folder before its watch existed: they count as changed. Whether
            // a path inside is reported by an event or by this scan depends on timing; either way it is there once.
            batch.add(path, appeared: true)
            for file in (try? watchTree(path)) ?? [] { batch.add(file) }
        } else if isFolder && vanished {
            unwatchTree(path)
            linkedFolders.remove(path)
            batch.add(path)
        } else if !isFolder {
            batch.add(path, appeared: appeared)
        }
        return true
    }

    /// Notes a change of a file whose name never starts a build (an editor's backup or lock file), unless it
    /// is hidden or in an ignored folder: a build may still want to know it changed (`takeQuietChanges()`).
    private func noteQuiet(_ path: String) {
        guard !(path.split(separator: "/").last ?? "").hasPrefix("."), !root.ignores(path) else { return }
        quietChanges.insert(path)
    }

    /// Watches each of `folders` (named as in `Configuration`) that is there, with everything under it; one
    /// that cannot be watched (no permission, no inotify watches left) does not keep the others from it, and
    /// the first such error is thrown once they are all watched.
    private func watchFolders(_ folders: [String]) throws {
        let patterns = folders.filter(FileWatcher.isPattern)
        var names = folders.filter { !FileWatcher.isPattern($0) }
        if !patterns.isEmpty {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: rootPath)) ?? [] where FileWatcher.matches(name, patterns) {
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
        guard lstat(root.location(of: path), &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return false }
        return stat(root.location(of: path), &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }




    /// Watches the folder at `relative` and every folder under it; returns the files and folders found in it,
    /// relative to the root.
    private func watchTree(_ relative: String) throws -> [String] {
        guard !root.ignores(relative) else { return [] }
        let absolute = root.location(of: relative)
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
            guard lstat(root.location(of: child), &status) == 0 else { continue }
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
}
#endif
