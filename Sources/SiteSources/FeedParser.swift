import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads RSS (0.9x, 1.0, 2.0) and Atom (0.3, 1.0) documents as a stream of parser events, and JSON Feed.
///
/// Items keep their line so warnings can name it; a malformed document fails with the line and column
/// where the XML parser stopped.
public struct FeedParser {
    /// The file name used in errors.
    public let file: String

    /// The largest document handed to the XML parser in one piece (libxml2's own limit is 10,000,000 bytes).
    static let wholeDocumentLimit = 4 << 20

    /// Makes a parser whose errors name `file`.
    public init(file: String) {
        self.file = file
    }

    /// Parses the document in `data`: JSON Feed when it starts with `{`, else RSS or Atom.
    public func parse(_ data: Data) throws(SourceError) -> FeedDocument {
        let firstByte = data.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if firstByte == UInt8(ascii: "{") { return try JSONFeedParser(file: file).parse(data) }
        // XML may be UTF-16, and is decoded so below; JSON may not (RFC 8259), and was reported as bad XML.
        if isUTF16(Array(data.prefix(64))), data.first(where: { ![0x00, 0xFF, 0xFE, 0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") {
            throw SourceError(file: file, line: 1, reason: "is UTF-16 text, not UTF-8; save the file as UTF-8")
        }
        var utf8 = XMLEncoding.utf8(data)
        var encodingWarning: SourceError?
        // Bytes that are not the UTF-8 they claim to be: read as Windows-1252, as browsers and feed readers
        // do, with a warning (FoundationXML would crash on some of them).
        if let declared = XMLEncoding.unsupportedEncoding(utf8) {
            utf8 = XMLEncoding.fromWindows1252(utf8)
            encodingWarning = SourceError(file: file, line: 1, reason: "the encoding '\(declared)' is not supported; read as Windows-1252")
        } else if let position = XMLEncoding.invalidUTF8Position(utf8) {
            utf8 = XMLEncoding.fromWindows1252(utf8)
            encodingWarning = SourceError(file: file, line: position.line, column: position.column,
                                          reason: "not valid UTF-8; read as Windows-1252 (declare the encoding in the XML declaration to say otherwise)")
        }
        let (cleanedBytes, cleaner) = XMLCleaner.cleaning([UInt8](utf8))
        let cleaned = Data(cleanedBytes)
        // Handed over whole, a document past 10,000,000 bytes is one libxml2 will not look through
        // ("huge input lookup", error 1); a stream hands it over a chunk at a time, as a file's is.
        let parser = cleaned.count > Self.wholeDocumentLimit ? XMLParser(stream: InputStream(data: cleaned)) : XMLParser(data: cleaned)
        let delegate = FeedParserDelegate(file: file, parser: parser)
        if let encodingWarning { delegate.warnings.append(encodingWarning) }
        return try run(parser, delegate, cleaningWarnings: { cleaner.warnings(file: file) },
                       undeclaredEntity: { cleaner.undeclaredEntityReason(atLine: $0) })
    }

    /// Parses the feed file at `url` as it is read, in constant memory, handing each item to `emit` (the
    /// document returned holds no items); `prescan` is a first pass over the same bytes. A document that
    /// cannot be parsed as a stream (UTF-16, Windows-1252, broken UTF-8) is decoded whole.
    public func parse(contentsOf url: URL, prescan: FeedPrescan, emit: (FeedItem) throws(SourceError) -> Void) throws(SourceError) -> FeedDocument {
        if prescan.isJSON {
            var input = try SourceInput(contentsOf: url, displayName: file)
            return try JSONFeedParser(file: file).parse(&input, emit: emit)
        }
        guard prescan.allowsStreaming, let stream = CleanedFeedStream(file: url) else {
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw SourceError(file: file, reason: "cannot be read: \(error.localizedDescription)")
            }
            var document = try parse(data)
            for item in document.items { try emit(item) }
            document.items = []
            return document
        }
        let parser = XMLParser(stream: stream)
        let delegate = FeedParserDelegate(file: file, parser: parser)
        var failure: SourceError?
        let document = try withoutActuallyEscaping(emit) { (emit: @escaping (FeedItem) throws(SourceError) -> Void) throws(SourceError) in
            delegate.onItem = { item in
                guard failure == nil else { return }
                do throws(SourceError) {
                    try emit(item)
                } catch {
                    // The reader of the items has stopped: so does the parse, at once.
                    failure = error
                    stream.stopped = true
                    parser.abortParsing()
                }
            }
            defer { delegate.onItem = nil }
            return try run(parser, delegate, stoppedBy: { failure }, cleaningWarnings: { stream.cleaningWarnings(file: file) },
                           undeclaredEntity: { stream.undeclaredEntityReason(atLine: $0) })
        }
        return document
    }

    /// Runs the parse and turns what the delegate collected, or the first error, into the result.
    private func run(_ parser: XMLParser, _ delegate: FeedParserDelegate,
                     stoppedBy failure: () -> SourceError? = { nil }, cleaningWarnings: () -> [SourceError],
                     undeclaredEntity: (Int) -> String?) throws(SourceError) -> FeedDocument
    {
        parser.delegate = delegate
        parser.shouldProcessNamespaces = true
        let finished = parser.parse()
        if let failure = failure() { throw failure }
        // libxml2 recovers from some errors (a mismatched tag) and parse() still returns true; a feed that
        // is not well-formed fails all the same: leniency would turn a truncated download into deletions.
        if let error = delegate.firstError {
            // libxml2 names no entity: the cleaner saw which reference it stopped at.
            let named = error.code == 26 || error.code == 27 ? undeclaredEntity(error.line) : nil
            throw SourceError(file: file, line: error.line, column: error.column, reason: "not well-formed XML: \(named ?? Self.reason(error.code))")
        }
        if delegate.kind == nil {
            throw SourceError(file: file, line: 1, reason: "not a feed: expected an <rss>, <rdf:RDF> or <feed> root element")
        }
        if !finished {
            throw SourceError(file: file, line: parser.lineNumber, reason: "the XML parser stopped without saying why")
        }
        // Nested declarations that would make megabytes of each reference (the "billion laughs") are left
        // out, and HTML entity names read: both are said.
        return FeedDocument(kind: delegate.kind!, title: delegate.feedTitle, link: delegate.feedLink,
                            items: delegate.items, warnings: cleaningWarnings() + delegate.warnings)
    }
}

extension FeedParser {
    /// The text an HTML fragment of a feed shows: tags dropped, character references decoded.
    public static func plainText(ofHTML html: String) -> String { FeedParserDelegate.plainText(ofHTML: html) }

