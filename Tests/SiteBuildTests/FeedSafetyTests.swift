import Foundation
import SiteBuild
import XCTest

/// Feed HTML on the pages and feeds a build writes (issue 40): sanitized by default, relative links resolved
/// only against web addresses, and a planet's entries showing the feeds they came from.
final class FeedSafetyTests: XCTestCase {
    private var site: URL!

    override func setUpWithError() throws {
        site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-feed-safety-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: site.appendingPathComponent("data"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: site.appendingPathComponent("Templates"), withIntermediateDirectories: true)
        try write("Templates/list.mustache", "{{#items}}<li>{{title}}{{#source}} from <a href=\"{{link}}\">{{title}}</a>{{/source}}</li>{{/items}}")
        try write("Templates/detail.mustache", "<article>{{{body}}}</article>")
        try write("sitegen.yml", """
            title: Test
            baseURL: https://planet.example.org/
            collections:
              news:
                kind: feed
                sources: data/*.xml
                detail: {path: "/news/{slug}/", body: content}
            listings:
              news: {from: news, sort: [-published], path: /news/, feeds: [atom, rss, json]}
            """)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: site)
    }

    private func write(_ path: String, _ text: String) throws {
        try text.write(to: site.appendingPathComponent(path), atomically: true, encoding: .utf8)
    }

    private func page(_ path: String) throws -> String {
        try String(contentsOf: site.appendingPathComponent("output/" + path), encoding: .utf8)
    }

    private func build() throws -> BuildSummary {
        let summary = try SiteBuilder(root: site).build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        return summary
    }

    /// A feed whose one item holds `html` as its content, at `link`.
    private func writeFeed(content html: String, link: String = "https://blog.example.org/2024/hello.html", channelLink: String = "https://blog.example.org/") throws {
        let escaped = html.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        try write("data/blog.xml", """
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Blog</title><link>\(channelLink)</link>
            <item><guid isPermaLink="false">hello</guid><title>Hello</title><link>\(link.replacingOccurrences(of: "&", with: "&amp;"))</link>
            <pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate><content:encoded>\(escaped)</content:encoded></item>
            </channel></rss>
            """)
    }

    func testAFeedsHTMLIsPublishedSanitizedWithNoFormatAndNoUnsafe() throws {
        try writeFeed(content: #"<p>Hello <b>world</b></p><script>alert(1)</script><img src="pic.png" onerror="alert(2)">"#
            + #"<a href="javascript:alert(3)">x</a><iframe src="https://evil.example/"></iframe>"#)
        _ = try build()
        let detail = try page("news/hello/index.html")
        XCTAssertEqual(detail, #"<article><p>Hello <b>world</b></p><img src="https://blog.example.org/2024/pic.png"><a>x</a></article>"#)
        // The feeds sitegen writes carry the same HTML.
        for feed in ["news/atom.xml", "news/rss.xml", "news/feed.json"] {
            let text = try page(feed)
            XCTAssertTrue(text.contains("Hello"), feed)
            for hostile in ["<script", "&lt;script", "alert(", "onerror", "javascript", "iframe"] {
                XCTAssertFalse(text.contains(hostile), "\(feed): \(hostile)")
            }
        }
    }

    func testARejectedJavascriptItemLinkIsNeverTheBaseOfItsRelativeLinks() throws {
        try writeFeed(content: #"<a href="more.html">More</a>"#, link: "javascript:alert(document.domain)", channelLink: "https://blog.example.org/")
        let summary = try build()
        XCTAssertTrue(summary.warnings.contains { $0.description.contains("is not a web address") }, "\(summary.warnings)")
        let detail = try page("news/hello/index.html")
        XCTAssertEqual(detail, #"<article><a href="https://blog.example.org/more.html">More</a></article>"#)
    }

    func testAJavascriptXMLBaseIsNeverABase() throws {
        try write("data/blog.xml", """
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="javascript:alert(document.domain)/"><title>Blog</title>
            <entry><id>urn:hello</id><title>Hello</title><updated>2024-01-01T10:00:00Z</updated>
            <content type="html">&lt;a href="more.html"&gt;More&lt;/a&gt;</content></entry></feed>
            """)
        _ = try build()
        let detail = try page("news/hello/index.html")
        XCTAssertFalse(detail.contains("javascript"), detail)
        XCTAssertTrue(detail.contains(#"<a href="more.html">More</a>"#), detail)
    }

    func testFormatHTMLStillNeedsUnsafe() throws {
        try writeFeed(content: "<p>x</p>")
        try write("sitegen.yml", try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
            .replacingOccurrences(of: "body: content}", with: "body: content, format: html}"))
        XCTAssertThrowsError(try SiteBuilder(root: site).build()) { error in
            XCTAssertTrue("\(error)".contains("needs 'unsafe: true'"), "\(error)")
        }
    }

    /// A planet's feed (Planet Venus writes each entry's <source> before its own id and title): every entry
    /// is its own page, and the list shows the blog each came from.
    func testAPlanetsEntriesAreEachKeptAndShowTheirSourceFeed() throws {
        try write("data/planet.xml", """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">
              <title>Planet Example</title>
              <link rel="alternate" href="https://planet.example.net/"/>
              <id>https://planet.example.net/atom.xml</id>
              <updated>2024-03-02T12:00:00Z</updated>
              <entry>
                <source>
                  <id>tag:alice.example.org,2005:feed</id>
                  <title>Alice's Notes</title>
                  <link rel="self" href="https://alice.example.org/feed.atom"/>
                  <link rel="alternate" href="https://alice.example.org/"/>
                  <updated>2024-03-01T09:00:00Z</updated>
                </source>
                <id>tag:alice.example.org,2024:first</id>
                <title>First</title>
                <link rel="alternate" href="https://alice.example.org/2024/first.html"/>
                <updated>2024-03-01T08:00:00Z</updated>
                <content type="html">&lt;p&gt;Alice writes.&lt;/p&gt;</content>
              </entry>
              <entry>
                <source>
                  <id>tag:bob.example.com,2007:feed</id>
                  <title type="html">Bob &amp;amp; Co</title>
                  <link href="https://bob.example.com/"/>
                </source>
                <id>tag:bob.example.com,2024:second</id>
                <title>Second</title>
                <link href="https://bob.example.com/second/"/>
                <updated>2024-03-02T08:00:00Z</updated>
                <content type="html">&lt;p&gt;Bob writes.&lt;/p&gt;</content>
              </entry>
            </feed>
            """)
        let summary = try build()
        XCTAssertEqual(summary.rowsInserted, 2)
        XCTAssertEqual(try page("news/index.html"), #"<li>Second from <a href="https://bob.example.com/">Bob &amp; Co</a></li>"#
            + #"<li>First from <a href="https://alice.example.org/">Alice&#39;s Notes</a></li>"#)
        XCTAssertEqual(try page("news/first/index.html"), "<article><p>Alice writes.</p></article>")
    }
}
