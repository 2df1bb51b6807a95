import CCmarkGFM
import Foundation

/// Renders GitHub-flavoured Markdown to HTML with cmark-gfm: tables, strikethrough, autolinks,
/// task lists and footnotes (not the tag filter: raw HTML, when allowed, is the site's own).
///
/// Raw HTML in the Markdown is replaced by a comment unless `allowsRawHTML` is set (a site's `unsafe: true`).
public struct MarkdownRenderer: Sendable {
    /// Whether raw HTML blocks and inline HTML pass through.
    public var allowsRawHTML: Bool
    /// The path the site is published under (`baseURL`'s, ending with `/`): links and images written from
    /// the site's root (`[About](/about/)`) lead under it (`/project/about/`), as the site's own links do.
    public var basePath: String

    /// What colours fenced code in a language it knows (`highlight:` in `sitegen.yml`); nil leaves every block
    /// as `<pre><code class="language-…">` for a highlighter in the browser.
    public var highlighter: CodeHighlighter?

    /// Makes a renderer; raw HTML is omitted unless allowed, and code is not highlighted unless given a highlighter.
    public init(allowsRawHTML: Bool = false, basePath: String = "/", highlighter: CodeHighlighter? = nil) {
        self.allowsRawHTML = allowsRawHTML
        self.basePath = basePath
        self.highlighter = highlighter
    }

    /// The HTML for `markdown`.
    public func html(_ markdown: String) -> String {
        // Without raw HTML, an opening `<h1>`…`<h6>` in the HTML can only be a heading's (text, code and
        // attributes are escaped), so the ids go into the rendered page: rendering each heading alone as
        // well was a sixth of a Markdown body's cost.
        if !allowsRawHTML, let html = render(markdown, idsInHTML: true) { return html }
        return render(markdown, idsInHTML: false) ?? ""
    }

