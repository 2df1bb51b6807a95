import Foundation
@testable import SiteSources
import XCTest

/// Feed elements are read where they are (issue 40, item 6): an entry's `<source>`, an `<image>` in an item
/// or its `<category>`, have children named as the item's own (`id`, `title`, `link`, `updated`), which are
/// theirs, not the item's; and an item's relative links are resolved only against a web address.
final class FeedContextTests: XCTestCase {
    private func fixture(_ name: String) throws -> FeedDocument {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/feeds/" + name, withExtension: nil))
        return try FeedParser(file: name).parse(Data(contentsOf: url))
    }

    /// A planet writing each entry's `<source>` first gave every entry its source feed's id: all of one blog's
    /// entries collapsed into one item, and the source's title and author were taken for the entry's.
    func testAPlanetsEntriesKeepTheirOwnIdentityWhereverTheirSourceIs() throws {
        let planet = try fixture("planet-source-first.xml")
        XCTAssertEqual(planet.items.map(\.id), ["tag:alice.example.org,2024:first", "tag:bob.example.com,2024:second", "tag:carol.example.net,2024:third"])
        XCTAssertEqual(planet.items.map(\.title), ["First light", "Second thoughts", "Third, source last"])
        XCTAssertEqual(planet.items.map(\.link), ["https://alice.example.org/2024/first.html", "https://bob.example.com/second/", "https://carol.example.net/third"])
        XCTAssertEqual(planet.items.map { $0.updated.map(FeedDate.rfc3339) }, ["2024-03-01T08:00:00Z", "2024-03-02T08:00:00Z", "2024-03-02T09:00:00Z"])
        XCTAssertEqual(planet.items.map(\.author), [nil, "Bob Brown", nil], "the source's author is the feed's, not the entry's")
        XCTAssertEqual(planet.items[0].categories, [], "the source's category is the feed's")
        XCTAssertEqual(planet.items[0].content, #"<p>The garden <a href="https://alice.example.org/2024/photos/">in March</a>.</p>"#)
        XCTAssertEqual(planet.title, "Planet Example")
    }

    func testAnEntrysSourceFeedIsItsTitleAndAlternateLink() throws {
        let planet = try fixture("planet-source-first.xml")
        XCTAssertEqual(planet.items.map(\.sourceTitle), ["Alice's Notes", "Bob & Co", "Carol"])
        XCTAssertEqual(planet.items.map(\.sourceLink), ["https://alice.example.org/", "https://bob.example.com/", "https://carol.example.net/"])
        // feedparser's own documents: entries[0]['source']['title_detail']['value'] and ['source']['link'].
        XCTAssertEqual(try fixture("entry_source_title_content_value.xml").items.first?.sourceTitle, "Example Atom")
        XCTAssertEqual(try fixture("entry_source_link_alternate_map_link.xml").items.first?.sourceLink, "http://www.example.com/")
    }

    /// An `<image>` in a `<category>` (or in the item) that came before the item's title and link gave the
    /// item the image's.
    func testAnImageInAnItemOrItsCategoryIsNotTheItem() throws {
        let news = try fixture("rss-category-image.xml")
        XCTAssertEqual(news.items.map(\.title), ["Late goal settles the derby", "Frost tonight"])
        XCTAssertEqual(news.items.map(\.link), ["https://news.example.com/sport/2024/03/derby.html", "https://news.example.com/weather/2024/03/frost.html"])
        XCTAssertEqual(news.items.map(\.categories), [[], ["Weather"]])
        XCTAssertEqual(news.items[0].summary, #"<p>A <a href="https://news.example.com/sport/2024/03/table.html">table</a> shaken.</p>"#)
        XCTAssertEqual(news.title, "Example News")
        XCTAssertEqual(news.link, "https://news.example.com/")
        // RSS 2.0's <source url="…">: the feed the item came from.
        XCTAssertEqual(news.items[1].sourceTitle, "Example Wire")
        XCTAssertEqual(news.items[1].sourceLink, "https://wire.example.org/feed.xml")
        // feedparser's: "image link does not conflict with item link".
        XCTAssertEqual(try fixture("item_image_link_conflict.xml").items.first?.link, "http://item.TEST/")
    }

    /// `<a href="more.html">` in an item whose link is `javascript:…` was published as
    /// `href="javascript:alert(document.domain)/more.html"`: only an http(s) address is a base.
    func testOnlyAWebAddressIsABaseForAnItemsRelativeLinks() throws {
        func content(_ feed: String) throws -> String? {
            try FeedParser(file: "feed.xml").parse(Data(feed.utf8)).items.first?.content
        }
        let rss = #"<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>B</title>%@"#
            + #"<item><guid>g</guid><link>javascript:alert(document.domain)</link><content:encoded>&lt;a href="more.html"&gt;More&lt;/a&gt;</content:encoded></item></channel></rss>"#
        XCTAssertEqual(try content(rss.replacingOccurrences(of: "%@", with: "")), #"<a href="more.html">More</a>"#)
        XCTAssertEqual(try content(rss.replacingOccurrences(of: "%@", with: "<link>https://blog.example.org/</link>")),
                       #"<a href="https://blog.example.org/more.html">More</a>"#, "the channel's web address is the base then")
        XCTAssertEqual(try content(rss.replacingOccurrences(of: "%@", with: "<link>data:text/html,x</link>")), #"<a href="more.html">More</a>"#)
        let atom = #"<feed xmlns="http://www.w3.org/2005/Atom"><title>B</title><entry xml:base="%@"><id>urn:e</id><title>E</title>"#
            + #"<content type="html">&lt;a href="more.html"&gt;More&lt;/a&gt;</content></entry></feed>"#
        XCTAssertEqual(try content(atom.replacingOccurrences(of: "%@", with: "javascript:alert(1)//")), #"<a href="more.html">More</a>"#)
        XCTAssertEqual(try content(atom.replacingOccurrences(of: "%@", with: "https://e.org/a/")), #"<a href="https://e.org/a/more.html">More</a>"#)
    }

    /// An item with neither guid nor link is known by a hash of what it says; its source feed, read since
    /// issue 40, is left out of it, so such an item of a feed read before keeps its identity and its page.
    func testAnItemKnownByWhatItSaysKeepsItsIdentityWithItsSourceRead() throws {
        func id(_ extra: String) throws -> String? {
            let feed = "<rss version=\"2.0\"><channel><title>B</title><item><title>T</title><description>D</description>\(extra)</item></channel></rss>"
            return try FeedParser(file: "feed.xml").parse(Data(feed.utf8)).items.first?.id
        }
        XCTAssertEqual(try id(#"<source url="https://wire.example.org/feed.xml">Wire</source>"#), try id(""))
    }

    func testASourceLinkThatIsNoWebAddressIsDroppedWithAWarning() throws {
        let feed = #"<rss version="2.0"><channel><title>B</title><item><guid>g</guid><title>T</title>"#
            + #"<source url="javascript:alert(1)">Wire</source></item></channel></rss>"#
        let read = try FeedSource(url: URL(fileURLWithPath: "/feed.xml"), displayName: "feed.xml").read(Data(feed.utf8))
        XCTAssertEqual(read.records.first?.fields["source_link"], .null)
        XCTAssertEqual(read.records.first?.fields["source_title"], .text("Wire"))
        XCTAssertTrue(read.warnings.contains { $0.description.contains("source link 'javascript:alert(1)'") }, "\(read.warnings)")
    }
}
