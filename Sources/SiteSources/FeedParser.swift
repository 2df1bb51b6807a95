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

    /// Makes a parser whose errors name `file`.
    public init(file: String) {
        self.file = file
    }

    /// Parses the document in `data`: JSON Feed when it starts with `{`, else RSS or Atom.
    public func parse(_ data: Data) throws(SourceError) -> FeedDocument {
        let firstByte = data.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if firstByte == UInt8(ascii: "{") { return try JSONFeedParser(file: file).parse(data) }
        let parser = XMLParser(data: data)
        let delegate = FeedParserDelegate(file: file, parser: parser)
        parser.delegate = delegate
        parser.shouldProcessNamespaces = true
        let finished = parser.parse()
        // libxml2 recovers from some errors (a mismatched tag) and parse() still returns true; a feed that
        // is not well-formed fails all the same: leniency would turn a truncated download into deletions.
        if let error = delegate.firstError {
            throw SourceError(file: file, line: error.line, column: error.column, reason: "not well-formed XML: \(Self.reason(error.code))")
        }
        if delegate.kind == nil {
            throw SourceError(file: file, line: 1, reason: "not a feed: expected an <rss>, <rdf:RDF> or <feed> root element")
        }
        if !finished {
            throw SourceError(file: file, line: parser.lineNumber, reason: "the XML parser stopped without saying why")
        }
        return FeedDocument(kind: delegate.kind!, title: delegate.feedTitle, link: delegate.feedLink,
                            items: delegate.items, warnings: delegate.warnings)
    }
}

extension FeedParser {
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
        case 26, 27: return "an undeclared entity (&name;); write &amp; for a literal '&'"
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
        case 85: return "elements are not properly nested"
        case 86: return "text after the end of the document element"
        case 512: return "parsing was stopped"
        default: return "XML error \(code)"
        }
    }
}

private let atomNamespace10 = "http://www.w3.org/2005/Atom"
private let atomNamespace03 = "http://purl.org/atom/ns#"
private let contentNamespace = "http://purl.org/rss/1.0/modules/content/"
private let dublinCoreNamespace = "http://purl.org/dc/elements/1.1/"

/// Collects items from XMLParser's events; one per parse.
private final class FeedParserDelegate: NSObject, XMLParserDelegate {
    let file: String
    unowned let parser: XMLParser
    var kind: FeedDocument.Kind?
    var feedTitle: String?
    var feedLink: String?
    var items: [FeedItem] = []
    var warnings: [SourceError] = []
    /// The first error the XML parser reported, where it was.
    var firstError: (code: Int, line: Int, column: Int)?

    private var stack: [(name: String, namespace: String)] = []
    private var text = ""
    private var item: [String: String]?
    private var itemCategories: [String] = []
    private var itemEnclosures: [Enclosure] = []
    private var itemLine = 0
    private var isAtom: Bool { kind == .atom10 || kind == .atom03 }

    init(file: String, parser: XMLParser) {
        self.file = file
        self.parser = parser
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        let namespace = namespaceURI ?? ""
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
        stack.append((name, namespace))
        text = ""
        if name == "item" || (isAtom && name == "entry") {
            item = [:]
            itemCategories = []
            itemEnclosures = []
            itemLine = parser.lineNumber
        } else if item != nil {
            if name == "enclosure", let url = attributes["url"] {
                itemEnclosures.append(Enclosure(url: url, type: attributes["type"], length: attributes["length"].flatMap { Int64($0) }))
            } else if isAtom && name == "link" {
                let rel = attributes["rel"] ?? "alternate"
                if rel == "alternate", item?["link"] == nil { item?["link"] = attributes["href"] }
                if rel == "enclosure", let href = attributes["href"] {
                    itemEnclosures.append(Enclosure(url: href, type: attributes["type"], length: attributes["length"].flatMap { Int64($0) }))
                }
            } else if isAtom && name == "category", let term = attributes["term"] ?? attributes["label"] {
                itemCategories.append(term)
            } else if name == "guid" && attributes["isPermaLink"] == "false" {
                item?["guidIsNotLink"] = "true"
            }
        } else if isAtom && name == "link" && stack.count == 2 {
            if (attributes["rel"] ?? "alternate") == "alternate" { feedLink = attributes["href"] }
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        // Our own abort (not a feed) is reported by the caller; keep the parser's first real complaint.
        let code = (parseError as NSError).code
        if firstError == nil, kind != nil || code != 512 { firstError = (code, parser.lineNumber, parser.columnNumber) }
    }

    func parser(_ parser: XMLParser, foundCDATA data: Data) { text += String(decoding: data, as: UTF8.self) }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let namespace = namespaceURI ?? ""
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        defer {
            stack.removeLast()
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
            if name == "link", parent == "channel", feedLink == nil, !value.isEmpty { feedLink = value }
            return
        }
        let key: String?
        switch (name, namespace) {
        case ("encoded", contentNamespace): key = "content"
        case ("creator", dublinCoreNamespace): key = "author"
        case ("date", dublinCoreNamespace): key = "published"
        case ("content", _) where isAtom: key = "content"
        case ("summary", _) where isAtom: key = "summary"
        case ("id", _) where isAtom: key = "guid"
        case ("published", _), ("issued", _): key = "published"
        case ("updated", _), ("modified", _): key = "updated"
        case ("pubDate", _): key = "published"
        case ("description", _): key = "summary"
        case ("category", _): key = nil; if !value.isEmpty { itemCategories.append(value) }
        case ("name", _) where isAtom && stack.dropLast().last?.name == "author": key = "author"
        case ("title", _), ("link", _), ("guid", _), ("author", _): key = name
        default: key = nil
        }
        if let key, !value.isEmpty, item?[key] == nil { item?[key] = value }
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
        let link = fields["link"] ?? (fields["guidIsNotLink"] == nil ? fields["guid"] : nil)
        // No guid and no link: the item is known by what it says, so an unchanged item keeps its identity.
        let content = ["title", "published", "summary", "content"].map { fields[$0] ?? "" }
        guard let identity = fields["guid"] ?? link ?? (content.allSatisfy(\.isEmpty) ? nil : Self.contentIdentity(content)) else {
            warnings.append(SourceError(file: file, line: itemLine, reason: "an empty item (no guid, link, title, date or text) was skipped"))
            return
        }
        items.append(FeedItem(
            id: identity, title: fields["title"], link: link, published: date("published"), updated: date("updated"),
            author: fields["author"], summary: fields["summary"], content: fields["content"],
            categories: itemCategories, enclosures: itemEnclosures, line: itemLine))
    }

    private static func contentIdentity(_ texts: [String]) -> String {
        var hash = ContentHash()
        texts.forEach { hash.combine($0) }
        return "hash:" + String(hash.value, radix: 16)
    }
}
