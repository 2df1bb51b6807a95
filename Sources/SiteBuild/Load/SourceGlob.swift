import Foundation

/// Expands a source pattern such as `content/records/*.csv` or `content/**/*.md` to the files it names.
///
/// Walks folders with `readdir` (a hundred thousand files in well under a second; Foundation's enumerator
/// took seconds), never below the depth the pattern can match, and skips hidden files and folders.
struct SourceGlob {
    let pattern: String
    /// A folder the walk never enters, by its absolute path: the output folder, whose pages (`index.md`,
    /// `feed.json`) a pattern such as `**/*.md` from the site's folder would read back as sources.
    var skipping: String?

    /// The glob of `pattern`, written as in `sitegen.yml`.
    init(pattern: String) { self.pattern = pattern }

    /// A matching file, with its size and change time (through a symbolic link, its target's).
    struct Entry {
        let path: String
        let size: Int64
        let modified: Double
    }

    /// A folder the walk could not list, or a file (or link) whose status it could not read: its path as
    /// the walk writes paths, and why. Its sources are not gone, only out of sight, so their rows stay.
    struct Unreadable: Equatable {
        let path: String
        let reason: String
        let isFolder: Bool
        /// A name that is not UTF-8 (a file from an old archive, `caf\xE9.md`): sitegen cannot name its
        /// records' sources, so the build fails until it is renamed, new or not.
        var isMisnamed = false
    }

    /// A file name's bytes as text, each byte that is not part of UTF-8 written as `\xE9`.
    static func shownName(_ bytes: [UInt8]) -> String {
        var shown = "", index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length = lead < 0x80 ? 1 : (0xC2...0xDF).contains(lead) ? 2 : (0xE0...0xEF).contains(lead) ? 3 : (0xF0...0xF4).contains(lead) ? 4 : 0
            if length > 0, index + length <= bytes.count, let text = String(validating: bytes[index..<index + length], as: UTF8.self) {
                shown += text
                index += length
            } else {
                shown += "\\x" + String(lead, radix: 16, uppercase: true)
                index += 1
            }
        }
        return shown
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

    /// Matching files relative to `root` with their sizes and change times, sorted by path unless
    /// `sorted` is false (then in the order the file system lists them). Each is looked up from its
    /// folder (`fstatat`), not from the root: a path walk per file cost more than the stat.
    func entries(under root: URL, sorted: Bool = true) -> [Entry] {
        var unreadable: [Unreadable] = []
        return entries(under: root, sorted: sorted, unreadable: &unreadable)
    }

    /// `entries(under:sorted:)`, adding to `unreadable` the folders and files the walk could not look at.
    func entries(under root: URL, sorted: Bool = true, unreadable: inout [Unreadable]) -> [Entry] {
        let matches = scan(under: root, unreadable: &unreadable).entries
        return sorted ? matches.sorted { $0.path < $1.path } : matches
    }

    /// The matching files under `root`, in the order the file system lists them, their paths not made into
    /// strings; adds to `unreadable` the folders and files the walk could not look at.
    func scan(under root: URL, unreadable: inout [Unreadable]) -> SourceScan {
        let rootPath = root.standardizedFileURL.path
        let shape = Shape(pattern)
        var scan = SourceScan()
        guard shape.hasWildcard else {
            guard let entry = Self.entry(at: pattern, under: rootPath, unreadable: &unreadable) else { return scan }
            let folder = scan.addFolder(prefix: "")
            var path = entry.path
            path.withUTF8 { scan.add(name: UnsafeRawBufferPointer($0), folder: folder, size: entry.size, modified: entry.modified) }
            return scan
        }
        walk(rootPath, relative: shape.base, depth: shape.depth, glob: shape.glob, flags: shape.flags, into: &scan, unreadable: &unreadable)
        return scan
    }

