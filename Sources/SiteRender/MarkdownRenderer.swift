import CCmarkGFM
import Foundation

/// Renders GitHub-flavoured Markdown to HTML with cmark-gfm: tables, strikethrough, autolinks,
/// task lists and the tag filter.
///
/// Raw HTML in the Markdown is replaced by a comment unless `allowsRawHTML` is set (a site's `unsafe: true`).
public struct MarkdownRenderer: Sendable {
    /// Whether raw HTML blocks and inline HTML pass through.
    public var allowsRawHTML: Bool

    /// Makes a renderer; raw HTML is omitted unless allowed.
    public init(allowsRawHTML: Bool = false) {
        self.allowsRawHTML = allowsRawHTML
    }

    /// The HTML for `markdown`.
    public func html(_ markdown: String) -> String {
        _ = Self.registerExtensions
        var options = CMARK_OPT_SMART | CMARK_OPT_GITHUB_PRE_LANG
        if allowsRawHTML { options |= CMARK_OPT_UNSAFE }
        guard let parser = cmark_parser_new(options) else { return "" }
        defer { cmark_parser_free(parser) }
        for name in ["table", "strikethrough", "autolink", "tasklist", "tagfilter"] {
            if let extensionHandle = cmark_find_syntax_extension(name) {
                cmark_parser_attach_syntax_extension(parser, extensionHandle)
            }
        }
        cmark_parser_feed(parser, markdown, markdown.utf8.count)
        guard let document = cmark_parser_finish(parser) else { return "" }
        defer { cmark_node_free(document) }
        guard let rendered = cmark_render_html(document, options, cmark_parser_get_syntax_extensions(parser)) else {
            return ""
        }
        defer { free(rendered) }
        return String(cString: rendered)
    }

    // Registration mutates a global registry; a static `let` runs it exactly once, thread-safely.
    private static let registerExtensions: Void = cmark_gfm_core_extensions_ensure_registered()
}
