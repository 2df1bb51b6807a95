import Foundation

/// Files an earlier build's pages were in, kept in `.sitegen/spare/` so that the pages a build replaces
/// are written into their blocks instead of freeing blocks and taking new ones.
///
/// Why: replacing a file through a rename frees the old file's blocks, and on a file system mounted with
/// `discard` (this machine's ext4, and many cloud disks) each free waits for the disk to discard them,
/// about a millisecond per file: 7,600 pages of an incremental build spent 7 s there. A spare is written
/// in place (its blocks are already allocated) and swapped with the page in one exchange (`FileRenaming`), so
/// a reader still sees the old page or the new one, whole; the page's old file becomes a spare. A file
/// is reused only by a later build than the one that retired it, never while this build may still have
/// served it, and only while it has no other link (a backup made with `cp -al` or `rsync --link-dest`
/// shares its inode with the page, and must not be written into).
final class SpareFiles: @unchecked Sendable {
    /// The folder the spares are in, on the output's file system.
    let folder: String
    /// At most this many spares are kept: about a tenth of the site's pages, a few hundred MB at most.
    let capacity: Int
    /// The file system the spares are on: a page on another (a folder of the output mounted elsewhere)
    /// cannot take one's place, as a rename cannot cross.
    let device: UInt64

    private let lock = NSLock()
    /// Spares an earlier build left, free to be written into by this one.
    private var available: [String]
    /// Files in the folder: the spares left plus the pages' old files this build kept.
    private var count: Int
    private var nextNumber = 0
    /// Whether the file system exchanges files; spares are of no use on one that does not.
    private var exchanges = true
    /// Names this build gives new spares: its own, though a watch's builds share a process and a second
    /// (a name met twice in a kept listing would give one file to two pages).
    private let prefix: String

    /// The renames that swap a spare in and give a retired page a spare's name.
    let renaming: any FileRenaming

    /// The mode of the files this build makes (`currentNewFileMode()`), which reused spares are given.
    private let newFileMode = SpareFiles.currentNewFileMode()

    /// Held open, and locked, while this build may write spares: two builds of one site at once must not
    /// both write into the same spare.
    private let lockDescriptor: Int32

    /// The folder's files as a build left them, with the folder's change time then: a watch's next build
    /// takes them as they are when the folder has not changed since, instead of listing its thousands of
    /// files again (a seventh of a one-record build at 100,000 records).
    struct Listing: Sendable {
        let names: [String]
        let changed: timespec
    }

    /// Names of files this build added to the folder and kept there: pages' old files, retired pages.
    private var added: [String] = []

    /// The spare folder at `folder` for pages under `outputRoot`, or `nil` when it cannot be made, is on
    /// another file system than the output (a rename cannot cross), or another build is using it. Its files
    /// are `remembered` when the folder has not changed since that listing was made. New spares' names
    /// start with `namePrefix` (tests give one; else the process, the second and a random part). `renaming`
    /// is the process's (`FileRenamingKind.current`) unless a test gives another.
    init?(folder: String, outputRoot: String, capacity: Int, remembered: Listing? = nil, namePrefix: String? = nil,
          renaming: any FileRenaming = FileRenamingKind.current.renaming) {
        guard capacity > 0 else { return nil }
        self.renaming = renaming
        prefix = namePrefix ?? "s\(getpid())-\(Int(Date().timeIntervalSince1970))-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))-"
        if mkdir(folder, 0o755) != 0 && errno != EEXIST { return nil }
        var folderStatus = stat(), outputStatus = stat()
        guard stat(folder, &folderStatus) == 0, stat(outputRoot, &outputStatus) == 0,
              folderStatus.st_dev == outputStatus.st_dev else { return nil }
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        lockDescriptor = descriptor
        device = UInt64(folderStatus.st_dev)
        self.folder = folder
        self.capacity = capacity
        if let remembered, remembered.changed.tv_sec == folderStatus.modificationTime.tv_sec, remembered.changed.tv_nsec == folderStatus.modificationTime.tv_nsec {
            // Each name is there once, as no build gives a spare a name that is taken (`O_EXCL`,
            // `renameToFreeName`): two pages written into one file would swap the same bytes in.
            available = remembered.names
        } else {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            // A file an exchange set aside is one a killed build left (`PortableRenaming`): a page's old
            // file, linked to its place or to a spare's name as well, which only that name should keep.
            for name in names where name.hasPrefix(PortableRenaming.asidePrefix) { unlink(folder + "/" + name) }
            available = names.filter { !$0.hasPrefix(".") }
        }
        count = available.count
    }

    deinit {
        close(lockDescriptor)
    }

    /// The folder's files now, for the next build of a watch: call it when this build is done with them.
    func listing() -> Listing? {
        var status = stat()
        guard stat(folder, &status) == 0 else { return nil }
        return lock.withLock { Listing(names: available + added, changed: status.modificationTime) }
    }

    /// How many spares there are now.
    var spareCount: Int { lock.withLock { count } }

    /// Writes `data` into a spare and returns the spare's path, for `swapIn(_:at:)` to put in a page's
    /// place once every page is made; `nil` when no spare can be had (the page is then written to a
    /// temporary file beside its place). A new spare is made only within the capacity: written pages wait
    /// for their places, and past it the folder would hold a file per page the build writes.
    func write(_ data: Data) throws -> String? {
        guard let (spare, descriptor) = takeSpare() else { return nil }
        do {
            try Self.overwrite(descriptor, with: data, path: spare)
        } catch {
            close(descriptor)
            unlink(spare)
            lock.withLock { count -= 1 }
            throw error
        }
        close(descriptor)
        return spare
    }

