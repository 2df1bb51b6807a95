import Foundation

/// Expands a source pattern such as `content/records/*.csv` or `content/**/*.md` to the files it names.
struct SourceGlob {
    let pattern: String

    /// Matching files relative to `root`, sorted so that loading order never depends on the file system.
    func files(under root: URL) -> [String] {
        let components = pattern.split(separator: "/").map(String.init)
        let literalPrefix = components.prefix { !$0.contains(where: { "*?[".contains($0) }) }
        guard literalPrefix.count < components.count else {
            return FileManager.default.fileExists(atPath: root.appendingPathComponent(pattern).path) ? [pattern] : []
        }
        let base = literalPrefix.joined(separator: "/")
        let baseURL = base.isEmpty ? root : root.appendingPathComponent(base)
        guard let enumerator = FileManager.default.enumerator(at: baseURL, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return []
        }
        let recursive = pattern.contains("**")
        let flags = recursive ? 0 : FNM_PATHNAME
        let glob = recursive ? pattern.replacingOccurrences(of: "**/", with: "*") : pattern
        var matches: [String] = []
        let rootPath = root.standardizedFileURL.path
        for case let url as URL in enumerator {
            // A symbolic link to a file counts as the file (data is often linked in from elsewhere).
            guard (try? url.resolvingSymlinksInPath().resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            var relative = url.standardizedFileURL.path
            guard relative.hasPrefix(rootPath) else { continue }
            relative = String(relative.dropFirst(rootPath.count).drop { $0 == "/" })
            if url.lastPathComponent.hasPrefix(".") { continue }
            if fnmatch(glob, relative, flags) == 0 { matches.append(relative) }
        }
        return matches.sorted()
    }
}
