/// The `Content-Type` the development server sends for each kind of file a site holds.
public enum ContentType {
    /// The media type for a file called `name`, chosen by its extension (feeds by their conventional names).
    public static func of(fileNamed name: String) -> String {
        let lowered = name.lowercased()
        let fileExtension = lowered.lastIndex(of: ".").map { String(lowered[lowered.index(after: $0)...]) } ?? ""
        switch fileExtension {
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json": return "application/json"
        case "xml":
            // sitegen names its feeds atom.xml and rss.xml; a reader opening them should know which they are.
            if lowered.hasSuffix("atom.xml") { return "application/atom+xml; charset=utf-8" }
            if lowered.hasSuffix("rss.xml") { return "application/rss+xml; charset=utf-8" }
            return "application/xml; charset=utf-8"
        case "atom": return "application/atom+xml; charset=utf-8"
        case "rss": return "application/rss+xml; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "txt": return "text/plain; charset=utf-8"
        case "md": return "text/markdown; charset=utf-8"
        case "woff2": return "font/woff2"
        case "woff": return "font/woff"
        case "pdf": return "application/pdf"
        case "avif": return "image/avif"
        case "webmanifest": return "application/manifest+json"
        case "wasm": return "application/wasm"
        case "map": return "application/json"
        case "mp4": return "video/mp4"
        case "webm": return "video/webm"
        case "mp3": return "audio/mpeg"
        case "ogg": return "audio/ogg"
        default: return "application/octet-stream"
        }
    }
}
