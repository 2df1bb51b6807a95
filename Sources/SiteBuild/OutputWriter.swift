import Foundation
import SiteSources

/// Writes pages under the output folder atomically (temp file + rename), skipping files whose bytes are unchanged.
///
/// Render workers write from several threads at once: the counts and the manifest are kept under a lock.
final class OutputWriter: @unchecked Sendable {
    let root: URL
    private let lock = NSLock()
    private var writtenCount = 0
    private var unchangedCount = 0
    private var paths: [String: Int64] = [:]

    /// Files written because their bytes changed (or are new).
    var written: Int { lock.withLock { writtenCount } }
    /// Files whose bytes were already there.
    var unchanged: Int { lock.withLock { unchangedCount } }
    /// Every path (relative to `root`) this build produced, with its content hash.
    var manifest: [String: Int64] { lock.withLock { paths } }

    init(root: URL) {
        self.root = root
    }

    /// Writes `contents` to `path` (relative, e.g. `banks/10538/index.html`) unless the file already holds exactly it.
    func write(_ contents: String, to path: String) throws {
        let data = Data(contents.utf8)
        let hash = ContentHash.of(contents)
        lock.withLock { paths[path] = hash }
        let url = root.appendingPathComponent(path)
        if let existing = try? Data(contentsOf: url), existing == data {
            lock.withLock { unchangedCount += 1 }
            return
        }
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The thread in the name keeps two workers writing one path (never planned, but cheap to rule out) apart.
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).sitegen-\(getpid())-\(pthread_self()).tmp")
        try data.write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: reason])
        }
        lock.withLock { writtenCount += 1 }
    }

    /// Deletes files the previous build wrote that this one did not, and folders left empty; returns how
    /// many files. After an interrupted build (`everyFile`), every file in the folder that this build did not
    /// write is deleted, temporary files of a killed writer among them, so the folder is what a clean build writes.
    func deleteStale(previous: [String: Int64], everyFile: Bool = false) -> Int {
        var deleted = 0
        let current = manifest
        var candidates = Set(previous.keys)
        if everyFile, let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey, .isSymbolicLinkKey]) {
            let prefix = root.standardizedFileURL.path + "/"
            for case let url as URL in walker {
                let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .isSymbolicLinkKey])
                guard values?.isRegularFile == true || values?.isSymbolicLink == true else { continue }
                let path = url.standardizedFileURL.path
                if path.hasPrefix(prefix) { candidates.insert(String(path.dropFirst(prefix.count))) }
            }
        }
        for path in candidates.sorted() where current[path] == nil {
            let url = root.appendingPathComponent(path)
            guard (try? FileManager.default.removeItem(at: url)) != nil else { continue }
            deleted += 1
            var folder = url.deletingLastPathComponent()
            while folder.path.count > root.path.count,
                (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty == true
            {
                try? FileManager.default.removeItem(at: folder)
                folder = folder.deletingLastPathComponent()
            }
        }
        return deleted
    }
}
