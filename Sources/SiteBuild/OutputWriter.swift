import Foundation
import SiteSources

/// Writes pages under the output folder atomically (temp file + rename), skipping files whose bytes are unchanged.
final class OutputWriter {
    let root: URL
    private(set) var written = 0
    private(set) var unchanged = 0
    /// Every path (relative to `root`) this build produced, with its content hash.
    private(set) var manifest: [String: Int64] = [:]

    init(root: URL) {
        self.root = root
    }

    /// Writes `contents` to `path` (relative, e.g. `banks/10538/index.html`) unless the file already holds exactly it.
    func write(_ contents: String, to path: String) throws {
        let data = Data(contents.utf8)
        manifest[path] = ContentHash.of(contents)
        let url = root.appendingPathComponent(path)
        if let existing = try? Data(contentsOf: url), existing == data {
            unchanged += 1
            return
        }
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).sitegen-\(getpid()).tmp")
        try data.write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: reason])
        }
        written += 1
    }

    /// Deletes files the previous build wrote that this one did not, and folders left empty; returns how many files.
    func deleteStale(previous: [String: Int64]) -> Int {
        var deleted = 0
        for path in previous.keys.sorted() where manifest[path] == nil {
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
