import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An OPML subscription list: the feeds a planet aggregates, each outline with an `xmlUrl`.
///
/// Outlines nest (folders of feeds); every outline with an `xmlUrl` is a feed, wherever it is. A URL
/// listed twice is one feed, at its first place.
///
/// ```swift
/// let list = try SubscriptionList(data: Data(contentsOf: url), file: "subscriptions.opml")
/// for feed in list.feeds { print(feed.url, feed.title ?? "") }
/// ```
public struct SubscriptionList: Sendable, Equatable {
    /// One subscribed feed.
    public struct Feed: Sendable, Equatable {
        /// The feed's address (`xmlUrl`).
        public var url: String
        /// Its name in the list (`title`, else `text`).
        public var title: String?
        /// The site the feed belongs to (`htmlUrl`).
        public var siteURL: String?
        /// The line of its outline.
        public var line: Int
    }

    /// The list's own title (`<head><title>`).
    public var title: String?
    /// The feeds, in the list's order.
    public var feeds: [Feed] = []

    /// Reads an OPML document; throws with the line and reason when it is not well-formed XML or not OPML.
    public init(data: Data, file: String) throws(SourceError) {
        // The same cleaning as a feed's: FoundationXML traps on some bytes inside comments and instructions.
        let cleaned = XMLCleaner.cleaned([UInt8](XMLEncoding.utf8(data)))
        let parser = XMLParser(data: Data(cleaned))
        let reader = OutlineReader(parser: parser)
        parser.delegate = reader
        let finished = parser.parse()
        // libxml2 recovers from a mismatched tag and parse() still succeeds: a list cut short or broken by an
        // edit fails all the same, as a feed does, so that its feeds are not taken to be gone.
        if let error = reader.firstError {
            throw SourceError(file: file, line: error.line, column: error.column, reason: "not well-formed XML: \(FeedParser.reason(error.code))")
        }
        guard finished else {
            throw SourceError(file: file, line: parser.lineNumber, column: parser.columnNumber, reason: "the XML parser stopped without saying why")
        }
        guard reader.sawOPML else { throw SourceError(file: file, line: 1, reason: "not an OPML document: its root element is not <opml>") }
        title = reader.title
        var seen = Set<String>()
        feeds = reader.feeds.filter { seen.insert($0.url).inserted }
    }
}

/// Collects outlines with an `xmlUrl` and the head's title.
private final class OutlineReader: NSObject, XMLParserDelegate {
    let parser: XMLParser
    var feeds: [SubscriptionList.Feed] = []
    var title: String?
    var sawOPML = false
    /// The parser's first complaint (libxml2's code), where it was.
    var firstError: (code: Int, line: Int, column: Int)?
    private var path: [String] = []
    private var text = ""

    init(parser: XMLParser) { self.parser = parser }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if path.isEmpty { sawOPML = name.lowercased() == "opml" }
        path.append(name)
        text = ""
        guard name == "outline", path.count >= 3, path[path.count - 2] == "outline" || path[path.count - 2] == "body" else { return }
        // Attribute names vary in case in lists written by hand; OPML 2.0 spells them `xmlUrl` and `htmlUrl`.
        let lowered = Dictionary(attributes.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        guard let url = lowered["xmlurl"]?.trimmingCharacters(in: .whitespacesAndNewlines), !url.isEmpty else { return }
        let title = (lowered["title"] ?? lowered["text"])?.trimmingCharacters(in: .whitespacesAndNewlines)
        let site = lowered["htmlurl"]?.trimmingCharacters(in: .whitespacesAndNewlines)
        feeds.append(.init(url: url, title: title?.isEmpty == false ? title : nil, siteURL: site?.isEmpty == false ? site : nil,
                           line: parser.lineNumber))
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        let code = (parseError as NSError).code
        // A namespace prefix never declared (libxml2's 200–204) leaves the XML well-formed.
        if firstError == nil && !(200...204).contains(code) { firstError = (code, parser.lineNumber, parser.columnNumber) }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if path.count == 3, path[1] == "head", name == "title" {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            title = trimmed.isEmpty ? nil : trimmed
        }
        path.removeLast()
    }
}
