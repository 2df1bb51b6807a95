import Foundation
import SiteSources
import Synchronization

/// Writes pages under the output folder atomically (temp file + rename), skipping files whose bytes are unchanged.
///
/// Each file is written beside its place (a temporary file, or a spare) and put there by `publish()`, once
/// every page of the build is made: a build stopped part way (a template error at its hundredth page)
/// leaves every page as the last build left it (`discardUnpublished()`).
///
/// Render workers write from several threads at once: the counts and the manifest are kept under a lock.
final class OutputWriter: @unchecked Sendable {
    let root: URL
    /// A dry run compares what it would write with what is there and writes nothing.
    let dryRun: Bool
    private let lock = NSLock()
    private var writtenCount = 0
    private var unchangedCount = 0
    private var oldFilesReadCount = 0
    /// Every file this build rendered, with its content hash and whether it was written (decisions.md 39g).
    private var files = WrittenFiles()

    /// Files written because their bytes changed (or are new).
    var written: Int { lock.withLock { writtenCount } }
    /// Files whose bytes were already there.
    var unchanged: Int { lock.withLock { unchangedCount } }
    /// Old files read to compare their bytes with a page's new ones.
    var oldFilesRead: Int { lock.withLock { oldFilesReadCount } }
    /// Every file (relative to `root`) this build rendered, with its content hash: a copy, which costs
    /// nothing while the writer writes no more.
    var renderedFiles: WrittenFiles { lock.withLock { files } }
    /// The content hash of the file this build rendered at `path` (relative to `root`); nil when none.
    func hash(of path: String) -> Int64? { lock.withLock { files.hash(of: path) } }

    /// `root` as a path, for the system calls every page makes.
    private let rootPath: String
    /// Where replaced pages' files are kept to be written into again (see `SpareFiles`); none in a dry run.
    var spares: SpareFiles?
    /// Where each file this build makes is written down first (see `NewFileLog`); none in a dry run.
    var newFiles: NewFileLog?
    /// Folders this build made or found, relative to `root`: each is made once, not once per page. A folder
    /// inside one this build made is not listed (see `madeByThisBuild(_:)`): a first build makes a folder per
    /// page, and listing each was a tenth of its memory (decisions.md 39c).
    private var folders: Set<Substring> = []
    /// The folders of `folders` that this build made (`mkdir` succeeded): nothing was in them before.
    private var madeFolders: Set<Substring> = []
    /// Files written and waiting for `publish()`: a temporary file beside its page, or a spare.
    private var staged: [Staged] = []
    /// The threads that wrote temporary files, which `Staged.thread` numbers: a few, however many files.
    private var stagingThreads: [UInt] = []
    /// The spares that staged files' bytes were written into, by the file's number in `files`.
    private var stagedSpares: [Int32: String] = [:]
    /// Told, about twice a second, how many of the build's files are in their places (a publish of a second or more).
    var progress: ((RenderProgress) -> Void)?
    /// Seconds between those reports (`SiteBuilder.progressInterval`).
    var progressInterval = 0.5
    /// Whether the last builds made the file at a path (relative to `root`): such a file where this build
    /// needs a folder, or a folder of only such files where it needs a file, is moved out of its way.
    var madeByLastBuilds: @Sendable (String) -> Bool = { _ in false }
    /// Whether this build has the file at a path (relative), written or kept as the last build left it:
    /// such a file is never moved aside, and a file and a folder of this build at one path are an error.
    var claimedByThisBuild: @Sendable (String) -> Bool = { _ in false }
    /// The hash of the bytes the last build wrote at a path (relative), when the plan knows it: a page whose
    /// new bytes hash otherwise is written without reading the old file to compare.
    var lastHash: @Sendable (String) -> Int64? = { _ in nil }
    /// Told of a file of this build taken back because this build has a folder at its path (holding the
    /// file named second): the plan leaves it out and reports it.
    var onWithdraw: @Sendable (String, String) -> Void = { _, _ in }
    /// What was moved out of this build's way: where it was (relative), where it is now, and the files it
    /// held (relative). Deleted with the stale files, or put back when the build stops.
    private var setAside: [(path: String, aside: String, files: [String])] = []
    /// Pages (full paths) whose place held something other than a file when written.
    private var obstructed = Set<String>()
    /// In a dry run, every file the plan has (relative): a file and a folder at one path are found from
    /// these, as nothing is written to find them on the disk.
    var plannedPaths: @Sendable () -> [String] = { [] }
    /// Held while something is moved aside, so two workers needing one folder move it once.
    private let setAsideLock = NSLock()
    /// Whether `deleteStale` looks for temporary files of earlier processes in the whole folder even when
    /// the last build was not interrupted (a build of every page: `--full`, a first build, which trusts nothing the last ones left).
    var sweepsTemporaries = false
    /// The renames that swap a page's new file in (`FileRenaming`): the process's, unless a test gives others.
    var renaming: any FileRenaming = FileRenamingKind.current.renaming
    /// Writes a page's bytes to its open temporary file; tests put a failing one here (a full disk).
    var writeBytes: @Sendable (Data, Int32, String) throws -> Void = { try OutputWriter.write($0, to: $1, path: $2) }

