import Foundation

/// The files a build made in the output folder where none were, written down before each is made, so that
/// the build after one that stopped half-way deletes the pages it left and nothing else of the folder's.
///
/// Why: a build that stops (killed, or failed on a template) has not saved its page manifest, so the next
/// build cannot tell its pages from files the user keeps there (`CNAME`, a `.git` folder, with `--output .`
/// the site itself). The manifest of the last good build and this log name every file a build may have
/// left; the log is emptied when a build's manifest is saved. Paths end with a NUL byte, which no path has.
final class NewFileLog: @unchecked Sendable {
    private let path: String
    private let lock = NSLock()
    private var descriptor: Int32 = -1
    /// Whether this build wrote down that it makes temporary files.
    private var temporaryFilesRecorded = false
    /// Whether a build since the last good one wrote temporary files in the output folder: it stopped (at
    /// an error, or killed) before the log was emptied, so some may be left, and the next build looks.
    let earlierBuildsWroteTemporaryFiles: Bool

    /// What the log holds, in place of a file, once a build makes temporary files (no relative path starts with `/`).
    private static let temporaryFilesEntry = "/temporary files"

    /// The log at `path` (in the store's folder), opened on the first file it is told of.
    init(path: String) {
        self.path = path
        earlierBuildsWroteTemporaryFiles = Self.entries(atPath: path).contains(Self.temporaryFilesEntry)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Writes `file` (relative to the output folder) down; call it before the file is made.
    func record(_ file: String) throws {
        var bytes = Array(file.utf8)
        bytes.append(0)
        try lock.withLock {
            if descriptor < 0 {
                descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard descriptor >= 0 else { throw Self.failure(path) }
            }
            // One write of a few bytes with O_APPEND: whole, after what is there, even if the process dies next.
            guard bytes.withUnsafeBytes({ Foundation.write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
                throw Self.failure(path)
            }
        }
    }

    /// Writes down, once a build, that it makes temporary files in the output folder; call it before the first.
    func recordTemporaryFiles() throws {
        let first = lock.withLock {
            defer { temporaryFilesRecorded = true }
            return !temporaryFilesRecorded
        }
        if first { try record(Self.temporaryFilesEntry) }
    }

    /// The files written down since the log was last emptied.
    func files() -> [String] {
        Self.entries(atPath: path).filter { $0 != Self.temporaryFilesEntry }
    }

    private static func entries(atPath path: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Empties the log: the page manifest now names every file a build made.
    func clear() {
        lock.withLock {
            if descriptor >= 0 {
                close(descriptor)
                descriptor = -1
            }
            unlink(path)
        }
    }

    private static func failure(_ path: String) -> CocoaError {
        CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: String(cString: strerror(errno))])
    }
}
