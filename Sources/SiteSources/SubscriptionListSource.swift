import Foundation

/// An OPML subscription list read as records (`kind: opml`): one per feed, keyed by its URL, with its
/// `title`, `feedURL` and `siteURL`, so that a planet's templates can list the feeds it aggregates.
public struct SubscriptionListSource: Source {
    /// Where the file is.
    public let url: URL
    /// The file as messages name it.
    public let displayName: String

    /// Reads the list at `url`.
    public init(url: URL, displayName: String) {
        self.url = url
        self.displayName = displayName
    }

    /// Emits each feed of the list, in its order.
    public func read(_ input: inout SourceInput, emit: (Record) throws(SourceError) -> Void) throws(SourceError) -> [SourceError] {
        let data = input.readAll()
        let list = try SubscriptionList(data: data, file: displayName)
        for feed in list.feeds {
            try emit(Record(key: feed.url, line: feed.line, fields: [
                "title": feed.title.map(FieldValue.text) ?? .null,
                "feedURL": .text(feed.url),
                "siteURL": feed.siteURL.map(FieldValue.text) ?? .null,
            ]))
        }
        return []
    }
}