    /// The pattern taken apart: the folder its walk starts in, how deep it goes and what it matches there.
    private struct Shape {
        /// Whether any part has a wildcard; without one the pattern names one file.
        let hasWildcard: Bool
        /// The walk's first folder as the paths it gives start (absolute for an absolute pattern).
        let base: String
        /// How many levels below `base` a match can be.
        let depth: Int
        /// What `fnmatch` matches a path against, with `flags`.
        let glob: String
        let flags: Int32

        init(_ pattern: String) {
            let components = pattern.split(separator: "/").map(String.init)
            let literalPrefix = components.prefix { !$0.contains(where: { "*?[".contains($0) }) }
            hasWildcard = literalPrefix.count < components.count
            // An absolute pattern's paths stay absolute, so that they match it.
            base = (pattern.hasPrefix("/") ? "/" : "") + literalPrefix.joined(separator: "/")
            let recursive = pattern.contains("**")
            flags = recursive ? 0 : FNM_PATHNAME
            glob = recursive ? pattern.replacingOccurrences(of: "**/", with: "*") : pattern
            depth = recursive ? Int.max : components.count - literalPrefix.count
        }
    }

    /// The file at `path` (as the walk writes paths) with its status, if it is a regular file (or a link to one).
    static func entry(at path: String, under rootPath: String) -> Entry? {
        var unreadable: [Unreadable] = []
        return entry(at: path, under: rootPath, unreadable: &unreadable)
    }

    /// `entry(at:under:)`, adding to `unreadable` a link to nothing or a file whose status cannot be read.
    static func entry(at path: String, under rootPath: String, unreadable: inout [Unreadable]) -> Entry? {
        var status = stat()
        let location = location(of: path, under: rootPath)
        guard stat(location, &status) == 0 else {
            if let problem = Self.problem(errno, at: location, path: path) { unreadable.append(problem) }
            return nil
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Entry(path: path, size: Int64(status.st_size), modified: modified(status))
    }

    /// What a failed `stat` of the file at `location` (written `path`) says, unless the file is simply not
    /// there: a link whose target is gone, or a status that cannot be read.
    private static func problem(_ error: Int32, at location: String, path: String) -> Unreadable? {
        var link = stat()
        let isLink = lstat(location, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
        if error == ENOENT || error == ENOTDIR {
            guard isLink else { return nil }
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: location)) ?? "?"
            return Unreadable(path: path, reason: "is a link to \(target), which is not there", isFolder: false)
        }
        return Unreadable(path: path, reason: "cannot be looked at: " + String(cString: strerror(error)), isFolder: false)
    }

    /// What the pattern matches at or under `location` (an absolute, standardized path of a file or folder
    /// that changed), found as `entries(under:)` finds them, and the path the walk would write for
    /// `location` (empty when nothing the pattern matches can be there): sources the store knows at that
    /// path or under it are the ones that may be gone. `nil` when `location` holds the folder the pattern
    /// starts in: then only a whole walk says what is there.
    func entries(at location: String, under root: URL) -> (found: [Entry], paths: [String])? {
        let rootPath = root.standardizedFileURL.path
        let shape = Shape(pattern)
        guard shape.hasWildcard else {
            let file = Self.standardized(Self.location(of: pattern, under: rootPath))
            // A folder above the file changed (moved away and made again): only a look at the file says.
            if file.hasPrefix(location + "/") { return nil }
            guard location == file else { return ([], []) }
            var unreadable: [Unreadable] = []
            let entry = Self.entry(at: pattern, under: rootPath, unreadable: &unreadable)
            // What cannot be looked at is said by a walk of them all.
            guard unreadable.isEmpty else { return nil }
            return (entry.map { [$0] } ?? [], [pattern])
        }
        let baseLocation = Self.standardized(shape.base.isEmpty ? rootPath : Self.location(of: shape.base, under: rootPath))
        if baseLocation == location || baseLocation.hasPrefix(location + "/") { return nil }
        let inside = baseLocation == "/" ? location.hasPrefix("/") : location.hasPrefix(baseLocation + "/")
        guard inside else { return ([], []) }
        let rest = location.dropFirst(baseLocation == "/" ? 1 : baseLocation.count + 1)
        let parts = rest.split(separator: "/")
        // The walk skips hidden files and folders and goes no deeper than the pattern can match.
        guard !parts.contains(where: { $0.hasPrefix(".") }), parts.count <= shape.depth else { return ([], []) }
        let path = shape.base.isEmpty ? String(rest) : shape.base == "/" ? "/" + rest : shape.base + "/" + rest
        var status = stat()
        var unreadable: [Unreadable] = []
        if lstat(location, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            var matches = SourceScan()
            walk(rootPath, relative: path, depth: shape.depth == Int.max ? Int.max : shape.depth - parts.count, glob: shape.glob,
                 flags: shape.flags, into: &matches, unreadable: &unreadable)
            return unreadable.isEmpty ? (matches.entries, [path]) : nil
        }
        // An editor's scratch file, which the walk leaves out: what the store had at its path is gone.
        guard fnmatch(shape.glob, path, shape.flags) == 0, !EditorScratch.isScratch(String(parts.last ?? "")) else { return ([], [path]) }
        let entry = Self.entry(at: path, under: rootPath, unreadable: &unreadable)
        return unreadable.isEmpty ? (entry.map { [$0] } ?? [], [path]) : nil
    }