    /// A reader's explanation of the XML parser's error code (its own message is only the code).
    ///
    /// The codes are libxml2's `xmlParserErrors`, which FoundationXML passes through on Linux; its own
    /// `XMLParser.ErrorCode` enum is numbered differently there, so it cannot decode them.
    static func reason(_ code: Int) -> String {
        switch code {
        case 3, 4: return "the document is empty or does not start with XML"
        case 5: return "the document ends before its elements are closed"
        case 6, 7, 8, 10, 11, 12: return "a malformed character reference (&#...;)"
        case 9: return "a character that XML does not allow (often a wrong encoding declaration)"
        case 14, 15, 16, 22, 23: return "a '&' that does not start an entity; write &amp;"
        case 26, 27: return "a reference to an entity that is not declared; write &amp; for a literal '&'"
        case 31, 32, 81: return "an encoding this parser does not support"
        case 38: return "a '<' inside an attribute value"
        case 39, 40, 41: return "a malformed attribute"
        case 42: return "an attribute appears twice in one tag"
        case 45: return "a comment is not closed"
        case 63: return "a CDATA section is not closed"
        case 68: return "expected a name"
        case 72: return "expected '<' to start a tag"
        case 73: return "expected '>' to end a tag"
        case 74: return "expected '</' to close an element"
        case 76: return "a closing tag does not match the element it closes"
        case 77: return "a tag is not finished"
        case 79: return "an encoding name the parser does not recognise"
        case 80: return "'--' inside a comment"
        case 85: return "elements are not properly nested"
        case 86: return "text after the end of the document element"
        case 512: return "parsing was stopped"
        case 6000...6004: return "bytes the declared encoding cannot convert"
        default: return "XML error \(code)"
        }
    }
}

private let atomNamespace10 = "http://www.w3.org/2005/Atom"
private let atomNamespace03 = "http://purl.org/atom/ns#"
private let contentNamespace = "http://purl.org/rss/1.0/modules/content/"
private let dublinCoreNamespace = "http://purl.org/dc/elements/1.1/"
private let itunesNamespace = "http://www.itunes.com/dtds/podcast-1.0.dtd"

/// Collects items from XMLParser's events; one per parse.
private final class FeedParserDelegate: NSObject, XMLParserDelegate {
    let file: String
    unowned let parser: XMLParser
    var kind: FeedDocument.Kind?
    var feedTitle: String?
    var feedLink: String?
    var items: [FeedItem] = []
    /// When set, each item goes here as it ends instead of into `items`.
    var onItem: ((FeedItem) -> Void)?
    var warnings: [SourceError] = []
    /// The first error the XML parser reported, where it was.
    var firstError: (code: Int, line: Int, column: Int)?
    private var warnedOfNamespaces = false