    /// How a spare took a page's place.
    enum Placement {
        /// Exchanged: the spare's name holds the page's old file until `settle(_:)` keeps it as a spare
        /// (while there is room) or `takeBack(_:from:)` puts it back.
        case exchanged
        /// Renamed over the page's old file (a file system that cannot exchange): there is no going back.
        case renamedOver
        /// Renamed where the page's file had gone meanwhile: deleting it puts things back.
        case placedWhereNone
    }

    /// Puts the spare at `spare` (written by `write(_:)`) in the place of the file at `path`: the two are
    /// exchanged, or, where the file system cannot exchange or the page went away, the spare is renamed there.
    func swapIn(_ spare: String, at path: String) throws -> Placement {
        guard renaming.exchange(spare, path) else {
            // No exchange on this file system (or the page went away): the spare takes the page's place.
            let exchangeError = errno
            guard rename(spare, path) == 0 else {
                if errno == EXDEV, let data = FileManager.default.contents(atPath: spare) {
                    // The page is on another file system than the spares though its folder's device said
                    // not (a bind mount, a link): its bytes go through a temporary file beside it instead.
                    defer {
                        unlink(spare)
                        lock.withLock { count -= 1 }
                    }
                    try replaceFile(atPath: path, with: data)
                    return exchangeError == ENOENT ? .placedWhereNone : .renamedOver
                }
                let reason = String(cString: strerror(errno))
                unlink(spare)
                lock.withLock { count -= 1 }
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: reason])
            }
            lock.withLock {
                count -= 1
                if exchangeError == EINVAL || exchangeError == ENOTSUP || exchangeError == ENOSYS { exchanges = false }
            }
            return exchangeError == ENOENT ? .placedWhereNone : .renamedOver
        }
        return .exchanged
    }

    /// After the publication: the page's old file, at `spare` since `swapIn`, is kept for a later build
    /// while there is room.
    func settle(_ spare: String) {
        let keep = lock.withLock { count <= capacity }
        if keep {
            lock.withLock { added.append(String(spare.dropFirst(folder.count + 1))) }
        } else {
            unlink(spare)
            lock.withLock { count -= 1 }
        }
    }

    /// A publication that failed: the page's old file goes back to `path`, and the spare keeps the new bytes.
    func takeBack(_ spare: String, from path: String) {
        _ = renaming.exchange(spare, path)
    }

    /// Keeps the file at `path` (a page no longer built) as a spare when there is room; returns whether it did.
    func retire(fileAt path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return false }
        for _ in 0..<3 {
            guard let name = reserveNewName() else { return false }
            if renameToFreeName(path, name) {
                lock.withLock { added.append(String(name.dropFirst(folder.count + 1))) }
                return true
            }
            lock.withLock { count -= 1 }
            if errno != EEXIST { return false }
        }
        return false
    }

    /// Renames `path` to `name` only when no file has that name, so that a kept listing never names one
    /// file twice; where the file system cannot check, a plain rename (the names' random part then keeps
    /// them apart).
    private func renameToFreeName(_ path: String, _ name: String) -> Bool {
        if renaming.renameToFreeName(path, name) { return true }
        return errno == EINVAL && rename(path, name) == 0
    }

    /// Deletes spares beyond the capacity (a site that shrank), at the end of a build.
    func trim() {
        let excess: [String] = lock.withLock {
            let extra = min(max(0, count - capacity), available.count)
            count -= extra
            let names = available.suffix(extra)
            available.removeLast(extra)
            return names.map { folder + "/" + $0 }
        }
        for path in excess { unlink(path) }
    }

    /// The mode a file made now gets (`0666` less the umask), read without setting the umask, which the
    /// process's other threads may be using; nil where the kernel does not say (before Linux 4.7).
    static func currentNewFileMode() -> mode_t? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
              let mask = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
        else { return nil }
        return 0o666 & ~mask
    }

    /// A spare opened for writing: one an earlier build left, or a new file when none is left.
    private func takeSpare() -> (String, Int32)? {
        guard lock.withLock({ exchanges }) else { return nil }
        while let name = lock.withLock({ available.popLast() }) {
            let path = folder + "/" + name
            let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
            var status = stat()
            if descriptor >= 0, fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 1 {
                // A spare made under another umask (or an older sitegen's 0644) takes this build's mode, as
                // a new file would: the pages of one build have one mode.
                if let mode = newFileMode, status.st_mode & 0o7777 != mode { fchmod(descriptor, mode) }
                return (path, descriptor)
            }
            // Linked elsewhere, not a file, or unreadable: it is no spare. Its name goes (another link
            // keeps the file itself).
            if descriptor >= 0 { close(descriptor) }
            unlink(path)
            lock.withLock { count -= 1 }
        }
        for _ in 0..<3 {
            guard let path = reserveNewName() else { return nil }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if descriptor >= 0 { return (path, descriptor) }
            lock.withLock { count -= 1 }
            if errno != EEXIST { return nil }
        }
        return nil
    }

    /// The path of a new spare, counted in the folder, while the capacity allows one; a caller that cannot
    /// make it gives the count back.
    private func reserveNewName() -> String? {
        lock.withLock {
            guard count < capacity else { return nil }
            count += 1
            nextNumber += 1
            return folder + "/" + prefix + "\(nextNumber)"
        }
    }

    /// Writes `data` over the start of the open file (its blocks are reused, none freed) and cuts it to that length.
    private static func overwrite(_ descriptor: Int32, with data: Data, path: String) throws {
        try OutputWriter.write(data, to: descriptor, path: path)
        guard ftruncate(descriptor, off_t(data.count)) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
    }
}