    /// Whether a walk of the pattern finds the file `path` (written as the walk writes paths), if it is there.
    func matches(_ path: String) -> Bool {
        let shape = Shape(pattern)
        guard shape.hasWildcard else { return path == pattern }
        let rest: Substring
        if shape.base.isEmpty {
            guard !path.hasPrefix("/") else { return false }
            rest = path[...]
        } else if shape.base == "/" {
            guard path.hasPrefix("/") else { return false }
            rest = path.dropFirst()
        } else {
            guard path.hasPrefix(shape.base + "/") else { return false }
            rest = path.dropFirst(shape.base.count + 1)
        }
        let parts = rest.split(separator: "/")
        return !parts.contains(where: { $0.hasPrefix(".") }) && !EditorScratch.isScratch(String(parts.last ?? ""))
            && parts.count <= shape.depth && fnmatch(shape.glob, path, shape.flags) == 0
    }

    private static func standardized(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// When the file last changed, as its fingerprint has it: the status change time (`ctime`), which every
    /// write moves forward, and so does setting the modification time back (`touch -d`, `tar --mtime`,
    /// `rsync -t`), after which an edit of the same size went unseen.
    static func modified(_ status: stat) -> Double {
        Double(status.changeTime.tv_sec) + Double(status.changeTime.tv_nsec) / 1e9
    }

    /// Adds each regular file (or link to one) under `relative` matching `glob`, at most `depth` levels down.
    /// A file's name stays bytes (`SourceScan`) unless something about it has to be said.
    private func walk(_ rootPath: String, relative: String, depth: Int, glob: String, flags: Int32, into scan: inout SourceScan,
                      unreadable: inout [Unreadable]) {
        guard depth > 0 else { return }
        guard let folder = opendir(relative.isEmpty ? rootPath : Self.location(of: relative, under: rootPath)) else {
            // A folder that is not there has no files (a missing pattern folder is said elsewhere); one that
            // cannot be listed has files this build cannot see.
            let error = errno
            // Only a folder that the pattern can find files in: `content/private` is none of `content/posts-*/*.md`'s.
            if error != ENOENT && error != ENOTDIR && couldHoldMatches(relative, glob: glob, flags: flags) {
                unreadable.append(Unreadable(path: relative, reason: "cannot be listed: " + String(cString: strerror(error)), isFolder: true))
            }
            return
        }
        defer { closedir(folder) }
        let prefix = relative.isEmpty ? "" : relative == "/" ? "/" : relative + "/"
        var candidates = FolderNames(prefix: prefix, glob: glob, flags: flags)
        while let entry = readdir(folder) {
            let type = Int32(entry.pointee.d_type)
            let visited = withUnsafeBytes(of: &entry.pointee.d_name) { whole -> (folder: String?, skipped: Bool) in
                let name = UnsafeRawBufferPointer(rebasing: whole[..<strlen(whole.baseAddress!.assumingMemoryBound(to: CChar.self))])
                guard name.allSatisfy({ $0 < 0x80 }) || String(validating: name, as: UTF8.self) != nil else {
                    // Decoded with replacement characters, the name was a file that could not be found: its records
                    // were left out without a word.
                    let shown = Self.shownName(Array(name))
                    let path = prefix + shown
                    let isFolder = type == Int32(DT_DIR)
                    if !shown.hasPrefix("."), isFolder ? couldHoldMatches(path, glob: glob, flags: flags) : fnmatch(glob, path, flags) == 0 {
                        unreadable.append(Unreadable(path: path, reason: "has a name that is not UTF-8 text; rename it", isFolder: isFolder, isMisnamed: true))
                    }
                    return (nil, true)
                }
                guard name.first != UInt8(ascii: ".") else { return (nil, true) }
                if type == Int32(DT_DIR) { return (prefix + String(decoding: name, as: UTF8.self), false) }
                // An editor's lock or backup file (`~$report.md`, `data.csv~`) is no source, as it is no change
                // to a watch: read, a build would publish what the watch's builds did not.
                // (An entry of unknown type may be a folder, walked whatever its name: asked once its status says.)
                let unknown = type == Int32(DT_UNKNOWN)
                if !unknown && EditorScratch.isScratch(bytes: name) { return (nil, true) }
                // Files and links are looked at only when their name matches; entries of unknown type, once
                // their status says what they are.
                guard type == Int32(DT_REG) || type == Int32(DT_LNK) || unknown, unknown || candidates.matches(name) else {
                    return (nil, true)
                }
                candidates.append(name, unknown: unknown)
                return (nil, false)
            }
            if let path = visited.folder {
                if let skipping, Self.location(of: path, under: rootPath) == skipping { continue }
                walk(rootPath, relative: path, depth: depth - 1, glob: glob, flags: flags, into: &scan, unreadable: &unreadable)
            }
        }
        let statuses = candidates.statuses(in: dirfd(folder))
        let number = scan.addFolder(prefix: prefix)
        var folders: [String] = []
        for index in 0..<candidates.count {
            let unknown = candidates.isUnknown(index), status = statuses[index]
            candidates.withName(index) { name in
                func path() -> String { prefix + String(decoding: name, as: UTF8.self) }
                switch status {
                case .failed(let error):
                    if !unknown || candidates.matches(name),
                       let problem = Self.problem(error, at: Self.location(of: path(), under: rootPath), path: path()) {
                        unreadable.append(problem)
                    }
                case .file(let size, let modified):
                    if !unknown || candidates.matches(name) && !EditorScratch.isScratch(bytes: name) {
                        scan.add(name: name, folder: number, size: size, modified: modified)
                    }
                case .folder where unknown:
                    folders.append(path())
                case .folder, .other:
                    break
                }
            }
        }
        // Links to folders are not followed, so a loop of links cannot hang the walk.
        for path in folders where skipping.map({ Self.location(of: path, under: rootPath) != $0 }) ?? true {
            walk(rootPath, relative: path, depth: depth - 1, glob: glob, flags: flags, into: &scan, unreadable: &unreadable)
        }
    }

    /// Whether files that `glob` matches can be in the folder at `relative`: with `**` any folder can hold
    /// them; otherwise the folder must match the pattern's parts as deep as it is.
    private func couldHoldMatches(_ relative: String, glob: String, flags: Int32) -> Bool {
        guard flags == FNM_PATHNAME else { return true }
        let depth = relative.split(separator: "/").count
        let leading = glob.split(separator: "/", omittingEmptySubsequences: true).prefix(depth).joined(separator: "/")
        return fnmatch((glob.hasPrefix("/") ? "/" : "") + leading, relative, flags) == 0
    }
}