    private var stack: [(name: String, namespace: String)] = []
    /// The base URI in force at each open element (XML Base: `xml:base` resolved against its parent's).
    private var bases: [URL?] = []
    private var text = ""
    /// Inside a text construct (title, summary, content…), child elements are markup to keep, not fields:
    /// the depth of that construct in `stack`, and whether its text is base64 (Atom 0.3 `mode="base64"`).
    private var markupDepth: Int?
    private var isBase64 = false
    private var isXHTML = false
    /// Whether the construct is plain text (Atom's `type="text"`, its default), which sitegen keeps as
    /// HTML in `summary` and `content` (so it is escaped) and as text in `title`.
    private var isPlainText = false
    /// The construct's content as markup (text escaped, child elements serialized), used once it has children.
    private var markup = ""
    private var hasMarkup = false
    private static let coreNamespaces: Set<String> = [
        "", "http://purl.org/rss/1.0/", "http://my.netscape.com/rdf/simple/0.9/", "http://backend.userland.com/rss2",
        "http://backend.userland.com/rss", atomNamespace10, atomNamespace03,
    ]
    private static let voidElements: Set<String> = ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                                                    "source", "track", "wbr"]
    private static let textConstructs: Set<String> = ["title", "summary", "content", "description", "encoded", "subtitle", "tagline", "info", "body"]
    private var item: [String: String]?
    /// The XML base in force where the item's content and summary were, by field.
    private var itemBases: [String: URL] = [:]
    private var itemCategories: [String] = []
    private var itemEnclosures: [Enclosure] = []
    private var itemLine = 0
    /// The depth of the open item's element in `stack`: its own fields are the elements one deeper.
    private var itemDepth = 0
    private var isAtom: Bool { kind == .atom10 || kind == .atom03 }

