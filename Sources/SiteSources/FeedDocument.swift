import Foundation

/// What a feed file holds: its kind, title and link, and its items.
public struct FeedDocument: Sendable {
    /// The dialect, as `sitegen parse` names it.
    public enum Kind: String, Sendable {
        case rss090, rss091, rss092, rss10, rss20, atom03, atom10, json10, json11
    }

    /// The feed's dialect.
    public var kind: Kind
    /// The channel's or feed's title.
    public var title: String?
    /// The site the feed belongs to.
    public var link: String?
    /// The entries, in document order.
    public var items: [FeedItem]
    /// Problems that did not stop the feed from being read (an item without identity, a bad date).
    public var warnings: [SourceError]
}

/// One feed entry, with the fields sitegen stores.
public struct FeedItem: Sendable, Hashable {
    /// The identity: guid / id, else the link, else a hash of title and date.
    public var id: String
    /// The entry's title.
    public var title: String?
    /// The entry's own page (resolved Atom alternate link, RSS link, or a permalink guid).
    public var link: String?
    /// When it was first published; `nil` when the feed does not say.
    public var published: Date?
    /// When it last changed; `nil` when the feed does not say.
    public var updated: Date?
    /// The author's name.
    public var author: String?
    /// A short description or summary.
    public var summary: String?
    /// Full content (HTML), from `content:encoded` or Atom `content`.
    public var content: String?
    /// Category terms, in document order.
    public var categories: [String]
    /// Attached media: RSS `enclosure`, Atom `link rel="enclosure"`, JSON Feed `attachments`.
    public var enclosures: [Enclosure] = []
    /// The 1-based line where the item starts.
    public var line: Int
    /// The title of the feed the entry first appeared in (Atom's `<source>`, RSS's `<source>`): a planet's entries name their blogs.
    public var sourceTitle: String? = nil
    /// That feed's site (Atom's alternate link of the `<source>`; RSS's `<source url>`, the feed itself).
    public var sourceLink: String? = nil
}

/// A file attached to a feed item (a podcast episode, a PDF).
public struct Enclosure: Sendable, Hashable {
    /// Where the file is.
    public var url: String
    /// Its MIME type, when given.
    public var type: String?
    /// Its size in bytes, when given.
    public var length: Int64?

    /// Makes an enclosure.
    public init(url: String, type: String? = nil, length: Int64? = nil) {
        self.url = url
        self.type = type
        self.length = length
    }
}
