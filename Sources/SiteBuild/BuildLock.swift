import Foundation
import Synchronization

/// Keeps two sitegen processes from building one site at once (a `build` beside a `watch`, say): each
/// build holds an advisory lock on `.sitegen/lock`, and a second one waits for the first to finish. Both
/// would otherwise change the store and the output folder under each other (one failed with "row 24501
/// is listed but no longer in the table"). The kernel drops the lock of a process that is killed.
final class BuildLock {
    private let descriptor: Int32
    /// How many builds of this process wait for another process's lock (a watch's, at most one): such a
    /// build has changed nothing yet, so a stop request need not wait for it.
    static let waiting = Atomic<Int>(0)

    /// Takes the lock of the store at `storePath`, calling `onWait` first when another process holds it.
    init(beside storePath: URL, onWait: (() -> Void)?) throws {
        let folder = storePath.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("lock").path
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BuildError.output(path: path, reason: String(cString: strerror(errno))) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) != 0 else { return }
        guard errno == EWOULDBLOCK else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw BuildError.output(path: path, reason: reason)
        }
        onWait?()
        Self.waiting.add(1, ordering: .sequentiallyConsistent)
        defer { Self.waiting.subtract(1, ordering: .sequentiallyConsistent) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw BuildError.output(path: path, reason: reason)
            }
        }
    }

    /// Takes the lock of the store at `storePath` when no other process holds it; nil when one does (or the
    /// lock file cannot be opened).
    init?(ifFreeBeside storePath: URL) {
        let path = storePath.deletingLastPathComponent().appendingPathComponent("lock").path
        descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
    }

    // Closing the file releases the lock.
    deinit { close(descriptor) }
}
