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
        if delegate.kind == nil {
            throw SourceError(file: file, line: 1, reason: "not a feed: expected an <rss>, <rdf:RDF> or <feed> root element")
        }
        if !finished {
            if let error = parser.parserError {
                let message = (error as NSError).localizedDescription
                throw SourceError(file: file, line: parser.lineNumber, column: parser.columnNumber,
                                  reason: "not well-formed XML: \(message)")
            }
            throw SourceError(file: file, line: parser.lineNumber, reason: "the XML parser stopped without saying why")
        }
        return FeedDocument(kind: delegate.kind!, title: delegate.feedTitle, link: delegate.feedLink,
                            items: delegate.items, warnings: delegate.warnings)
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

    private var stack: [(name: String, namespace: String)] = []
    private var text = ""
    private var item: [String: String]?
    private var itemCategories: [String] = []
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
            itemLine = parser.lineNumber
        } else if item != nil {
            if isAtom && name == "link" {
                let rel = attributes["rel"] ?? "alternate"
                if rel == "alternate", item?["link"] == nil { item?["link"] = attributes["href"] }
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
            categories: itemCategories, line: itemLine))
    }

    private static func contentIdentity(_ texts: [String]) -> String {
        var hash = ContentHash()
        texts.forEach { hash.combine($0) }
        return "hash:" + String(hash.value, radix: 16)
    }
}
