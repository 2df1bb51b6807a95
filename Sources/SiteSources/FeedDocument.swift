import Foundation

/// What a feed file holds: its kind, title and link, and its items.
public struct FeedDocument: Sendable {
    /// The dialect, as `sitegen parse` names it.
    public enum Kind: String, Sendable {
        case rss090, rss091, rss092, rss10, rss20, atom03, atom10, json10, json11
    }

    public var kind: Kind
    public var title: String?
    public var link: String?
    public var items: [FeedItem]
    /// Problems that did not stop the feed from being read (an item without identity, a bad date).
    public var warnings: [SourceError]
}

/// One feed entry, with the fields sitegen stores.
public struct FeedItem: Sendable, Hashable {
    /// The identity: guid / id, else the link, else a hash of title and date.
    public var id: String
    public var title: String?
    public var link: String?
    public var published: Date?
    public var updated: Date?
    public var author: String?
    public var summary: String?
    /// Full content (HTML), from `content:encoded` or Atom `content`.
    public var content: String?
    public var categories: [String]
    /// The 1-based line where the item starts.
    public var line: Int
}
