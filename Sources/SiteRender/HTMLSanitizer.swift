/// Makes untrusted HTML (a feed's content) safe to publish: what it keeps cannot run script in a reader's
/// browser, and ordinary markup (paragraphs, links, images, lists, tables, code) stays as it was.
///
/// The HTML is parsed by libxml2's HTML parser and written out again from the tree, never copied: only
/// elements and attributes of an allowlist (after feedparser's) are written, every text and attribute
/// value escaped, so a browser reads back exactly the tree that was checked. Scripts, styles, SVG and
/// MathML go with their content; frames, objects, forms, `<base>`, `<meta>` and unknown elements are
/// dropped and their content kept, checked as the rest; a URL is kept
/// only when its scheme is http, https or mailto, or it has none (it then leads within the site's own
/// pages). decisions.md 40b has the lists and what they cost.
///
///     HTMLSanitizer.sanitize(#"<p onclick="x()">Hi <script>steal()</script><a href="javascript:x()">a</a></p>"#)
///     // <p>Hi <a>a</a></p>
public enum HTMLSanitizer {
    /// `html` with everything that could run script, load a frame or restyle the page around it removed.
    public static func sanitize(_ html: String) -> String {
        // Text without markup or references is itself.
        guard html.utf8.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: ">") || $0 == 0 }) else {
            return html
        }
        return HTMLFragmentParser.parse(html) { first in
            var writer = SanitizedHTMLWriter()
            writer.write(from: first)
            return writer.output
        }
    }

    /// Elements kept, with the attributes the policy allows.
    static let keptElements: Set<String> = [
        "a", "abbr", "acronym", "address", "article", "aside", "audio", "b", "bdi", "bdo", "big", "blockquote", "br",
        "caption", "center", "cite", "code", "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt", "em",
        "figcaption", "figure", "font", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "i", "img", "ins",
        "kbd", "li", "mark", "nav", "ol", "p", "picture", "pre", "q", "rp", "rt", "ruby", "s", "samp", "section",
        "small", "source", "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
        "thead", "time", "tr", "track", "tt", "u", "ul", "var", "video", "wbr",
    ]

    /// Elements dropped with everything inside them: code, and what is no text of the entry's (a form's
    /// options, a page title, SVG and MathML, whose text alone would be noise). Every other element not
    /// kept is dropped alone and its content kept: an `<iframe>`'s or `<object>`'s fallback, a `<noscript>`'s
    /// image, an unknown element's text (they are written from the tree, so nothing in them stays markup
    /// that was not checked).
    static let droppedWithContent: Set<String> = [
        "script", "style", "template", "svg", "math", "select", "datalist", "textarea", "title", "xmp", "plaintext", "noembed",
    ]

    /// HTML's void elements: no end tag, and nothing inside.
    static let voidElements: Set<String> = ["area", "br", "col", "hr", "img", "source", "track", "wbr"]

    /// Attributes kept on any kept element.
    static let keptAttributes: Set<String> = [
        "abbr", "align", "alt", "border", "cellpadding", "cellspacing", "cite", "class", "color", "colspan",
        "controls", "datetime", "dir", "face", "headers", "height", "href", "hreflang", "hspace", "id", "lang",
        "loop", "muted", "nowrap", "open", "poster", "preload", "rel", "reversed", "rowspan", "scope", "size", "span",
        "src", "srcset", "sizes", "start", "style", "summary", "title", "type", "valign", "value", "vspace", "width",
        "xml:lang", "media", "kind", "srclang", "label", "bgcolor", "clear", "compact", "frame", "rules", "char",
        "charoff", "loading", "decoding",
    ]

    /// Attributes whose value is one URL a browser follows or loads.
    static let urlAttributes: Set<String> = ["href", "src", "cite", "poster"]

    /// CSS properties a `style` attribute may set: colours, borders, spacing, type and alignment; not
    /// `display` or `position`, which can lay an entry's link over the page around it.
    static let keptStyleProperties: Set<String> = [
        "background", "background-color", "border", "border-bottom", "border-collapse", "border-color", "border-left",
        "border-right", "border-style", "border-top", "border-width", "clear", "color", "cursor", "float", "font",
        "font-family", "font-size", "font-style", "font-variant", "font-weight", "height", "letter-spacing",
        "line-height", "margin", "margin-bottom", "margin-left", "margin-right", "margin-top", "overflow", "padding",
        "padding-bottom", "padding-left", "padding-right", "padding-top", "text-align", "text-decoration",
        "text-indent", "vertical-align", "white-space", "width",
    ]
}

/// Writes the kept part of a parsed tree as HTML, walking it without recursion (a document nested a
/// hundred thousand elements deep must not exhaust the stack).
private struct SanitizedHTMLWriter {
    var output = ""

    mutating func write(from first: HTMLNode?) {
        // The open elements above `node`: each with its end tag, nil when it was unwrapped.
        var open: [(node: HTMLNode, endTag: String?)] = []
        var node = first
        while true {
            guard let current = node else {
                guard let (parent, endTag) = open.popLast() else { return }
                if let endTag { output += endTag }
                node = parent.next
                continue
            }
            switch current.kind {
            case .text:
                output += escaped(current.text, quotes: false)
            case .other:
                break
            case .element:
                let name = current.name
                if HTMLSanitizer.droppedWithContent.contains(name) { break }
                var endTag: String?
                if HTMLSanitizer.keptElements.contains(name) {
                    output += "<" + name + keptAttributes(current) + ">"
                    if !HTMLSanitizer.voidElements.contains(name) { endTag = "</" + name + ">" }
                }
                // An unwrapped element (html, body, an unknown tag) keeps its content. So does a void element,
                // kept or not (`<embed>`, `<meta>`, `<input>`): libxml2's HTML 4 rules let some of them hold
                // what follows them, which is written as if they were not there.
                if let child = current.firstChild {
                    open.append((current, endTag))
                    node = child
                    continue
                }
                if let endTag { output += endTag }
            }
            node = current.next
        }
    }

