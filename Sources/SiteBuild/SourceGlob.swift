import Foundation

/// Expands a source pattern such as `content/records/*.csv` or `content/**/*.md` to the files it names.
///
/// Walks folders with `readdir` (a hundred thousand files in well under a second; Foundation's enumerator
/// took seconds), never below the depth the pattern can match, and skips hidden files and folders.
struct SourceGlob {
    let pattern: String

    /// A matching file, with its size and modification time (through a symbolic link, its target's).
    struct Entry {
        let path: String
        let size: Int64
        let modified: Double
    }

    /// Where the source file `path` (relative to the site at `rootPath`, or absolute) is on the disk.
    static func location(of path: String, under rootPath: String) -> String {
        path.hasPrefix("/") ? path : rootPath + "/" + path
    }

    /// The folder the pattern looks in: its part before the first wildcard (`content/records` of
    /// `content/records/*.csv`), or a file's folder; empty for the site's own folder.
    var folder: String {
        let components = pattern.split(separator: "/", omittingEmptySubsequences: false)
        let literal = components.prefix { !$0.contains(where: { "*?[".contains($0) }) }
        let folderParts = literal.count == components.count ? literal.dropLast() : literal[...]
        let joined = folderParts.joined(separator: "/")
        return pattern.hasPrefix("/") && joined.isEmpty ? "/" : joined
    }

    /// Matching files relative to `root` (absolute for an absolute pattern), sorted so that loading order
    /// never depends on the file system.
    func files(under root: URL) -> [String] {
        entries(under: root).map(\.path)
    }

    /// Matching files relative to `root` with their sizes and modification times, sorted by path unless
    /// `sorted` is false (then in the order the file system lists them). Each is looked up from its
    /// folder (`fstatat`), not from the root: a path walk per file cost more than the stat.
    func entries(under root: URL, sorted: Bool = true) -> [Entry] {
        let components = pattern.split(separator: "/").map(String.init)
        let literalPrefix = components.prefix { !$0.contains(where: { "*?[".contains($0) }) }
        let rootPath = root.standardizedFileURL.path
        guard literalPrefix.count < components.count else {
            var status = stat()
            guard stat(Self.location(of: pattern, under: rootPath), &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return [] }
            return [Entry(path: pattern, size: Int64(status.st_size), modified: Self.modified(status))]
        }
        // An absolute pattern's paths stay absolute, so that they match it.
        let base = (pattern.hasPrefix("/") ? "/" : "") + literalPrefix.joined(separator: "/")
        let recursive = pattern.contains("**")
        let flags = recursive ? 0 : FNM_PATHNAME
        let glob = recursive ? pattern.replacingOccurrences(of: "**/", with: "*") : pattern
        let depth = recursive ? Int.max : components.count - literalPrefix.count
        var matches: [Entry] = []
        walk(rootPath, relative: base, depth: depth, glob: glob, flags: flags, into: &matches)
        return sorted ? matches.sorted { $0.path < $1.path } : matches
    }

    private static func modified(_ status: stat) -> Double {
        Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
    }

    /// Adds each regular file (or link to one) under `relative` matching `glob`, at most `depth` levels down.
    private func walk(_ rootPath: String, relative: String, depth: Int, glob: String, flags: Int32, into matches: inout [Entry]) {
        guard depth > 0, let folder = opendir(relative.isEmpty ? rootPath : Self.location(of: relative, under: rootPath)) else { return }
        defer { closedir(folder) }
        var candidates: [(name: String, path: String, unknown: Bool)] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard !name.hasPrefix(".") else { continue }
            let path = relative.isEmpty ? name : relative == "/" ? "/" + name : relative + "/" + name
            let type = Int32(entry.pointee.d_type)
            if type == Int32(DT_DIR) {
                walk(rootPath, relative: path, depth: depth - 1, glob: glob, flags: flags, into: &matches)
                continue
            }
            // Files and links are looked at only when their name matches; entries of unknown type, once
            // their status says what they are.
            let unknown = type == Int32(DT_UNKNOWN)
            guard type == Int32(DT_REG) || type == Int32(DT_LNK) || unknown, unknown || fnmatch(glob, path, flags) == 0 else { continue }
            candidates.append((name, path, unknown))
        }
        let descriptor = dirfd(folder)
        let named = candidates
        // A folder of a hundred thousand records is most of an incremental build's first half second, and
        // its `fstatat` calls are the kernel's path lookups: two threads take half the time.
        let parts = candidates.count >= 4_096 ? 2 : 1
        let shares = (0..<parts).map { _ in Share() }
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var found: [Entry] = [], folders: [String] = []
            for (name, path, unknown) in named[named.count * part / parts..<named.count * (part + 1) / parts] {
                var status = stat()
                // Through links: a symbolic link to a file counts as the file (data is often linked in from elsewhere).
                guard fstatat(descriptor, name, &status, 0) == 0 else { continue }
                switch status.st_mode & S_IFMT {
                case S_IFREG:
                    if !unknown || fnmatch(glob, path, flags) == 0 {
                        found.append(Entry(path: path, size: Int64(status.st_size), modified: Self.modified(status)))
                    }
                case S_IFDIR where unknown:
                    folders.append(path)
                default:
                    break
                }
            }
            shares[part].found = found
            shares[part].folders = folders
        }
        for share in shares { matches += share.found }
        // Links to folders are not followed, so a loop of links cannot hang the walk.
        for path in shares.flatMap(\.folders) {
            walk(rootPath, relative: path, depth: depth - 1, glob: glob, flags: flags, into: &matches)
        }
    }

    /// One thread's share of a folder's files, written by that thread only, read once all have finished.
    private final class Share: @unchecked Sendable {
        var found: [Entry] = []
        var folders: [String] = []
    }
}
