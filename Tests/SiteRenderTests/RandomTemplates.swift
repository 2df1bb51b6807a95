@testable import SiteRender
import TestSupport

/// Random template sets and contexts for the differential test: text with newlines, CR LF and
/// indentation, every kind of tag, standalone lines, partials, a layout with blocks, dotted names,
/// transforms, list positions and delimiter changes, over contexts of every kind of value pages have.
struct RandomTemplates {
    private var random: SeededGenerator
    /// The blocks `base` and the templates it uses declare, once generated: what a page's overrides are
    /// mostly drawn from, as sitegen refuses an override its layout lacks.
    private var layoutBlocks: [String]?
    private let site = TemplateText.Site(baseURL: "https://x.org/sub/", allowsRawHTML: false)

    /// The templates of a case: each may name only those after it, so none includes itself.
    static let templateNames = ["main", "p1", "base", "p2", "*which"]
    static let blockNames = ["b1", "b2", "content"]
    static let contextNames = ["a", "b", "c", "n", "flag", "no", "text", "list", "items", "words", "d", "which", "key", "value", "empty"]
    private static let tagNames = contextNames + ["missing", "d.a", "d.items", "d.d.a", "items.a", "a.b", "list.0", ".", ".a", "..", "d.", "a-b?",
                                                  "(a)", "uppercased((a))"]
    private static let transforms = [
        "uppercased", "lowercased", "capitalized", "reversed", "empty", "first", "last", "count", "sorted", "enumerated",
        "plusone", "minusone", "even", "odd", "equalzero", "date", "year", "number", "excerpt", "json", "xml", "absolute", "markdown", "nope",
    ]
    private static let positions = ["index()", "first()", "last()", "even()", "odd()", "plusone(index())", "even(index())"]
    private static let texts = [
        "a", "b c", "<p>", "&", "\"q\"", "'", "é", "日本", " ", "  ", "\t", "x{y", "}}", "e\u{301}", "--", ".", "z",
    ]
    private static let strings = [
        "x", "Hello", "a<b>&\"c'", "", "é", "two words", "line\nbreak", "  spaced  ", "e\u{301}", "日本", "O'Neil & Sons",
        "2024-02-20", "185500000", "/sub/x/", "p2", "cr\r\nlf", "end\n", "\r", "**b** <i>",
    ]

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    private mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &random) < probability }
    private mutating func pick<T>(_ options: [T]) -> T { options.randomElement(using: &random)! }
    private mutating func count(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

    // MARK: Contexts

    /// A page context: most names present, with values of every kind, nested.
    mutating func context() -> [String: Any] {
        dictionary(depth: 0)
    }

    private mutating func dictionary(depth: Int) -> [String: Any] {
        var values: [String: Any] = [:]
        for name in Self.contextNames where chance(depth == 0 ? 0.9 : 0.4) {
            // Always a record's text, for sitegen's helpers (`name()`).
            let value = name == "text" ? TemplateText(pick(Self.strings), site: site) : value(depth: depth + 1)
            // A record's text that names a dynamic partial (`{{>*which}}`) renders that template, where
            // swift-mustache renders nothing (a deliberate difference, TemplateEngineTests): here a name is a string.
            values[name] = name == "which" ? (value as? TemplateText)?.text ?? value : value
        }
        if depth == 0 { values["which"] = "p2" }
        return values
    }

    private mutating func value(depth: Int) -> Any {
        let kinds = depth > 2 ? 4 : 11
        switch count(0...kinds - 1) {
        case 0: return pick(Self.strings)
        case 1: return TemplateText(pick(Self.strings), site: site)
        case 2: return count(-3...12)
        case 3: return chance(0.5)
        case 4: return dictionary(depth: depth)
        case 5: return (0..<count(0...3)).map { _ in dictionary(depth: depth) }
        case 6: return (0..<count(0...3)).map { _ in value(depth: depth + 1) } as [Any]
        case 7: return (0..<count(0...3)).map { _ in TemplateText(pick(Self.strings), site: site) }
        case 8: return (0..<count(0...3)).map { _ in pick(Self.strings) }
        case 9:
            // As a `["name": …, "title": …]` literal of texts is typed.
            var texts: [String: String] = [:]
            for name in Self.contextNames where name != "text" && chance(0.3) { texts[name] = pick(Self.strings) }
            return texts
        default: return chance(0.5) ? pick(Self.strings) : count(0...3)
        }
    }

    /// The names a strict render may find no value for: a random share of them.
    mutating func knownNames() -> Set<String> {
        Set((Self.contextNames + ["missing"]).filter { _ in chance(0.5) })
    }

    // MARK: Templates

    /// The texts of a case's templates, by name; now and then one is cut short or loses a closing tag.
    mutating func templates() -> [(name: String, text: String)] {
        var texts: [(name: String, text: String)] = []
        layoutBlocks = nil
        // From the last, so that the layout's blocks are known when a page extends it.
        for (index, name) in Self.templateNames.enumerated().reversed() {
            let later = Array(Self.templateNames[(index + 1)...].filter { $0 != "*which" })
            var delimiters = ("{{", "}}")
            var text = body(depth: 0, partials: later, blocks: true, delimiters: &delimiters, size: name == "main" ? 10 : 5)
            if chance(0.004) { text = String(text.prefix(count(0...text.count))) }
            texts.insert((name, text), at: 0)
            if name == "base" {
                let loaded = try? TemplateSet(texts: texts.map { ($0.name, $0.name + ".mustache", $0.text) })
                layoutBlocks = loaded?.blocks(declaredBy: "base").map { $0.sorted() }
            }
        }
        return texts
    }

    private mutating func body(depth: Int, partials: [String], blocks: Bool, delimiters: inout (String, String), size: Int) -> String {
        var text = ""
        for _ in 0..<count(1...size) {
            text += element(depth: depth, partials: partials, blocks: blocks, delimiters: &delimiters)
        }
        return text
    }

    private mutating func blanks() -> String {
        pick(["", "", " ", "  ", "\t", " \t "])
    }

    /// Mostly LF, some CR LF, and now and then a character that ends a standalone tag's line but no text line.
    private mutating func newline() -> String {
        let roll = count(0...99)
        return roll < 80 ? "\n" : roll < 94 ? "\r\n" : pick(["\r", "\u{2028}", "\u{0C}", "\u{85}", "\u{0B}"])
    }

    private mutating func tag(_ sigil: String, _ name: String, _ delimiters: (String, String)) -> String {
        let space = chance(0.8) ? " " : pick(["\n", "\u{A0}", "\t", "  "])
        let inner = chance(0.2) ? space + name + space : name
        return delimiters.0 + sigil + inner + delimiters.1
    }

    /// A tag, alone on its line (with indentation) now and then.
    private mutating func placed(_ tag: String) -> String {
        chance(0.35) ? newline() + blanks() + tag + pick(["", "", " "]) + newline() : tag
    }

    private mutating func name() -> String {
        if chance(0.003) { return pick(["a(b", "a()b", "a(b))", "a b"]) }
        let base = chance(0.12) ? pick(Self.positions) : pick(Self.tagNames)
        if base.hasSuffix(")") || !chance(0.3) { return base }
        // sitegen's helpers apply to a value of any kind, swift-mustache's only to a record's text (a deliberate
        // difference, see `TemplateDifferentialTests`): they are drawn innermost, on a text or a missing name.
        let transform = pick(Self.transforms)
        let subject = TemplateText.helperNames.contains(transform) ? pick(["text", "missing", "d.text"]) : base
        let transformed = "\(transform)(\(subject))"
        return chance(0.2) ? "\(pick(Self.transforms.filter { !TemplateText.helperNames.contains($0) }))(\(transformed))" : transformed
    }

    private mutating func element(depth: Int, partials: [String], blocks: Bool, delimiters: inout (String, String)) -> String {
        let roll = count(0...99)
        switch roll {
        case 0..<22:
            return pick(Self.texts)
        case 22..<32:
            return newline() + blanks()
        case 32..<50:
            let sigil = pick(["", "", "", "&", "{"])
            let name = name()
            if sigil == "{" { return delimiters.0 + "{" + name + delimiters.1 + "}" }
            return tag(sigil, name, delimiters)
        case 50..<66 where depth < 3:
            let name = name()
            var inner = delimiters
            let open = placed(tag(pick(["#", "#", "^"]), name, delimiters))
            let content = body(depth: depth + 1, partials: partials, blocks: blocks, delimiters: &inner, size: 4)
            let close = chance(0.003) ? tag("/", "other", inner) : tag("/", name, inner)
            return open + content + placed(close)
        case 66..<72:
            return placed(tag("!", pick([" note ", "multi\nline", ""]), delimiters))
        case 72..<80 where !partials.isEmpty:
            return placed(tag(">", chance(0.3) ? " \(pick(partials)) " : pick(partials), delimiters))
        case 80..<84 where partials.contains("base"):
            return parent(depth: depth, partials: partials, delimiters: delimiters)
        case 84..<90 where depth < 3 && blocks:
            let name = pick(Self.blockNames)
            var inner = delimiters
            let content = body(depth: depth + 1, partials: partials, blocks: blocks, delimiters: &inner, size: 3)
            return placed(tag("$", name, delimiters)) + content + placed(tag("/", name, inner))
        case 90..<93:
            // Not one-character delimiters: swift-mustache traps on a section that closes less than two
            // characters after it opens with them (it steps back two characters to find the section's text).
            let changed = pick([("<%", "%>"), ("[[", "]]"), ("{{", "}}")])
            let text = placed(delimiters.0 + "=\(changed.0) \(changed.1)=" + delimiters.1)
            delimiters = changed
            return text
        case 93..<95:
            return placed(tag("%", pick(["CONTENT_TYPE:TEXT", "CONTENT_TYPE: HTML", "CONTENT_TYPE:TEXT "]), delimiters))
        case 95..<97 where partials.contains("p2"):
            return placed(tag(">", "*which", delimiters))
        default:
            // A lone `{` before a tag makes a triple mustache of it.
            return chance(0.02) ? "{" : pick(Self.texts)
        }
    }

    /// `{{<base}}` with block overrides (and, rarely, something a parent body may not hold).
    private mutating func parent(depth: Int, partials: [String], delimiters: (String, String)) -> String {
        // Overrides render inside the layout, where every block takes the outermost page's override: one
        // holding a block, or a partial that may hold one, would render itself without end.
        let dynamic = partials.contains("p2") && chance(0.1)
        let name = dynamic ? "*which" : "base"
        var text = placed(tag("<", name, delimiters))
        for _ in 0..<count(0...3) {
            switch count(0...9) {
            case 0..<2: text += newline() + blanks()
            case 2: text += tag("!", " c ", delimiters)
            case 3:
                let junk = [tag("", "a", delimiters), delimiters.0 + "={{ }}=" + delimiters.1, tag("%", "CONTENT_TYPE:TEXT", delimiters)]
                text += chance(0.1) ? pick(junk) : "ignored"
            default:
                // Now and then a block the layout lacks, which sitegen refuses.
                let declared = dynamic || chance(0.05) ? nil : layoutBlocks
                guard declared?.isEmpty != true else { continue }
                let name = pick(declared ?? Self.blockNames)
                var inner = delimiters
                let content = body(depth: depth + 1, partials: [], blocks: false, delimiters: &inner, size: 3)
                text += placed(blanks() + tag("$", name, delimiters)) + content + placed(tag("/", name, inner))
            }
        }
        return text + placed(tag("/", name, delimiters))
    }
}