    /// The element's allowed attributes, written ` name="value"`, each value checked and escaped.
    private func keptAttributes(_ element: HTMLNode) -> String {
        var written = ""
        var seen: Set<String> = []
        for (name, value) in element.attributes where HTMLSanitizer.keptAttributes.contains(name) && seen.insert(name).inserted {
            let kept: String?
            switch name {
            case _ where HTMLSanitizer.urlAttributes.contains(name): kept = SafeURL.checked(value)
            case "srcset": kept = SafeURL.checkedCandidates(value)
            case "style": kept = SafeStyle.checked(value)
            default: kept = value
            }
            guard let kept else { continue }
            written += " " + name + "=\"" + escaped(kept, quotes: true) + "\""
        }
        return written
    }

    /// Text escaped so a browser reads it back as the same characters, in an element or a quoted attribute.
    private func escaped(_ text: String, quotes: Bool) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for character in text.unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"" where quotes: result += "&quot;"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}

/// The URL check of `HTMLSanitizer`: a URL with a scheme is kept only when the scheme is http, https or
/// mailto; one without is relative, and leads where the page it is on leads (an http(s) site).
enum SafeURL {
    /// The schemes a kept URL may have.
    static let schemes: Set<String> = ["http", "https", "mailto"]

    /// `value` as a browser reads it (spaces and controls at its ends dropped, tabs and newlines inside),
    /// or nil when its scheme is not allowed.
    static func checked(_ value: String) -> String? {
        // A browser strips C0 controls and spaces at the ends and removes tabs and newlines anywhere; any
        // other control before the colon is dropped here too, so `java\u{1}script:` is not taken for a path.
        let scalars = value.unicodeScalars
        guard let first = scalars.firstIndex(where: { $0.value > 0x20 }) else { return "" }
        let last = scalars.lastIndex { $0.value > 0x20 }!
        var cleaned = String.UnicodeScalarView()
        for scalar in scalars[first...last] where scalar != "\t" && scalar != "\n" && scalar != "\r" { cleaned.append(scalar) }
        var scheme = ""
        for scalar in cleaned {
            if scalar == ":" { return schemes.contains(scheme.lowercased()) ? String(cleaned) : nil }
            // A colon after these is in a path, query or fragment: the URL is relative.
            if scalar == "/" || scalar == "?" || scalar == "#" { break }
            if scalar.value > 0x20 { scheme.unicodeScalars.append(scalar) }
        }
        return String(cleaned)
    }

    /// A `srcset` (`a.png 1x, b.png 2x`) whose every candidate's URL is kept, or nil.
    static func checkedCandidates(_ value: String) -> String? {
        // Each candidate is checked with its spaces taken out: `java\tscript:` is one word to some readers.
        for candidate in value.split(separator: ",") {
            guard checked(String(candidate.unicodeScalars.filter { $0.value > 0x20 }.map(Character.init))) != nil else { return nil }
        }
        return value
    }
}

/// The `style` check of `HTMLSanitizer`: declarations of allowed properties whose values are plain
/// keywords, numbers, lengths and colours; no `url(`, `expression(`, escapes or comments.
enum SafeStyle {
    /// The allowed declarations of `style`, each written `property: value;` (as feedparser writes them), or
    /// nil when none is.
    static func checked(_ style: String) -> String? {
        var kept: [String] = []
        for declaration in style.split(separator: ";") {
            guard let colon = declaration.firstIndex(of: ":") else { continue }
            let property = declaration[..<colon].trimmingSpaces()
            let value = declaration[declaration.index(after: colon)...].trimmingSpaces()
            guard HTMLSanitizer.keptStyleProperties.contains(property.lowercased()), !value.isEmpty, isPlainValue(value) else { continue }
            kept.append(property + ": " + value + ";")
        }
        return kept.isEmpty ? nil : kept.joined(separator: " ")
    }

    /// Whether every word of `value` is a keyword, a number or length, a hex colour or an `rgb()`/`rgba()`
    /// of numbers; a backslash, quote, comment or any other function is refused outright.
    private static func isPlainValue(_ value: String) -> Bool {
        var rest = Substring(value.lowercased())
        // rgb(…) and rgba(…) of digits, dots, commas, percents and spaces, the only parentheses allowed.
        while let open = rest.range(of: "rgb(") ?? rest.range(of: "rgba(") {
            guard let close = rest[open.upperBound...].firstIndex(of: ")"),
                  rest[open.upperBound..<close].allSatisfy({ $0.isASCII && ($0.isNumber || ".,% ".contains($0)) })
            else { return false }
            rest = rest[..<open.lowerBound] + " " + rest[rest.index(after: close)...]
        }
        return rest.split(whereSeparator: { $0 == " " || $0 == "," }).allSatisfy { word in
            word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-.%#!".contains($0)) }
        }
    }
}

extension StringProtocol {
    /// The text without ASCII spaces, tabs and newlines at its ends.
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}
