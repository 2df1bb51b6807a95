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
        // cmark-gfm parses inlines with a process-wide table of special characters that each parse adds the
        // extensions' characters to and takes them out of at its end: two parses at once drop each other's
        // `~` and autolinks. Render workers call this at once, so the inline pass (`cmark_parser_finish`)
        // is one at a time. The block pass (`cmark_parser_feed`) never reads the table: a third of a parse
        // that the other workers need not wait for.
        cmark_parser_feed(parser, markdown, markdown.utf8.count)
        let document = Self.parsing.withLock { cmark_parser_finish(parser) }
        guard let document else { return "" }
        defer { cmark_node_free(document) }
        let extensions = cmark_parser_get_syntax_extensions(parser)
        anchorHeadings(in: document, options: options, extensions: extensions)
        guard let rendered = cmark_render_html(document, options, extensions) else { return "" }
        defer { free(rendered) }
        return String(cString: rendered)
    }

    /// Gives every heading an `id` made from its text, as GitHub does (`## Closing date` is
    /// `<h2 id="closing-date">`, a repeat `closing-date-1`), so a section can be linked to.
    ///
    /// cmark-gfm's HTML renderer writes no attributes on headings, so each heading is rendered alone
    /// (with the same options, so raw HTML is still withheld unless allowed) and replaced by a custom
    /// block holding that HTML with the `id` added.
    private func anchorHeadings(in document: OpaquePointer, options: Int32, extensions: UnsafeMutablePointer<cmark_llist>?) {
        var headings: [OpaquePointer] = []
        Self.collectHeadings(under: document, into: &headings)
        var used: [String: Int] = [:]
        for heading in headings {
            guard let rendered = cmark_render_html(heading, options, extensions) else { continue }
            let html = String(cString: rendered)
            free(rendered)
            let level = cmark_node_get_heading_level(heading)
            let opening = "<h\(level)>"
            guard html.hasPrefix(opening), let block = cmark_node_new(CMARK_NODE_CUSTOM_BLOCK) else { continue }
            var slug = Self.slug(Self.plainText(of: heading))
            if slug.isEmpty { slug = "section" }
            if let count = used[slug] {
                used[slug] = count + 1
                slug += "-\(count)"
            } else {
                used[slug] = 1
            }
            let anchored = "<h\(level) id=\"\(slug)\">" + html.dropFirst(opening.count)
            cmark_node_set_on_enter(block, anchored)
            cmark_node_set_on_exit(block, "")
            cmark_node_replace(heading, block)
            cmark_node_free(heading)
        }
    }

    /// Adds the headings among `node`'s blocks, in document order. Only blocks are walked: a heading is
    /// a block, never inside a paragraph's or heading's inlines, which are most of a document's nodes.
    private static func collectHeadings(under node: OpaquePointer, into headings: inout [OpaquePointer]) {
        var child = cmark_node_first_child(node)
        while let block = child {
            let type = cmark_node_get_type(block)
            if type == CMARK_NODE_HEADING {
                headings.append(block)
            } else if type != CMARK_NODE_PARAGRAPH,
                Int32(type.rawValue) & CMARK_NODE_TYPE_MASK == CMARK_NODE_TYPE_BLOCK
            {
                collectHeadings(under: block, into: &headings)
            }
            child = cmark_node_next(block)
        }
    }

    /// The text of a node's inline content, as a reader sees it.
    private static func plainText(of node: OpaquePointer) -> String {
        var text = ""
        let iterator = cmark_iter_new(node)
        defer { cmark_iter_free(iterator) }
        while cmark_iter_next(iterator) != CMARK_EVENT_DONE {
            guard let child = cmark_iter_get_node(iterator), cmark_iter_get_event_type(iterator) == CMARK_EVENT_ENTER else { continue }
            switch cmark_node_get_type(child) {
            case CMARK_NODE_TEXT, CMARK_NODE_CODE:
                if let literal = cmark_node_get_literal(child) { text += String(cString: literal) }
            case CMARK_NODE_SOFTBREAK, CMARK_NODE_LINEBREAK:
                text += " "
            default:
                break
            }
        }
        return text
    }

    /// GitHub's anchor for a heading's text: lower case, letters, digits, `-` and `_` kept, spaces as `-`.
    static func slug(_ text: String) -> String {
        var slug = ""
        for character in text.lowercased() {
            if character == " " {
                slug.append("-")
            } else if character.isLetter || character.isNumber || character == "-" || character == "_" {
                slug.append(character)
            }
        }
        return slug
    }

    /// Held while cmark-gfm parses (see `html`).
    private static let parsing = NSLock()

    // Registration mutates a global registry; a static `let` runs it exactly once, thread-safely.
    private static let registerExtensions: Void = cmark_gfm_core_extensions_ensure_registered()
}