    /// The HTML for `markdown`, with the headings' ids put into the rendered HTML (`idsInHTML`) or into
    /// the document before it is rendered; nil when the HTML's heading tags do not match the headings one
    /// to one (then the ids must go into the document). Both ways give the same bytes when no raw HTML is
    /// in the page, which a test checks.
    func render(_ markdown: String, idsInHTML: Bool) -> String? {
        _ = Self.registerExtensions
        // Not CMARK_OPT_SMART: GitHub keeps quotes and dashes as written (`--full` stays a flag, not an en dash).
        // Not CMARK_OPT_GITHUB_PRE_LANG: code blocks carry `class="language-python"`, which Prism and
        // highlight.js look for (CommonMark's form, as Hugo and Jekyll write it), not `<pre lang>`.
        // Footnotes (`[^1]`) as GitHub renders them. A table column's alignment as a style: HTML5 has no
        // `align` attribute, and validators report every aligned cell.
        var options = CMARK_OPT_FOOTNOTES | CMARK_OPT_TABLE_PREFER_STYLE_ATTRIBUTES
        if allowsRawHTML { options |= CMARK_OPT_UNSAFE }
        guard let parser = cmark_parser_new(options) else { return "" }
        defer { cmark_parser_free(parser) }
        // Not GFM's tag filter: it escapes `<iframe>`, `<script>` and `<style>`, which a site that turns raw
        // HTML on (`unsafe: true`) writes for its embeds, as Hugo's `unsafe` and Jekyll publish them; with
        // raw HTML off, every tag is left out anyway.
        for name in ["table", "strikethrough", "autolink", "tasklist"] {
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
        if basePath != "/" { Self.rebase(document, under: basePath) }
        var headingNodes: [OpaquePointer] = [], codeBlocks: [OpaquePointer] = []
        Self.collectBlocks(under: document, headings: &headingNodes, codeBlocks: &codeBlocks)
        if let highlighter { Self.highlight(codeBlocks, with: highlighter) }
        let headings = Self.headings(headingNodes)
        if idsInHTML {
            guard let rendered = cmark_render_html(document, options, extensions) else { return "" }
            defer { free(rendered) }
            return headings.isEmpty ? String(cString: rendered) : Self.addingIDs(of: headings, to: rendered)
        }
        anchorHeadings(headings, options: options, extensions: extensions)
        guard let rendered = cmark_render_html(document, options, extensions) else { return "" }
        defer { free(rendered) }
        return String(cString: rendered)
    }

    /// Replaces each fenced block of `codeBlocks` in a language `highlighter` knows by the same `<pre><code
    /// class="language-…">` with its tokens in spans (a custom block, which cmark-gfm writes as it is).
    /// Others stay as cmark-gfm writes them.
    private static func highlight(_ codeBlocks: [OpaquePointer], with highlighter: CodeHighlighter) {
        for block in codeBlocks {
            // As cmark-gfm names a block's language: the info string's first word.
            guard let info = cmark_node_get_fence_info(block), let literal = cmark_node_get_literal(block) else { continue }
            let language = String(cString: info).prefix { !" \t\n\r\u{0B}\u{0C}".contains($0) }
            guard !language.isEmpty, let code = highlighter.html(of: String(cString: literal), language: String(language)),
                  let custom = cmark_node_new(CMARK_NODE_CUSTOM_BLOCK) else { continue }
            cmark_node_set_on_enter(custom, "<pre><code class=\"language-" + escapeXML(String(language)) + "\">" + code + "</code></pre>\n")
            cmark_node_set_on_exit(custom, "")
            cmark_node_replace(block, custom)
            cmark_node_free(block)
        }
    }

    /// Puts the links and images of `document` written from the site's root (`/about/`, not `//host/` nor one
    /// already under `basePath`) under `basePath`. Only a site published under a path walks its documents.
    private static func rebase(_ document: OpaquePointer, under basePath: String) {
        guard let iterator = cmark_iter_new(document) else { return }
        defer { cmark_iter_free(iterator) }
        while case let event = cmark_iter_next(iterator), event != CMARK_EVENT_DONE {
            guard event == CMARK_EVENT_ENTER, let node = cmark_iter_get_node(iterator) else { continue }
            let type = cmark_node_get_type(node)
            guard type == CMARK_NODE_LINK || type == CMARK_NODE_IMAGE, let url = cmark_node_get_url(node) else { continue }
            let link = String(cString: url)
            // `/proj`, `/proj?x` and `/proj#top` are the base itself.
            let base = basePath.dropLast()
            guard link.hasPrefix("/"), !link.hasPrefix("//"), !link.hasPrefix(basePath), link != base,
                  !link.hasPrefix(base + "?"), !link.hasPrefix(base + "#") else { continue }
            _ = cmark_node_set_url(node, basePath + link.dropFirst())
        }
    }

    /// A heading of a document, with its level and the `id` it gets.
    private struct Heading {
        let node: OpaquePointer
        let level: Int32
        let slug: String
    }

    /// The headings `nodes`, in document order, each with GitHub's anchor for its text (`## Closing date`
    /// is `closing-date`, a repeat `closing-date-1`).
    private static func headings(_ nodes: [OpaquePointer]) -> [Heading] {
        // As github-slugger counts: a repeat takes the next free `-n`, and every id given is taken, so a
        // heading whose own text is `Intro 1` after two `Intro`s is `intro-1-1`.
        var repeats: [String: Int] = [:]
        return nodes.map { node in
            var original = Self.slug(Self.plainText(of: node))
            if original.isEmpty { original = "section" }
            var slug = original
            while repeats[slug] != nil {
                repeats[original, default: 0] += 1
                slug = original + "-\(repeats[original]!)"
            }
            repeats[slug] = 0
            return Heading(node: node, level: cmark_node_get_heading_level(node), slug: slug)
        }
    }

    /// `html` with `id="…"` added to its opening heading tags, one per heading of `headings` in order;
    /// nil unless the tags and the headings match one to one, level for level.
    private static func addingIDs(of headings: [Heading], to html: UnsafePointer<CChar>) -> String? {
        let count = strlen(html)
        let bytes = UnsafeRawPointer(html).assumingMemoryBound(to: UInt8.self)
        // Where each `<hN` ends, the `id` goes.
        var insertions: [Int] = []
        insertions.reserveCapacity(headings.count)
        var index = 0
        while index + 3 < count, let found = memchr(bytes + index, Int32(UInt8(ascii: "<")), count - 3 - index) {
            index = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - bytes
            let level = bytes[index + 2]
            if bytes[index + 1] == UInt8(ascii: "h"), bytes[index + 3] == UInt8(ascii: ">"),
               level >= UInt8(ascii: "1"), level <= UInt8(ascii: "6")
            {
                let number = insertions.count
                guard number < headings.count, Int32(level - UInt8(ascii: "0")) == headings[number].level else { return nil }
                insertions.append(index + 3)
                index += 4
            } else {
                index += 1
            }
        }
        guard insertions.count == headings.count else { return nil }
        let total = count + headings.reduce(0) { $0 + Self.idOpening.count + $1.slug.utf8.count + 1 }
        return String(unsafeUninitializedCapacity: total) { buffer in
            var written = 0, copied = 0
            func append(_ source: UnsafeRawPointer, _ length: Int) {
                (buffer.baseAddress! + written).initialize(from: source.assumingMemoryBound(to: UInt8.self), count: length)
                written += length
            }
            for (heading, offset) in zip(headings, insertions) {
                append(bytes + copied, offset - copied)
                copied = offset
                append(Self.idOpening, Self.idOpening.count)
                var slug = heading.slug
                slug.withUTF8 { append($0.baseAddress!, $0.count) }
                buffer[written] = UInt8(ascii: "\"")
                written += 1
            }
            append(bytes + copied, count - copied)
            return written
        }
    }

    private static let idOpening = Array(#" id=""#.utf8)

    /// Gives every heading its `id` in the document itself, where raw HTML may hold heading tags of its own.
    ///
    /// cmark-gfm's HTML renderer writes no attributes on headings, so each heading is rendered alone
    /// (with the same options, so raw HTML is still withheld unless allowed) and replaced by a custom
    /// block holding that HTML with the `id` added.
    private func anchorHeadings(_ headings: [Heading], options: Int32, extensions: UnsafeMutablePointer<cmark_llist>?) {
        for heading in headings {
            guard let rendered = cmark_render_html(heading.node, options, extensions) else { continue }
            let html = String(cString: rendered)
            free(rendered)
            let opening = "<h\(heading.level)>"
            guard html.hasPrefix(opening), let block = cmark_node_new(CMARK_NODE_CUSTOM_BLOCK) else { continue }
            let anchored = "<h\(heading.level) id=\"\(heading.slug)\">" + html.dropFirst(opening.count)
            cmark_node_set_on_enter(block, anchored)
            cmark_node_set_on_exit(block, "")
            cmark_node_replace(heading.node, block)
            cmark_node_free(heading.node)
        }
    }

    /// Adds the headings and (when asked for) the code blocks among `node`'s blocks, in document order. Only
    /// blocks are walked: a heading is a block, never inside a paragraph's or heading's inlines, which are
    /// most of a document's nodes. The walk keeps no stack (a line of 100,000 list markers nests 100,000
    /// blocks, deeper than a thread's stack took as calls).
    private static func collectBlocks(under root: OpaquePointer, headings: inout [OpaquePointer], codeBlocks: inout [OpaquePointer]) {
        var current = cmark_node_first_child(root)
        while let block = current {
            let type = cmark_node_get_type(block)
            if type == CMARK_NODE_HEADING {
                headings.append(block)
            } else if type == CMARK_NODE_CODE_BLOCK {
                codeBlocks.append(block)
            } else if type != CMARK_NODE_PARAGRAPH, Int32(type.rawValue) & CMARK_NODE_TYPE_MASK == CMARK_NODE_TYPE_BLOCK,
                      let first = cmark_node_first_child(block) {
                current = first
                continue
            }
            // The next block: a sibling, or the sibling of the nearest enclosing block that has one.
            var node = block
            current = nil
            while true {
                if let next = cmark_node_next(node) {
                    current = next
                    break
                }
                guard let parent = cmark_node_parent(node), parent != root else { break }
                node = parent
            }
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
        // Most headings are ASCII, whose letters and digits need no look-up in Unicode's tables (the
        // look-ups were half of finding a body's headings).
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return unicodeSlug(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): bytes.append(byte + 32)
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                bytes.append(byte)
            case UInt8(ascii: " "): bytes.append(UInt8(ascii: "-"))
            default: break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `slug` for any text, through Unicode's letters and numbers.
    static func unicodeSlug(_ text: String) -> String {
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