    init(root: URL, dryRun: Bool = false) {
        self.root = root
        self.dryRun = dryRun
        rootPath = root.path.hasSuffix("/") ? String(root.path.dropLast()) : root.path
    }

    /// The files written (or, in a dry run, that would be) because their bytes changed, in no particular order.
    var changed: [String] { lock.withLock { files.writtenPaths } }


    /// Writes `contents` to `path` (relative, e.g. `banks/10538/index.html`) unless the file already holds exactly it.
    func write(_ contents: String, to path: String) throws {
        try write(Data(contents.utf8), hash: ContentHash.of(contents), to: path)
    }

    /// Writes the bytes of a file published as it is (a static file) to `path`, unless the file already holds them.
    func write(_ data: Data, to path: String) throws {
        var hash = ContentHash()
        hash.combine(bytes: data)
        try write(data, hash: hash.signed, to: path)
    }

    /// Writes `data`, whose hash the manifest records, to `path` unless the file already holds exactly it.
    private func write(_ data: Data, hash: Int64, to path: String) throws {
        // A C path ends at a NUL: `index.html\0/x` would be written over `index.html`. Whatever let one through,
        // the file is not written.
        guard !path.utf8.contains(0) else {
            throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSLocalizedDescriptionKey: "a page's path holds a NUL character: \(path.debugDescription)"])
        }
        let number = lock.withLock { files.set(hash, for: path) }
        let fullPath = rootPath + "/" + path
        // In a folder this build made (or below one), a page is new: looking for the file is a system call
        // per page of a first build (a twentieth of the workers' time at 100,000 records) that finds nothing.
        var device: UInt64 = 0, readOld = false
        let existing = isInMadeFolder(path) ? .missing
            : Self.compare(fileAt: fullPath, with: data, device: &device, knownDifferent: lastHash(path).map { $0 != hash } ?? false, read: &readOld)
        if readOld { lock.withLock { oldFilesReadCount += 1 } }
        // Something that is no file stands there (a folder of the last build's files): looked at again before publishing.
        if existing == .other { _ = lock.withLock { obstructed.insert(fullPath) } }
        if existing == .same {
            lock.withLock { unchangedCount += 1 }
            return
        }
        if dryRun {
            lock.withLock {
                writtenCount += 1
                files.mark(number, .written)
            }
            return
        }
        // A file that is there has its folder: most pages an incremental build writes replace one.
        if existing == .missing {
            try newFiles?.record(path)
            try makeFolder(of: path)
        }
        // A spare takes the page's place at `publish()` only if a rename there can work: the same file system,
        // and a folder this build may write in (else the page waits for a temporary file, which fails now,
        // before anything is published).
        if existing == .different, let spares, device == spares.device, Self.isWritableFolder(of: fullPath),
           let spare = try spares.write(data) {
            // Written into a spare's blocks, to be swapped in.
            lock.withLock {
                staged.append(Staged(number: Int32(number), thread: Staged.inSpare))
                stagedSpares[Int32(number)] = spare
                files.unmark(number, .replacing)
            }
        } else {
            let thread = currentThreadNumber()
            // Written down before the first is made: whatever stops this build, the next one looks for them.
            try newFiles?.recordTemporaryFiles()
            try Self.writeWithoutSync(data, to: temporaryPath(for: fullPath, thread: thread), using: writeBytes)
            lock.withLock {
                staged.append(Staged(number: Int32(number), thread: threadNumber(of: thread)))
                if existing == .different { files.mark(number, .replacing) } else { files.unmark(number, .replacing) }
            }
        }
        lock.withLock {
            writtenCount += 1
            files.mark(number, .written)
        }
    }

    /// Puts every file written since the last call in its page's place (renames, or a spare's exchange),
    /// on every core; a file that cannot be placed is deleted, and the first such error thrown once the
    /// others are placed. What stands in the way (`clearTheWay()`) is dealt with first, so that a build
    /// that cannot place a file because of it publishes none.
    func publish() throws {
        try clearTheWay()
        let files = takeStaged()
        guard !files.isEmpty else { return }
        let failureLock = NSLock()
        nonisolated(unsafe) var failure: (any Error)?
        nonisolated(unsafe) var placed: [Placed] = []
        let lanes = PublishLanes(files)
        // Counted by every lane, reported by the one with the most files (the throttle is not shared between threads).
        let placedCount = Atomic<Int>(0)
        nonisolated(unsafe) let meter = ProgressThrottle(step: URL(fileURLWithPath: rootPath).lastPathComponent + "/", total: files.count, report: progress,
                                                           interval: progressInterval)
        meter.unit = "files"
        DispatchQueue.concurrentPerform(iterations: lanes.count) { lane in
            var done: [Placed] = []
            for index in lanes.items(of: lane) {
                if lane == lanes.busiest { meter.advance(to: placedCount.load(ordering: .relaxed)) }
                defer { placedCount.add(1, ordering: .relaxed) }
                // Once a file could not be placed, no other is: those placed are taken back.
                if failureLock.withLock({ failure != nil }) { break }
                let item = files.items[index]
                do {
                    let how = try place(files.file(of: item), at: files.fullPath(of: item), isSpare: files.isSpare(item),
                                        replacing: files.isReplacing(item))
                    done.append(Placed(item: item, how: how))
                } catch {
                    failureLock.withLock { failure = failure ?? error }
                    break
                }
            }
            failureLock.withLock { placed += done }
        }
        meter.finish()
        guard let failure else {
            release(placed, of: files, lanes: lanes.count)
            return
        }
        let renamedOver = placed.filter { $0.how == .final }.count
        guard renamedOver == 0 else {
            // A page renamed over its old file (a file system that cannot exchange: NFS, FAT) cannot go
            // back, so none does: the pages placed stay together, with the new pages they link to, and
            // the error says how many.
            release(placed, of: files, lanes: lanes.count)
            for item in files.items where !files.isSpare(item) { unlink(files.file(of: item)) }
            let path = (failure as? CocoaError)?.userInfo[NSFilePathErrorKey] as? String ?? rootPath
            let reason = (failure as? CocoaError)?.userInfo[NSLocalizedDescriptionKey] as? String ?? "\(failure)"
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: reason
                + "; \(placed.count) of the build's \(files.count) files were published before it, and stay (this file system "
                + "cannot exchange files, so they could not be taken back); the next build finishes the rest"])
        }
        // A build that fails publishes none of its pages: the old files go back, the new ones go, and the
        // folders made for them.
        for placement in placed.reversed() {
            let (holder, path) = (files.file(of: placement.item), files.fullPath(of: placement.item))
            switch placement.how {
            case .exchanged where files.isSpare(placement.item): spares?.takeBack(holder, from: path)
            case .exchanged: _ = renaming.exchange(holder, path)
            case .new:
                unlink(path)
                removeMadeFolders(above: path)
            case .final: break
            }
        }
        for item in files.items where !files.isSpare(item) {
            let file = files.file(of: item)
            if unlink(file) == 0 { removeMadeFolders(above: file) }
        }
        throw failure
    }

    /// Once the pages placed stay: the old files they held until now go (or stay as spares), on every core
    /// as they were placed.
    private func release(_ placed: [Placed], of files: StagedFiles, lanes: Int) {
        let holders = placed.filter { $0.how == .exchanged }
        DispatchQueue.concurrentPerform(iterations: min(lanes, max(holders.count, 1))) { lane in
            for index in stride(from: lane, to: holders.count, by: lanes) {
                let item = holders[index].item
                if files.isSpare(item) { spares?.settle(files.file(of: item)) } else { unlink(files.file(of: item)) }
            }
        }
    }

    /// Removes the folders this build made above the file at `fullPath` while they are empty.
    private func removeMadeFolders(above fullPath: String) {
        var folder = Substring(fullPath.dropFirst(rootPath.count + 1))
        while let slash = folder.lastIndex(of: "/") {
            folder = folder[..<slash]
            guard lock.withLock({ madeByThisBuild(folder) }), rmdir(rootPath + "/" + folder) == 0 else { break }
        }
    }

    /// Removes the folder at `path` and the folders inside it, deepest first, where they are empty; links
    /// are not followed.
    private static func removeEmptyFolders(at path: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            var status = stat()
            let inside = path + "/" + name
            if lstat(inside, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { removeEmptyFolders(at: inside) }
        }
        rmdir(path)
    }

    /// A file written and waiting for `publish()`: its number in `files`, and the thread whose temporary file
    /// beside the page holds its bytes (the file's name is made again when needed), or `inSpare`. A first
    /// build stages every page: a path and a spare's name each were a fifth of its memory (decisions.md 39c, 39g).
    private struct Staged {
        /// The file's number in `files`.
        let number: Int32
        /// The writing thread's place in `stagingThreads`, or `inSpare`.
        let thread: UInt32
        /// `thread` of a file whose bytes were written into a spare (`stagedSpares`).
        static let inSpare = UInt32.max
    }

    /// The place of `thread` in `stagingThreads` (called with the lock held).
    private func threadNumber(of thread: UInt) -> UInt32 {
        if let known = stagingThreads.lastIndex(of: thread) { return UInt32(known) }
        stagingThreads.append(thread)
        return UInt32(stagingThreads.count - 1)
    }

    /// How `publish()` shares the staged files between threads. A temporary file beside its page is renamed in
    /// one folder, and such renames run side by side; a spare is exchanged across folders, and Linux makes every
    /// such rename on a file system wait for one lock, so the spares go on one lane of their own (four lanes
    /// spent a third of their time spinning on that lock in a 100,000-record round; decisions.md 39l).
    private struct PublishLanes {
        /// The staged files' indexes that are temporary files, and those that are spares.
        private let beside: [Int], spares: [Int]
        /// How many lanes take the files beside their pages.
        private let besideLanes: Int

        init(_ files: StagedFiles) {
            let indexes = files.items.indices
            spares = indexes.filter { files.isSpare(files.items[$0]) }
            beside = spares.isEmpty ? Array(indexes) : indexes.filter { !files.isSpare(files.items[$0]) }
            besideLanes = min(beside.count, ProcessInfo.processInfo.activeProcessorCount * 2)
        }

        /// How many lanes there are.
        var count: Int { besideLanes + (spares.isEmpty ? 0 : 1) }
        /// The lane with the most files: the spares' when they outnumber a lane of the others.
        var busiest: Int { !spares.isEmpty && spares.count * besideLanes >= beside.count ? besideLanes : 0 }

        /// The indexes of the staged files lane `lane` places: the spares on the last lane, the others strided.
        func items(of lane: Int) -> [Int] {
            guard lane < besideLanes else { return spares }
            return stride(from: lane, to: beside.count, by: besideLanes).map { beside[$0] }
        }
    }

    /// Staged files with what names them, taken from the writer for publishing or discarding.
    private struct StagedFiles {
        let items: [Staged]
        let files: WrittenFiles
        let threads: [UInt]
        let spares: [Int32: String]
        let rootPath: String

        var isEmpty: Bool { items.isEmpty }
        var count: Int { items.count }
        /// The page's path, relative to the root.
        func path(of item: Staged) -> String { files.path(of: Int(item.number)) }
        /// Where `item`'s page goes.
        func fullPath(of item: Staged) -> String { rootPath + "/" + path(of: item) }
        func isSpare(_ item: Staged) -> Bool { item.thread == Staged.inSpare }
        func isReplacing(_ item: Staged) -> Bool { files.marks(of: Int(item.number)).contains(.replacing) }
        /// Where `item`'s bytes wait: its spare, or its temporary file.
        func file(of item: Staged) -> String {
            isSpare(item) ? spares[item.number]! : temporaryPath(for: fullPath(of: item), thread: threads[Int(item.thread)])
        }
    }

    /// The files staged so far; `taking` them leaves none staged.
    private func stagedFiles(taking: Bool) -> StagedFiles {
        lock.withLock {
            defer {
                if taking {
                    staged = []
                    stagedSpares = [:]
                }
            }
            return StagedFiles(items: staged, files: files, threads: stagingThreads, spares: stagedSpares, rootPath: rootPath)
        }
    }

    private func takeStaged() -> StagedFiles { stagedFiles(taking: true) }

    /// What placing a file leaves, so that a failed publication can be taken back: the staged file and how it
    /// was placed. Its paths are made again where needed, so that a build of a million pages does not hold
    /// two million path strings until it ends (decisions.md 39i).
    private struct Placed {
        let item: Staged
        let how: Placement
    }

    private enum Placement: UInt8 {
        /// Exchanged with the page's old file, which waits where the staged file was (a spare, or the temporary file).
        case exchanged
        /// A file where there was none.
        case new
        /// Renamed over the page's old file, on a file system that cannot exchange: kept whatever happens.
        case final
    }

    /// Puts `file` (a spare or a temporary file) in the place of `path`.
    private func place(_ file: String, at path: String, isSpare: Bool, replacing: Bool) throws -> Placement {
        if isSpare, let spares {
            switch try spares.swapIn(file, at: path) {
            case .exchanged: return .exchanged
            case .renamedOver: return .final
            case .placedWhereNone: return .new
            }
        }
        if replacing {
            if renaming.exchange(file, path) { return .exchanged }
            // ENOENT: the old file went meanwhile; EINVAL and the like: no exchange here.
            let gone = errno == ENOENT
            guard rename(file, path) == 0 else { return try failedRename(of: file, to: path) }
            return gone ? .new : .final
        }
        guard rename(file, path) == 0 else { return try failedRename(of: file, to: path) }
        return .new
    }

    private func failedRename(of file: String, to path: String) throws -> Placement {
        let reason = String(cString: strerror(errno))
        unlink(file)
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: reason])
    }

    /// Before anything is published, once every page is planned and written: a file and a folder of this
    /// build at one path leave the file out (`onWithdraw`), whichever build planned which first, so that an
    /// incremental build decides as a clean one does. A file of the last build moved out of the way of a
    /// new folder stays aside; a folder where this build has a file is moved aside if it holds only files of
    /// the last builds that this one does not have (a page's folder that became a static file), and is an
    /// error naming a file sitegen did not make otherwise, before anything is published.
    private func clearTheWay() throws {
        if dryRun {
            // A planned file that is the folder of another: the file is left out, as a build would leave it.
            let planned = plannedPaths()
            let files = Set(planned.filter { !$0.hasSuffix("/index.html") && $0 != "index.html" })
            var withdrawn = Set<String>()
            for path in planned.sorted() {
                var end = path.lastIndex(of: "/")
                while let slash = end {
                    let folder = String(path[..<slash])
                    if files.contains(folder), withdrawn.insert(folder).inserted { onWithdraw(folder, path) }
                    end = folder.lastIndex(of: "/")
                }
            }
            return
        }
        for (path, _, _) in lock.withLock({ setAside }) where claimedByThisBuild(path) {
            withdraw(path, folderOf: plannedFile(inFolder: path) ?? path)
        }
        // A page (`…/index.html`) is another file's folder only if something other than a file stood where
        // it was written: only those and the other files, a few of a build's hundred thousand, are looked at.
        let obstructed = lock.withLock { self.obstructed }
        let staged = stagedFiles(taking: false)
        for item in staged.items {
            let path = staged.path(of: item), isPage = path == "index.html" || path.hasSuffix("/index.html")
            if isPage && obstructed.isEmpty { continue }
            let fullPath = staged.fullPath(of: item)
            guard (!isPage || obstructed.contains(fullPath)) && Self.isFolder(fullPath) else { continue }
            if let child = plannedFile(inFolder: path) {
                withdraw(path, folderOf: child)
            } else {
                try setAsideLock.withLock { try moveAside(path, neededFor: nil) }
            }
        }
    }

    /// Leaves out this build's file at `path` (relative), where it also has a folder holding `child`: its
    /// written bytes, if any, are deleted unpublished, and the plan is told.
    private func withdraw(_ path: String, folderOf child: String) {
        let dropped: [String] = lock.withLock {
            guard let number = files.number(of: path) else { return [] }
            let named = StagedFiles(items: staged.filter { Int($0.number) == number }, files: files, threads: stagingThreads,
                                    spares: stagedSpares, rootPath: rootPath)
            staged.removeAll { Int($0.number) == number }
            files.remove(path)
            if !named.isEmpty {
                writtenCount -= 1
            } else {
                // Its bytes were there already: it was counted unchanged.
                unchangedCount -= 1
            }
            return named.items.filter { !named.isSpare($0) }.map(named.file(of:))
        }
        for file in dropped { unlink(file) }
        onWithdraw(path, child)
    }

    /// Deletes the files written since the last `publish()` (a spare stays a spare), and the folders this
    /// build made for them that are left empty: the build stopped, and the last build's pages stay.
    func discardUnpublished() {
        let files = takeStaged()
        for item in files.items where !files.isSpare(item) {
            unlink(files.file(of: item))
            removeMadeFolders(above: files.fullPath(of: item))
        }
        // Folders made for a page whose file could not be written (a full disk) hold nothing of it: those
        // left empty go, deepest first, so that the folder is as the last build left it.
        let made = lock.withLock {
            defer { madeFolders = [] }
            return madeFolders
        }
        // A page's own folder inside one of them is not listed (decisions.md 39c): emptied with it.
        for folder in made.sorted(by: { $0.count > $1.count }) { Self.removeEmptyFolders(at: rootPath + "/" + folder) }
        // The last build's files go back where they were, unless this build's folder there is not empty;
        // a file left aside has a temporary file's name, and the next build deletes it.
        let moved = lock.withLock {
            defer { setAside = [] }
            return setAside
        }
        for (path, aside, _) in moved.reversed() {
            let fullPath = rootPath + "/" + path
            if Self.isFolder(fullPath) { rmdir(fullPath) }
            rename(aside, fullPath)
        }
    }

    /// Moves the file or folder at `path` (relative), which stands where this build needs a folder (for
    /// the file `neededFor`) or a file, out of the way, if the last builds made all of it; otherwise throws
    /// an error naming what is in the way. A folder holds no file of this build by then (`clearTheWay()`
    /// looks first). Called under `setAsideLock`.
    private func moveAside(_ path: String, neededFor file: String?) throws {
        let fullPath = rootPath + "/" + path
        let needed = file.map { "\($0) needs a folder here" } ?? "the file \(path) goes here"
        func blocked(_ reason: String) -> CocoaError {
            CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: fullPath, NSLocalizedDescriptionKey: "\(needed), and \(reason)"])
        }
        var files: [String] = []
        if Self.isFolder(fullPath) {
            let walker = FileManager.default.enumerator(atPath: fullPath)
            while let name = walker?.nextObject() as? String {
                let child = path + "/" + name
                if (walker?.fileAttributes?[.type] as? FileAttributeType) == .typeDirectory { continue }
                // A killed writer's temporary file goes with the folder (the caller has found none of this
                // build's files here: `plannedFile(inFolder:)`).
                if Self.isTemporary(name: (child as NSString).lastPathComponent) { continue }
                guard madeByLastBuilds(child) else {
                    throw blocked("this folder holds \(child), which sitegen did not make (move or delete it)")
                }
                files.append(child)
            }
        } else {
            guard madeByLastBuilds(path) else { throw blocked("this is a file sitegen did not make (move or delete it)") }
            files = [path]
        }
        // Not the temporary file's own name, which the file that takes this place may have.
        let aside = temporaryPath(for: fullPath + "-aside")
        try newFiles?.recordTemporaryFiles()
        guard rename(fullPath, aside) == 0 else { throw blocked("it could not be moved: " + String(cString: strerror(errno))) }
        lock.withLock { setAside.append((path, aside, files)) }
    }

    /// A file this build has (`claimedByThisBuild`) in the folder at `path` (relative) of the output, when
    /// there is a folder there: a file of this build cannot be published at that path. One `stat` when not.
    func plannedFile(inFolder path: String) -> String? {
        let fullPath = rootPath + "/" + path
        guard Self.isFolder(fullPath), let walker = FileManager.default.enumerator(atPath: fullPath) else { return nil }
        while let name = walker.nextObject() as? String {
            // This build's pages are in temporary files until published.
            let child = Self.pageOfTemporary(path + "/" + name) ?? path + "/" + name
            if lock.withLock({ files.contains(child) }) || claimedByThisBuild(child) { return child }
        }
        return nil
    }

    /// The path of the page that a temporary file of this process (`dir/.index.html.sitegen-PID-THREAD.tmp`)
    /// is written for (`dir/index.html`); nil for any other file.
    static func pageOfTemporary(_ path: String) -> String? {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[slash...]
        guard name.hasPrefix("."), name.hasSuffix(".tmp"), let range = name.range(of: ".sitegen-\(getpid())-", options: .backwards)
        else { return nil }
        return String(path[..<slash]) + name[name.index(after: name.startIndex)..<range.lowerBound]
    }

    /// Whether this process runs as root, whom folders' permissions do not bind.
    private static let runsAsRoot = geteuid() == 0

    /// Whether this process may make and rename files in the folder of the file at `path`.
    private static func isWritableFolder(of path: String) -> Bool {
        // Root writes anywhere permissions are concerned: no path lookup per page then.
        guard !runsAsRoot, let slash = path.lastIndex(of: "/") else { return true }
        return access(String(path[..<slash]), W_OK) == 0
    }

    /// Whether `path` is a folder, or a link to one.
    static func isFolder(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Whether one of the folders `path` is in was made by this build.
    private func isInMadeFolder(_ path: String) -> Bool {
        lock.withLock {
            guard !madeFolders.isEmpty, let slash = path.lastIndex(of: "/") else { return false }
            return madeByThisBuild(path[..<slash])
        }
    }

    /// Whether this build made `folder` (relative): it is in `madeFolders`, or in a folder that is, unless a
    /// folder it is in was found there. Everything inside a folder this build made was made by it, so such
    /// folders are not listed. Called with the lock held.
    private func madeByThisBuild(_ folder: Substring) -> Bool {
        guard !madeFolders.isEmpty else { return false }
        var folder = folder
        while !folder.isEmpty {
            if madeFolders.contains(folder) { return true }
            if folders.contains(folder) { return false }
            guard let slash = folder.lastIndex(of: "/") else { return false }
            folder = folder[..<slash]
        }
        return false
    }

    /// What a file on disk holds, next to the bytes a page is to have.
    private enum Existing { case missing, other, different, same }

    /// Whether the file at `path` has exactly `data`; a missing file, one of another size, or one `knownDifferent`
    /// (the last build wrote other bytes there) is not read.
    private static func compare(fileAt path: String, with data: Data, device: inout UInt64, knownDifferent: Bool,
                                read: inout Bool) -> Existing {
        // Looked at by its status first: a shifted list page nearly always has another size, and is then not
        // opened (opening it was half of this in a 100,000-record mutation round).
        var status = stat()
        guard stat(path, &status) == 0 else { return errno == ENOENT || errno == ENOTDIR ? .missing : .other }
        guard status.st_mode & S_IFMT == S_IFREG else { return .other }
        device = UInt64(status.st_dev)
        // A shifted page of fixed-width rows often keeps its size: its old bytes hash otherwise, so reading them
        // would only confirm it (and read them from the disk once the cache has let them go).
        guard Int(status.st_size) == data.count, !knownDifferent else { return .different }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT || errno == ENOTDIR ? .missing : .other }
        defer { close(descriptor) }
        // What is open now is what is compared, whatever took the path's place since its status was read.
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return .other }
        guard Int(status.st_size) == data.count else { return .different }
        var existing = Data(count: data.count)
        read = true
        let count = existing.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress!, $0.count) }
        return count == data.count && existing == data ? .same : .different
    }

    /// Makes the folder that `path` (relative to the root) goes in, and its parents, unless this build
    /// already has.
    private func makeFolder(of path: String, holdingAFile: Bool = true) throws {
        let folder = path[..<(path.lastIndex(of: "/") ?? path.startIndex)]
        if lock.withLock({ folders.contains(folder) }) { return }
        guard !folder.isEmpty else {
            // The output folder itself, and any folders it is in.
            try FileManager.default.createDirectory(atPath: rootPath, withIntermediateDirectories: true)
            _ = lock.withLock { folders.insert(folder) }
            return
        }
        try makeFolder(of: String(folder), holdingAFile: false)
        // A page's own folder in a folder this build made is this build's too, whichever worker makes it: not
        // listed. The folders above pages' folders (a listing's sections) are few, and listed.
        let insideMade = holdingAFile && lock.withLock { folder.lastIndex(of: "/").map { madeByThisBuild(folder[..<$0]) } ?? false }
        let fullPath = rootPath + "/" + folder
        // Folders and files take their modes from the user's umask, as other tools' do (a team's deploy
        // folder with umask 002 is group-writable).
        var made = mkdir(fullPath, 0o777) == 0
        var failure = made ? 0 : errno
        if failure == EEXIST && !Self.isFolder(fullPath) {
            // A file of the last build where this one has a folder (a static file that became a folder).
            try setAsideLock.withLock {
                guard !Self.isFolder(fullPath) else { return }
                try moveAside(String(folder), neededFor: path)
                made = mkdir(fullPath, 0o777) == 0
                failure = made ? 0 : errno
            }
        }
        if !made && failure != EEXIST {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: fullPath,
                                                           NSLocalizedDescriptionKey: String(cString: strerror(failure))])
        }
        guard !insideMade else { return }
        lock.withLock {
            folders.insert(folder)
            if made { madeFolders.insert(folder) }
        }
    }

    /// Writes `data` to a new file at `path`. Foundation's `Data.write` syncs every file to disk, a
    /// millisecond each here: a site of a hundred thousand pages spent most of its build waiting for it.
    /// Pages can be made again, and the rename after this keeps readers from half-written ones, so the
    /// bytes are left to the kernel to write back.
    /// The file is deleted when its bytes cannot all be written (a full disk): nothing else would, as it
    /// was never staged, and the next builds would publish it.
    fileprivate static func writeWithoutSync(_ data: Data, to path: String,
                                             using writeBytes: (Data, Int32, String) throws -> Void = { try write($0, to: $1, path: $2) }) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
        do {
            try writeBytes(data, descriptor, path)
        } catch {
            close(descriptor)
            unlink(path)
            throw error
        }
        close(descriptor)
    }

    /// Writes all of `data` at the open file's current offset; `path` names it in the error.
    static func write(_ data: Data, to descriptor: Int32, path: String) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let count = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
                }
                offset += count
            }
        }
    }

    /// Deletes the files in `stale` (the last build's files that no page claims now), and folders left
    /// empty; returns the files deleted (in a dry run, that would be). After an interrupted build,
    /// `afterInterruption` is every file this build wrote and `made` the files the builds since the last
    /// good one made (`NewFileLog`): those that no page claims go too, and a killed writer's temporary
    /// files anywhere in the folder, so the folder is what a clean build writes. Temporary files are looked
    /// for too after a build that wrote some and stopped at an error, and with `sweepsTemporaries`. A file sitegen did not
    /// make (`CNAME`, `.git/`) is never deleted, and neither is anything that is not a file or a link.
    func deleteStale(_ stale: [String], afterInterruption current: WrittenFiles? = nil, made: [String] = [])
        -> (deleted: [String], kept: [(path: String, reason: String)])
    {
        var deleted: [String] = []
        var kept: [(path: String, reason: String)] = []
        // What was moved out of this build's way is gone for good now that the pages are in their places.
        let moved = lock.withLock {
            defer { setAside = [] }
            return setAside
        }
        for (_, aside, files) in moved {
            if !dryRun { try? FileManager.default.removeItem(atPath: aside) }
            deleted += files
        }
        var candidates = Set(stale).subtracting(deleted)
        if let current { candidates.formUnion(made.filter { !current.contains($0) }) }
        // Temporary files are looked for after a build that was killed or stopped at an error after writing
        // one (a full disk: its files are deleted, but a process killed meanwhile, or an earlier version,
        // left them), and in a build of every page (`--full`); not on every build, which would list every folder of the site.
        let sweeping = current != nil || sweepsTemporaries || newFiles?.earlierBuildsWroteTemporaryFiles == true
        if sweeping {
            if let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) {
                let prefix = root.standardizedFileURL.path + "/"
                for case let url as URL in walker where Self.isTemporary(name: url.lastPathComponent) {
                    let path = url.standardizedFileURL.path
                    if path.hasPrefix(prefix) { candidates.insert(String(path.dropFirst(prefix.count))) }
                }
            }
        }
        for path in candidates.sorted() {
            let url = root.appendingPathComponent(path)
            var status = stat()
            guard lstat(url.path, &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR, Self.isTemporary(name: url.lastPathComponent), sweeping {
                // A folder a killed build moved out of its way.
                try? FileManager.default.removeItem(at: url)
                continue
            }
            guard status.st_mode & S_IFMT == S_IFREG || status.st_mode & S_IFMT == S_IFLNK else { continue }
            // A killed writer's temporary file was never a page: it goes without being counted as one.
            let isPage = !Self.isTemporary(name: url.lastPathComponent)
            if dryRun {
                if isPage { deleted.append(path) }
                continue
            }
            guard isPage else {
                unlink(url.path)
                removeEmptyFolders(above: url)
                continue
            }
            // A page's file that goes is kept as a spare for the pages of later builds while there is room.
            guard spares?.retire(fileAt: url.path) == true || unlink(url.path) == 0 || errno == ENOENT else {
                // An immutable file, a folder this user may not write in: still published, and said so.
                kept.append((path, String(cString: strerror(errno))))
                continue
            }
            deleted.append(path)
            removeEmptyFolders(above: url)
        }
        return (deleted, kept)
    }

    /// Removes the folders above the file at `url` that its deletion left empty.
    private func removeEmptyFolders(above url: URL) {
        // rmdir removes a folder only when it is empty, without listing it: the folder of a record's
        // page holds a hundred thousand others.
        var folder = url.deletingLastPathComponent()
        while folder.path.count > root.path.count, rmdir(folder.path) == 0 {
            folder = folder.deletingLastPathComponent()
        }
    }
}

