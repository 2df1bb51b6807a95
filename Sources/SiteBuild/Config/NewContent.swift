import Foundation
import SiteRender

/// A new content file as `sitegen new post "A title"` writes it: `content/posts/a-title.md`, from the site's
/// `archetypes/post.md` when it has one (Hugo's archetypes), else with front matter of the title and today's date.
///
/// ```swift
/// let path = try NewContent.write(kind: "post", title: "A title", site: URL(fileURLWithPath: "."))
/// // "content/posts/a-title.md"
/// ```
public enum NewContent {
    /// Why no file was written.
    public enum Failure: Error, CustomStringConvertible, Equatable {
        /// A file is there already: it is the user's, and stays.
        case exists(String)
        /// The title makes no file name (only signs).
        case emptyName(String)

        public var description: String {
            switch self {
            case .exists(let path): "\(path) is there already; pick another title, or edit that file"
            case .emptyName(let title): "'\(title)' makes no file name; use a title with letters or digits"
            }
        }
    }

    /// The front matter written when the site has no archetype for the kind.
    static let defaultArchetype = """
        ---
        title: {{title}}
        date: {{date}}
        ---

        """

    /// Writes a `kind` (`post`) titled `title` into `site`'s `content/<kind>s/` and returns its path there.
    /// In the archetype, `{{title}}` is the title as a YAML string, `{{date}}` now (UTC, to the second) and
    /// `{{slug}}` the file name without `.md`.
    public static func write(kind: String, title: String, site: URL, now: Date = Date()) throws -> String {
        let slug = slugify(title)
        guard !slug.isEmpty else { throw Failure.emptyName(title) }
        let path = "content/\(kind)s/\(slug).md"
        let url = site.appendingPathComponent(path)
        guard !FileManager.default.fileExists(atPath: url.path) else { throw Failure.exists(path) }
        let archetype = site.appendingPathComponent("archetypes/\(kind).md")
        let template = (try? String(contentsOf: archetype, encoding: .utf8)) ?? defaultArchetype
        let date = ISO8601DateFormatter.string(from: now, timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime])
        let text = template.replacingOccurrences(of: "{{title}}", with: yamlString(title))
            .replacingOccurrences(of: "{{date}}", with: date).replacingOccurrences(of: "{{slug}}", with: slug)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        // Not over a file made meanwhile (two editors, or a save racing this).
        guard FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8)) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        return path
    }

    /// `text` as a double-quoted YAML string, which any title can be (`A title: part 2`, `"quoted"`).
    static func yamlString(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