    init(file: String, parser: XMLParser) {
        self.file = file
        self.parser = parser
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        let namespace = Self.namespace(namespaceURI, qualifiedName)
        if stack.isEmpty {
            switch name {
            case "rss":
                switch attributes["version"] {
                case "0.91": kind = .rss091
                case "0.92": kind = .rss092
                case "0.90": kind = .rss090
                default: kind = .rss20
                }
            case "RDF": kind = .rss10
            case "feed": kind = namespace == atomNamespace03 || attributes["version"] == "0.3" ? .atom03 : .atom10
            default: parser.abortParsing()
            }
        }
        if let markupDepth, stack.count >= markupDepth {
            // Markup inside a text construct: kept, serialized, as the construct's HTML.
            markup += "<" + name + attributes.keys.sorted().map { " \($0)=\"\(Self.escape(attributes[$0]!, quotes: true))\"" }.joined() + ">"
            hasMarkup = true
            stack.append((name, namespace))
            return
        }
        stack.append((name, namespace))
        let parentBase = bases.last ?? nil
        // A base with another scheme (`javascript:`, `data:`) is ignored: relative links resolved against it
        // would take its scheme.
        let declaredBase = attributes["xml:base"].flatMap { URL(string: $0, relativeTo: parentBase)?.absoluteURL }
        bases.append(declaredBase.flatMap { Self.isWebBase($0) ? $0 : nil } ?? parentBase)
        text = ""
        if item != nil || stack.count <= 3, Self.textConstructs.contains(name) {
            markupDepth = stack.count
            markup = ""
            hasMarkup = false
            let type = attributes["type"]?.lowercased() ?? ""
            isXHTML = type == "xhtml" || (name == "body" && namespace == "http://www.w3.org/1999/xhtml")
            // Atom 0.3's escaped and base64 modes carry HTML in practice, whatever the type says.
            isPlainText = ["", "text", "text/plain"].contains(type) && !["escaped", "base64"].contains(attributes["mode"] ?? "")
            // RFC 4287 §4.1.3.3: a MIME type that is neither text nor XML means base64; Atom 0.3 says mode="base64".
            let textual = ["", "text", "html", "xhtml"].contains(type) || type.hasPrefix("text/") || type.hasSuffix("xml")
            isBase64 = attributes["mode"] == "base64" || !textual
            if name == "body", isXHTML { hasMarkup = true }
        }
        if name == "item" || (isAtom && name == "entry") {
            // RSS 1.0 names each item with rdf:about; it is the item's identity when it has no guid.
            item = attributes["rdf:about"].map { ["about": $0] } ?? [:]
            itemDepth = stack.count
            itemBases = [:]
            itemCategories = []
            itemEnclosures = []
            itemLine = parser.lineNumber
        } else if item != nil, stack.count == itemDepth + 2, isAtom, name == "link", stack[itemDepth].name == "source" {
            // The entry's source feed (Atom's <source>, a planet's): its alternate link, never the entry's own.
            if (attributes["rel"] ?? "alternate") == "alternate", item?["sourceLink"] == nil { item?["sourceLink"] = attributes["href"].map(resolved) }
        } else if item != nil, stack.count == itemDepth + 1 {
            // Only the item's own children: the same names inside its <source>, an <image> or a <category>
            // are theirs.
            if !isAtom, name == "source", let url = attributes["url"] { item?["sourceLink"] = resolved(url) }
            if name == "enclosure", let url = attributes["url"] {
                itemEnclosures.append(Enclosure(url: url, type: attributes["type"], length: attributes["length"].flatMap { Int64($0) }))
            } else if isAtom && name == "link" {
                let rel = attributes["rel"] ?? "alternate"
                if rel == "alternate", item?["link"] == nil { item?["link"] = attributes["href"].map(resolved) }
                if rel == "enclosure", let href = attributes["href"] {
                    itemEnclosures.append(Enclosure(url: href, type: attributes["type"], length: attributes["length"].flatMap { Int64($0) }))
                }
            } else if isAtom && name == "category", let term = attributes["term"] ?? attributes["label"] {
                itemCategories.append(term)
            } else if name == "guid" && attributes["isPermaLink"] == "false" {
                item?["guidIsNotLink"] = "true"
            }
        } else if isAtom && name == "link" && stack.count == 2 {
            if (attributes["rel"] ?? "alternate") == "alternate" { feedLink = attributes["href"].map(resolved) }
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
        // In markup, characters stay escaped, or the markup would change meaning.
        if markupDepth != nil { markup += Self.escape(string, quotes: false) }
    }

    /// An element's namespace; a prefix that was never declared stands for a namespace of its own, so that
    /// `<media:title>` is not taken for RSS's `<title>`.
    private static func namespace(_ uri: String?, _ qualifiedName: String?) -> String {
        if let uri, !uri.isEmpty { return uri }
        guard let qualifiedName, let colon = qualifiedName.firstIndex(of: ":") else { return "" }
        return "undeclared:" + qualifiedName[..<colon]
    }

    /// One pass over the bytes: `replacingOccurrences` through NSString, on every piece of text the parser
    /// hands over, took three quarters of the time of parsing a large feed.
    private static func escape(_ text: String, quotes: Bool) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || (quotes && $0 == 0x22) }) else { return text }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            switch byte {
            case 0x26: escaped += Array("&amp;".utf8)
            case 0x3C: escaped += Array("&lt;".utf8)
            case 0x3E: escaped += Array("&gt;".utf8)
            case 0x22 where quotes: escaped += Array("&quot;".utf8)
            default: escaped.append(byte)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        // Our own abort (not a feed) is reported by the caller; keep the parser's first real complaint.
        let code = (parseError as NSError).code
        // Namespace errors (libxml2's 200–204: a prefix never declared, `<media:thumbnail>` without
        // `xmlns:media`) leave the XML well-formed, and the parser goes on; the element is then an extension
        // nobody reads. Common in real feeds: a warning, once.
        if (200...204).contains(code) {
            if !warnedOfNamespaces {
                warnedOfNamespaces = true
                warnings.append(SourceError(file: file, line: parser.lineNumber, column: parser.columnNumber,
                                            reason: "a namespace prefix is used but never declared (xmlns:…); its elements are ignored"))
            }
            return
        }
        if firstError == nil, kind != nil || code != 512 { firstError = (code, parser.lineNumber, parser.columnNumber) }
    }

    func parser(_ parser: XMLParser, foundCDATA data: Data) {
        let string = String(decoding: data, as: UTF8.self)
        text += string
        if markupDepth != nil { markup += Self.escape(string, quotes: false) }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if let markupDepth, stack.count > markupDepth {
            // HTML's void elements have no end tag (`<img …></img>` is not HTML).
            if !Self.voidElements.contains(name.lowercased()) { markup += "</" + name + ">" }
            stack.removeLast()
            return
        }
        let namespace = Self.namespace(namespaceURI, qualifiedName)
        var value = String(text.trimmingBlanks(newlines: true))
        if markupDepth == stack.count {
            markupDepth = nil
            if hasMarkup {
                value = String(markup.trimmingBlanks(newlines: true))
                // Atom's xhtml content is wrapped in one <div> that is a container, not content.
                if isXHTML, value.hasPrefix("<div"), value.hasSuffix("</div>"), let open = value.firstIndex(of: ">"),
                    value[value.index(after: open)...].dropLast(6).range(of: "<div") == nil
                {
                    value = String(value[value.index(after: open)...].dropLast(6).trimmingBlanks(newlines: true))
                }
            } else if isBase64, let decoded = Data(base64Encoded: value, options: .ignoreUnknownCharacters).flatMap({ String(data: $0, encoding: .utf8) }) {
                value = decoded
            }
            isBase64 = false
        }
        defer {
            stack.removeLast()
            bases.removeLast()
            text = ""
        }
        if name == "item" || (isAtom && name == "entry"), let fields = item {
            finishItem(fields)
            item = nil
            return
        }
        guard item != nil else {
            // Channel-level title and link: children of <channel> (RSS) or of the root (Atom).
            let parent = stack.count >= 2 ? stack[stack.count - 2].name : ""
            if name == "title", parent == "channel" || (isAtom && stack.count == 2), feedTitle == nil { feedTitle = value }
            if name == "link", parent == "channel", feedLink == nil, !value.isEmpty { feedLink = resolved(value) }
            return
        }
        // An element is read by where it is: a child of the item, an author's name, or a field of the entry's
        // source feed; an <id> or <title> anywhere else (a <source>, an <image> in a <category>) is not the item's.
        let depth = stack.count - itemDepth, parent = stack[stack.count - 2].name
        if depth == 2, isAtom, parent == "source" {
            if name == "title", !value.isEmpty, item?["sourceTitle"] == nil {
                item?["sourceTitle"] = isPlainText ? value : Self.plainText(ofHTML: value)
            }
            return
        }
        if depth == 1, !isAtom, name == "source", Self.coreNamespaces.contains(namespace) {
            if !value.isEmpty { item?["sourceTitle"] = value }
            return
        }
        guard depth == 1 || (depth == 2 && isAtom && name == "name" && parent == "author") else { return }
        // RSS's own elements have no namespace (or an RSS one); a same-named element of an extension is not them.
        let isCore = Self.coreNamespaces.contains(namespace)
        let key: String?
        switch (name, namespace) {
        case ("encoded", contentNamespace): key = "content"
        case ("creator", dublinCoreNamespace), ("author", dublinCoreNamespace): key = "author"
        case ("date", dublinCoreNamespace): key = "published"
        case ("title", dublinCoreNamespace): key = "title"
        case ("description", dublinCoreNamespace), ("summary", itunesNamespace): key = "summary"
        case ("subject", dublinCoreNamespace): key = nil; if !value.isEmpty { itemCategories.append(value) }
        case ("content", _) where isAtom: key = "content"
        case ("body", "http://www.w3.org/1999/xhtml"): key = "content"
        case ("summary", _) where isAtom: key = "summary"
        case ("id", _) where isAtom: key = "guid"
        case ("published", _), ("issued", _): key = "published"
        case ("updated", _), ("modified", _): key = "updated"
        case ("pubDate", _) where isCore: key = "published"
        case ("description", _) where isCore: key = "summary"
        case ("category", _) where isCore: key = nil; if !value.isEmpty { itemCategories.append(value) }
        case ("name", _) where isAtom && stack.dropLast().last?.name == "author": key = "author"
        case ("title", _) where isCore, ("link", _) where isCore, ("guid", _) where isCore, ("author", _) where isCore: key = name
        default: key = nil
        }
        if let key, !value.isEmpty, item?[key] == nil {
            if isAtom, name == "content" || name == "summary" || name == "title" {
                // RFC 4287 §3.1: an Atom text construct says whether it is text, HTML or XHTML; a summary and
                // content are kept as HTML, a title as text.
                if name == "title" {
                    if !isPlainText { value = Self.plainText(ofHTML: value) }
                } else if isPlainText {
                    value = Self.escape(value, quotes: false)
                }
            }
            item?[key] = key == "link" ? resolved(value) : XMLEncoding.repairingC1Controls(value)
            // Its links are made absolute once the item's own link is known (`finishItem`).
            if key == "content" || key == "summary", let base = bases.last ?? nil { itemBases[key] = base }
        }
    }

    /// The text an HTML fragment shows: tags dropped, character references decoded.
    static func plainText(ofHTML html: String) -> String {
        var text = ""
        var index = html.startIndex
        while index < html.endIndex {
            let character = html[index]
            if character == "<", let close = html[index...].firstIndex(of: ">") {
                index = html.index(after: close)
                continue
            }
            if character == "&", let semicolon = html[index...].prefix(12).firstIndex(of: ";"),
                let decoded = decodedReference(html[html.index(after: index)..<semicolon])
            {
                text.unicodeScalars.append(decoded)
                index = html.index(after: semicolon)
                continue
            }
            text.append(character)
            index = html.index(after: index)
        }
        return String(text.trimmingBlanks(newlines: true))
    }

    /// The character of a reference's name (`amp`, `#233`, `#xE9`), if it is one.
    private static func decodedReference(_ name: Substring) -> Unicode.Scalar? {
        let xml: [Substring: UInt32] = ["amp": 38, "lt": 60, "gt": 62, "quot": 34, "apos": 39]
        var code: UInt32?
        if name.hasPrefix("#x") || name.hasPrefix("#X") {
            code = UInt32(name.dropFirst(2), radix: 16)
        } else if name.hasPrefix("#") {
            code = UInt32(name.dropFirst())
        } else {
            code = xml[name] ?? HTMLEntities.codePoints[String(name)]
        }
        return code.flatMap(Unicode.Scalar.init)
    }

    /// Whether `url` may be a base for relative links: an http(s) address, or a relative one (which resolves
    /// to one in the end).
    private static func isWebBase(_ url: URL) -> Bool {
        url.scheme.map { ["http", "https"].contains($0.lowercased()) } ?? true
    }

    /// `text` as an absolute http(s) URL, else nil.
    private static func webURL(_ text: String?) -> URL? {
        guard let url = text.flatMap({ URL(string: $0) }), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) else { return nil }
        return url
    }

    /// `reference` resolved against the base in force (the innermost `xml:base`); unchanged without one.
    private func resolved(_ reference: String) -> String {
        guard let base = bases.last ?? nil, let url = URL(string: reference, relativeTo: base) else { return reference }
        return url.absoluteString
    }

    private func finishItem(_ fields: [String: String]) {
        func date(_ key: String) -> Date? {
            guard let text = fields[key] else { return nil }
            guard let date = FeedDate.parse(text) else {
                warnings.append(SourceError(file: file, line: itemLine, reason: "unreadable \(key) date '\(text)'; stored as no date"))
                return nil
            }
            return date
        }
        // A guid is the item's permalink unless it says otherwise, and only if it is a web address (an Atom
        // id such as `urn:uuid:…` or `tag:…` is a name, not a page).
        let guidLink = fields["guid"].flatMap { guid in
            fields["guidIsNotLink"] == nil && (guid.hasPrefix("http://") || guid.hasPrefix("https://") || !guid.contains(":")) ? guid : nil
        }
        var link = fields["link"] ?? guidLink
        // A relative link with no xml:base to resolve it is relative to the feed's own site, else (a feed
        // fetched from the web, named by its address) to the feed's address, as a browser would resolve it.
        if let relative = link, URL(string: relative)?.scheme == nil, let site = Self.webURL(feedLink) ?? Self.webURL(file) {
            link = URL(string: relative, relativeTo: site)?.absoluteString ?? relative
        }
        // No guid and no link: the item is known by everything it says, so an unchanged item keeps its identity.
        // Its source feed, read since issue 40, counts only when nothing else does: an item known so before keeps its identity.
        let ownKeys = fields.keys.filter { !$0.hasPrefix("source") }
        let said = (ownKeys.isEmpty ? Array(fields.keys) : ownKeys).sorted().map { $0 + "=" + fields[$0]! } + itemCategories + itemEnclosures.map(\.url)
        guard let identity = fields["guid"] ?? link ?? fields["about"] ?? (said.isEmpty ? nil : Self.contentIdentity(said)) else {
            warnings.append(SourceError(file: file, line: itemLine, reason: "an empty item (no guid, link or content of any kind) was skipped"))
            return
        }
        // Relative links in the HTML lead where they led on the item's page: against the XML base, else the item's link.
        func html(_ key: String) -> String? {
            guard let text = fields[key] else { return nil }
            // Only a web address is a base: a `javascript:` link (which the load drops) would otherwise
            // make `more.html` into `javascript:…/more.html`.
            guard let base = itemBases[key] ?? Self.webURL(link) ?? Self.webURL(feedLink) ?? Self.webURL(file) else { return text }
            return HTMLLinks.resolving(text, against: base)
        }
        let updated = date("updated")
        let item = FeedItem(
            // An entry that gives only its update date (Atom requires that one) is dated by it.
            id: identity, title: fields["title"], link: link, published: date("published") ?? updated, updated: updated,
            author: fields["author"], summary: html("summary"), content: html("content"),
            categories: itemCategories, enclosures: itemEnclosures, line: itemLine,
            sourceTitle: fields["sourceTitle"], sourceLink: fields["sourceLink"])
        if let onItem { onItem(item) } else { items.append(item) }
    }

    /// An identity for an item with neither guid nor link. It is part of the item's URL, so its algorithm
    /// (FNV-1a over each text and a 0xFF separator) never changes, whatever `ContentHash` becomes.
    private static func contentIdentity(_ texts: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for text in texts {
            for byte in text.utf8 + [0xFF] {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01B3
            }
        }
        return "hash:" + String(hash, radix: 16)
    }
}
