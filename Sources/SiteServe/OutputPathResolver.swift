import Foundation

/// Maps a request's raw path onto a file of the output folder, refusing anything that could reach outside it.
///
/// Rules, in order: the raw path (still percent-encoded) must start with `/` and hold only visible ASCII; no segment
/// may be empty (`//`); each segment is decoded on its own and must not be `.`, `..`, hidden (a leading dot, which
/// also covers the build's `.NAME.sitegen-PID-THREAD.tmp` files; `.well-known` excepted) or hold `/`, `\` or NUL;
/// the file the path resolves to, symbolic links followed, must lie inside the output folder as it resolves itself.
/// `/` and `/dir/` name `index.html`; `/dir` names a folder without its slash and is redirected to `/dir/`.
/// With a base path (`/blog/`, from a `baseURL` of `https://example.org/blog/`), the site is served under it, as
/// it is published: `/blog/dir/` names `dir/index.html`, `/` and `/blog` redirect to `/blog/`, other paths are 404.
public struct OutputPathResolver: Sendable {
    /// What a request path names.
    public enum Resolution: Equatable, Sendable {
        /// A regular file inside the output folder; `name` is the name the request used (it picks the content type).
        case file(URL, name: String)
        /// A folder asked for without its trailing slash: where to send the browser.
        case redirect(location: String)
        /// Nothing servable: missing, outside the folder, hidden, or a path that tries to be any of these.
        case notFound
    }

    /// The output folder served.
    public let root: URL
    /// The path the site is served under, percent-encoded, starting and ending with `/`.
    public let basePath: String

    /// Serves `root` under `basePath` (its path as `baseURL` has it, `/` by default); the folder may not exist
    /// yet (a first build may still be writing it).
    public init(root: URL, basePath: String = "/") {
        self.root = root.standardizedFileURL
        var base = basePath.hasPrefix("/") ? basePath : "/" + basePath
        if !base.hasSuffix("/") { base += "/" }
        // Compared with paths as sent, which are percent-encoded; an already encoded base stays as it is.
        self.basePath = base.contains("%") ? base : base.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? base
    }

    /// What `rawPath` (the request target's path, percent-encoded as sent) names; `query` is kept on redirects.
    public func resolve(rawPath: String, query: String = "") -> Resolution {
        guard rawPath.hasPrefix("/"), rawPath.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) else {
            return .notFound
        }
        guard basePath != "/" else { return resolve(sitePath: rawPath, query: query) }
        if let rest = remainder(afterBaseOf: rawPath) {
            return resolve(sitePath: "/" + rest, query: query, prefix: String(basePath.dropLast()))
        }
        // The server's root and the base without its slash lead to the site's home page.
        if rawPath == "/" || remainder(afterBaseOf: rawPath + "/") == "" { return .redirect(location: basePath + (query.isEmpty ? "" : "?" + query)) }
        return .notFound
    }

    /// The part of `rawPath` after the base path, or nil when it is not under it. Segments are compared
    /// decoded: `%e6%97%a5` is `%E6%97%A5` (RFC 3986 makes the hex digits' case no matter) and `é` is `%C3%A9`.
    private func remainder(afterBaseOf rawPath: String) -> Substring? {
        var rest = Substring(rawPath.dropFirst())
        for segment in basePath.split(separator: "/") {
            guard let slash = rest.firstIndex(of: "/"), rest[..<slash].removingPercentEncoding == segment.removingPercentEncoding else { return nil }
            rest = rest[rest.index(after: slash)...]
        }
        return rest
    }

    /// What `rawPath`, a path of the site under its base path (`prefix`, for redirects), names.
    private func resolve(sitePath rawPath: String, query: String, prefix: String = "") -> Resolution {
        var rawSegments = rawPath.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        let wantsFolder = rawSegments.last == ""
        if wantsFolder { rawSegments.removeLast() }
        var segments: [String] = []
        for raw in rawSegments {
            guard let segment = raw.removingPercentEncoding, Self.isServable(segment) else { return .notFound }
            segments.append(segment)
        }
        guard let realRoot = Self.realPath(root.path) else { return .notFound }
        let candidate = ([root.path] + segments).joined(separator: "/")
        guard let real = Self.realPath(candidate), Self.isInside(real, realRoot) else { return .notFound }
        var status = stat()
        guard stat(real, &status) == 0 else { return .notFound }
        if status.st_mode & S_IFMT == S_IFDIR {
            guard wantsFolder || segments.isEmpty else {
                return .redirect(location: prefix + rawPath + "/" + (query.isEmpty ? "" : "?" + query))
            }
            return file(at: real + "/index.html", name: "index.html", inside: realRoot)
        }
        guard !wantsFolder else { return .notFound }
        return file(at: real, name: segments.last ?? "", inside: realRoot)
    }

    /// The site's own `404.html` at the top of the output folder, when it has one.
    public func notFoundPage() -> URL? {
        guard let realRoot = Self.realPath(root.path),
              case .file(let url, _) = file(at: root.path + "/404.html", name: "404.html", inside: realRoot)
        else { return nil }
        return url
    }

    private func file(at path: String, name: String, inside realRoot: String) -> Resolution {
        guard let real = Self.realPath(path), Self.isInside(real, realRoot) else { return .notFound }
        var status = stat()
        guard stat(real, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return .notFound }
        return .file(URL(fileURLWithPath: real), name: name)
    }

    /// Whether a decoded path segment may name something in the output folder.
    static func isServable(_ segment: String) -> Bool {
        if segment.isEmpty || segment == "." || segment == ".." { return false }
        if segment.contains("/") || segment.contains("\\") || segment.contains("\0") { return false }
        if segment.hasPrefix(".") && segment != ".well-known" { return false }
        // The output writer's temporary files, should their naming ever lose the leading dot.
        if segment.contains(".sitegen-") && segment.hasSuffix(".tmp") { return false }
        return true
    }

    private static func isInside(_ path: String, _ folder: String) -> Bool {
        path == folder || path.hasPrefix(folder == "/" ? "/" : folder + "/")
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