extension OutputWriter {
    /// Whether a file's `name` is that of `replaceFile`'s temporary files (`.index.html.sitegen-PID-THREAD.tmp`),
    /// or of a page's old file that a portable exchange set aside (`.sitegen-exchange-PID-N.tmp`).
    static func isTemporary(name: String) -> Bool {
        name.hasPrefix(".") && name.hasSuffix(".tmp") && name.contains(".sitegen-")
    }
}

/// Replaces the file at `url` (in an existing folder) with `data` through a temporary file beside it and a
/// rename, so that a reader (a browser on `sitegen serve`, a tool reading a report) never sees half of it.
public func replaceFile(at url: URL, with data: Data) throws {
    try replaceFile(atPath: url.path, with: data)
}

/// `replaceFile(at:with:)` by path, as render workers call it for every page.
func replaceFile(atPath path: String, with data: Data) throws {
    let temporary = temporaryPath(for: path)
    try OutputWriter.writeWithoutSync(data, to: temporary)
    guard rename(temporary, path) == 0 else {
        let reason = String(cString: strerror(errno))
        unlink(temporary)
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: reason])
    }
}

/// The temporary file beside `path` that its new bytes are written to before a rename puts them in place
/// (`.index.html.sitegen-PID-THREAD.tmp`, as `OutputWriter.isTemporary` knows them).
func temporaryPath(for path: String, thread: UInt = currentThreadNumber()) -> String {
    let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
    // The thread in the name keeps two workers writing one path (never planned, but cheap to rule out) apart.
    let suffix = ".sitegen-\(getpid())-\(thread).tmp"
    let name = path[slash...].utf8
    // A name near the file system's 255 bytes keeps as much of itself as fits (a static file's long name),
    // and a hash of the whole, so that two names alike in their first 200 bytes do not share one.
    let room = 255 - 1 - suffix.utf8.count
    guard name.count > room else { return path[..<slash] + "." + String(Substring(name)) + suffix }
    var hash = ContentHash()
    hash.combine(String(Substring(name)))
    let mark = "~" + String(UInt64(bitPattern: hash.signed), radix: 16)
    var end = name.index(name.startIndex, offsetBy: room - mark.utf8.count)
    while end > name.startIndex, UTF8.isContinuation(name[end]) { name.formIndex(before: &end) }
    return path[..<slash] + "." + String(Substring(name[..<end])) + mark + suffix
}

/// The calling thread's number, for temporary files' names: its `pthread_t`, an integer on Linux and a
/// pointer on Darwin.
func currentThreadNumber() -> UInt {
    #if os(Linux)
    UInt(pthread_self())
    #else
    UInt(bitPattern: pthread_self())
    #endif
}
