import Foundation
@testable import SiteSources
import TestSupport
import XCTest

final class FeedTests: XCTestCase {
    private func fixture(_ name: String) throws -> FeedDocument {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/feeds/" + name, withExtension: nil))
        return try FeedParser(file: name).parse(Data(contentsOf: url))
    }

    func testFeedDatesInRFC822AndRFC3339AreReadInTheirTimeZone() {
        let expected = "2004-01-01T19:48:21Z"
        for text in ["Thu, 01 Jan 2004 19:48:21 GMT", "Thu, 1 Jan 2004 14:48:21 EST", "01 Jan 04 20:48:21 +0100",
                     "2004-01-01T19:48:21Z", "2004-01-01T21:48:21+02:00", "2004-01-01T19:48:21.250Z", "Thursday, 01 Jan 2004 19:48:21 GMT"] {
            XCTAssertEqual(FeedDate.parse(text).map(FeedDate.rfc3339), expected, text)
        }
        XCTAssertEqual(FeedDate.parse("2004-01-01").map(FeedDate.rfc3339), "2004-01-01T00:00:00Z")
        // RFC 5322's obsolete two-digit years: 00-49 are this century, 50-99 the last.
        XCTAssertEqual(FeedDate.parse("Fri, 01 Jan 49 00:00:00 GMT").map(FeedDate.rfc3339), "2049-01-01T00:00:00Z")
        XCTAssertEqual(FeedDate.parse("Sun, 01 Jan 50 00:00:00 GMT").map(FeedDate.rfc3339), "1950-01-01T00:00:00Z")
        XCTAssertNil(FeedDate.parse("2004-02-30T00:00:00Z"))
        XCTAssertNil(FeedDate.parse("yesterday"))
    }

    /// With `timeZone: America/New_York`, `date: 2024-03-10` was midnight UTC, shown as 9 March there: a date
    /// or time written without an offset is the site's own, as Hugo reads it; one with an offset stays as it is.
    func testADateWithoutAnOffsetIsOneInTheSitesZone() throws {
        let york = try XCTUnwrap(TimeZone(identifier: "America/New_York"))
        let cases = [("2024-03-10", "2024-03-10T05:00:00Z"), ("2024-03-10 20:30:00", "2024-03-11T00:30:00Z"),  // after the clocks went forward
                     ("2024-07-01T12:00", "2024-07-01T16:00:00Z"), ("1 Jul 2024 12:00", "2024-07-01T16:00:00Z"),
                     ("2024-07-01T12:00:00Z", "2024-07-01T12:00:00Z"), ("2024-07-01T12:00:00+02:00", "2024-07-01T10:00:00Z"),
                     ("Mon, 01 Jul 2024 12:00:00 GMT", "2024-07-01T12:00:00Z")]
        for (written, instant) in cases {
            XCTAssertEqual(FeedDate.parse(written, localZone: york).map(FeedDate.rfc3339), instant, written)
            XCTAssertEqual(try FieldType.datetime.value(from: written, zone: york), .text(instant), written)
        }
        XCTAssertEqual(try FieldType.datetime.value(from: "2024-03-10"), .text("2024-03-10T00:00:00Z"), "UTC without a zone")
    }

    func testRSSItemsKeepGuidPubDateAndEncodedContent() throws {
        let guid = try fixture("item_guid_not_permalink.xml")
        XCTAssertEqual(guid.kind, .rss20)
        XCTAssertEqual(guid.items.map(\.id), ["http://guid.example.com/"])
        XCTAssertNil(guid.items[0].link, "a guid that is not a permalink is not a link")

        let dated = try fixture("item_pubDate.xml")
        XCTAssertEqual(dated.items.first?.published.map(FeedDate.rfc3339), "2004-01-01T19:48:21Z")

        let content = try fixture("item_content_encoded.xml")
        XCTAssertEqual(content.items.first?.content, "<p>Example content</p>")
    }

    func testAtomAndRDFItemsTakeTheirIdentityFromIdOrLink() throws {
        XCTAssertEqual(try fixture("entry_id.xml").items.map(\.id), ["http://example.com/"])
        let alternate = try fixture("entry_link_alternate_map_link.xml")
        XCTAssertEqual(alternate.kind, .atom10)
        XCTAssertEqual(alternate.items.first?.link, "http://www.example.com/")
        let rdf = try fixture("rdf_item_link.xml")
        XCTAssertEqual(rdf.kind, .rss10)
        XCTAssertEqual(rdf.items.map(\.id), ["http://example.com/1"])
    }

    func testAnIllFormedFeedIsAnErrorWithALine() {
        XCTAssertThrowsError(try fixture("aaa_illformed.xml")) { error in
            let error = error as? SourceError
            XCTAssertEqual(error?.file, "aaa_illformed.xml")
            XCTAssertNotNil(error?.line)
            XCTAssertTrue(error?.reason.hasPrefix("not well-formed XML") == true, error?.reason ?? "")
        }
    }

    func testAFeedOfMoreThanTenMillionBytesDecodedWholeKeepsEveryItem() throws {
        // Windows-1252 (and broken UTF-8) is decoded whole, not streamed: libxml2 refused such a document
        // past 10,000,000 bytes with "XML error 1".
        let body = String(repeating: "Caf\u{E9} au lait, ", count: 80)
        var text = "<?xml version=\"1.0\" encoding=\"windows-1252\"?><rss version=\"2.0\"><channel><title>Big</title>\n"
        for number in 0..<9_000 { text += "<item><guid>g\(number)</guid><title>Caf\u{E9} \(number)</title><description>\(body)</description></item>\n" }
        text += "</channel></rss>\n"
        let data = try XCTUnwrap(text.data(using: .windowsCP1252))
        XCTAssertGreaterThan(data.count, 10_000_000)
        let feed = try FeedParser(file: "big.xml").parse(data)
        XCTAssertEqual(feed.items.count, 9_000)
        XCTAssertEqual(feed.items.last?.title, "Caf\u{E9} 8999")
        XCTAssertEqual(feed.items.last?.summary?.hasPrefix("Caf\u{E9} au lait"), true)
    }

    func testAtomTextConstructsAreKeptAsTheirTypeSays() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>
            <entry><id>urn:1</id><title type="html">&lt;em&gt;Big&lt;/em&gt; news &amp;amp; views</title>
            <summary>5 &lt; 6 &amp; 7</summary>
            <content type="text">Use &lt;script&gt;alert(1)&lt;/script&gt;</content></entry>
            <entry><id>urn:2</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Small <b>print</b></div></title>
            <summary type="html">&lt;p&gt;Kept&lt;/p&gt;</summary>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>As <i>is</i></p></div></content></entry>
            <entry><id>urn:3</id><title>Fish &amp; &lt;chips&gt;</title></entry>
            </feed>
            """
        let items = try FeedParser(file: "a.xml").parse(Data(atom.utf8)).items
        XCTAssertEqual(items.map(\.title), ["Big news & views", "Small print", "Fish & <chips>"], "titles are text")
        XCTAssertEqual(items[0].summary, "5 &lt; 6 &amp; 7", "plain text is escaped: summaries and content are HTML")
        XCTAssertEqual(items[0].content, "Use &lt;script&gt;alert(1)&lt;/script&gt;")
        XCTAssertEqual(items[1].summary, "<p>Kept</p>")
        XCTAssertEqual(items[1].content, "<p>As <i>is</i></p>")
    }

    func testAnItemsSlugIsItsLinksLastSegmentWithItsQueryAndWithoutAPageExtension() throws {
        let links = ["https://www.youtube.com/watch?v=abc", "https://www.youtube.com/watch?v=def", "https://e.com/article.php?id=7",
                     "https://github.com/o/r/releases/tag/v1.2.3", "https://e.com/2024/01/hello/index.html",
                     "https://news.example.org/2024/2024-02-20-farmers.html", "https://e.com/?p=42", "https://e.com/post",
                     // No letter or digit to name a page by: the id names it (these made `untitled`, and a clash).
                     "https://party.example/%F0%9F%8E%89", "https://party.example/%E2%80%8B", "https://party.example/..", "https://e.com/x?q=%F0%9F%8D%95"]
        let rss = "<rss version=\"2.0\"><channel><title>F</title>"
            + links.enumerated().map { "<item><guid isPermaLink=\"false\">g\($0.offset)</guid><link>\($0.element.replacingOccurrences(of: "&", with: "&amp;"))</link></item>" }.joined()
            + "</channel></rss>"
        let records = try FeedSource(url: URL(fileURLWithPath: "/dev/null"), displayName: "f.xml").read(Data(rss.utf8)).records
        XCTAssertEqual(records.map { $0.fields["slug"] }, ["watch-abc", "watch-def", "article-7", "v1.2.3", "hello", "2024-02-20-farmers", "42", "g7",
                                                           "g8", "g9", "g10", "x"]
            .map { FieldValue.text($0) })
    }

    /// Templates put an item's link in an `href`: a feed must not make the site run its script.
    func testAnItemLinkThatIsNotAWebAddressIsLeftOutWithAWarning() throws {
        let rss = """
            <rss version="2.0"><channel><title>F</title>
            <item><guid>g1</guid><title>A</title><link>javascript:alert(document.cookie)</link></item>
            <item><guid>g2</guid><title>B</title><link> JaVa\tScript:alert(1)</link></item>
            <item><guid>g3</guid><title>C</title><link>data:text/html,&lt;script&gt;x&lt;/script&gt;</link></item>
            <item><guid>g4</guid><title>D</title><link>https://e.com/d</link></item>
            <item><guid>g5</guid><title>E</title><link>/local/e:1</link></item>
            </channel></rss>
            """
        let result = try FeedSource(url: URL(fileURLWithPath: "/dev/null"), displayName: "f.xml").read(Data(rss.utf8))
        XCTAssertEqual(result.records.map { $0.fields["link"] },
                       [.null, .null, .null, .text("https://e.com/d"), .text("/local/e:1")])
        XCTAssertEqual(result.warnings.map(\.description), [
            "f.xml:2: item link 'javascript:alert(document.cookie)' is not a web address; the item is kept without it",
            "f.xml:3: item link 'JaVa\tScript:alert(1)' is not a web address; the item is kept without it",
            "f.xml:4: item link 'data:text/html,<script>x</script>' is not a web address; the item is kept without it",
        ])
    }

    func testAnUndeclaredNamespacePrefixIsAWarningAndItsElementsAreNotTheItemsOwn() throws {
        let rss = """
            <rss version="2.0"><channel><title>t</title>
            <item><media:title>Not this</media:title><title>A</title><link>https://e.com/a</link><media:thumbnail url="https://e.com/a.jpg"/></item>
            <item><title>B</title><link>https://e.com/b</link></item>
            </channel></rss>
            """
        let feed = try FeedParser(file: "ns.xml").parse(Data(rss.utf8))
        XCTAssertEqual(feed.items.map(\.title), ["A", "B"])
        XCTAssertEqual(feed.warnings.map(\.description),
                       ["ns.xml:2:19: a namespace prefix is used but never declared (xmlns:…); its elements are ignored"])
    }

    func testRelativeLinksInContentLeadWhereTheyLedOnTheItemsPage() throws {
        let rss = """
            <rss version="2.0"><channel><title>t</title><link>https://e.com/</link>
            <item><title>A</title><link>https://e.com/2024/post.html</link>
            <description>&lt;img src="pic.png"&gt; &lt;a href='/about?x=1&amp;amp;y=2'&gt;x&lt;/a&gt; &lt;a href="#top"&gt;&lt;/a&gt; &lt;a href="mailto:a@e.com"&gt;&lt;/a&gt; &lt;a href="https://o.org/"&gt;&lt;/a&gt; &lt;!-- href="c" --&gt; src="text.png"</description></item>
            </channel></rss>
            """
        XCTAssertEqual(try FeedParser(file: "r.xml").parse(Data(rss.utf8)).items.first?.summary,
                       "<img src=\"https://e.com/2024/pic.png\"> <a href='https://e.com/about?x=1&amp;y=2'>x</a> <a href=\"#top\"></a> "
                       + "<a href=\"mailto:a@e.com\"></a> <a href=\"https://o.org/\"></a> <!-- href=\"c\" --> src=\"text.png\"")
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://atom.example/blog/"><title>A</title>
            <entry><id>urn:2</id><title>T</title><updated>2024-01-02T03:04:05Z</updated>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><a href="rel/y">y</a><img src="pic.png"/><br/></div></content></entry>
            </feed>
            """
        let entry = try XCTUnwrap(try FeedParser(file: "a.xml").parse(Data(atom.utf8)).items.first)
        XCTAssertEqual(entry.content, "<a href=\"https://atom.example/blog/rel/y\">y</a><img src=\"https://atom.example/blog/pic.png\"><br>",
                       "against the xml:base in force; void elements have no end tag")
        XCTAssertNil(entry.link, "an Atom id such as urn:2 is a name, not a page")
        XCTAssertEqual(entry.published.map(FeedDate.rfc3339), "2024-01-02T03:04:05Z", "an entry with only its update date is dated by it")
    }

    /// Each image candidate of a `srcset` is a URL a reader loads: relative, it broke in readers (which
    /// resolve it against the feed) and on the entry's page.
    func testEachCandidateOfASrcsetIsMadeAbsolute() throws {
        let json = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "J", "home_page_url": "https://j.example/",
             "items": [{"id": "1", "url": "https://j.example/2024/post.html", "content_html":
             "<img src=\\"m.png\\" srcset=\\"m.png 1x, img/m@2x.png 2x,https://cdn.example/m3.png 3x\\"><picture><source srcset='/w/a.png 100w, b,c.png'><source SRCSET=a.png,b.png></picture><link imagesrcset=\\"h.png 1x\\">"}]}
            """
        let item = try XCTUnwrap(try FeedParser(file: "j.json").parse(Data(json.utf8)).items.first)
        XCTAssertEqual(item.content, "<img src=\"https://j.example/2024/m.png\" srcset=\"https://j.example/2024/m.png 1x, "
            + "https://j.example/2024/img/m@2x.png 2x,https://cdn.example/m3.png 3x\"><picture><source srcset='https://j.example/w/a.png 100w, "
            + "https://j.example/2024/b,c.png'><source SRCSET=https://j.example/2024/a.png,b.png></picture><link imagesrcset=\"https://j.example/2024/h.png 1x\">",
            "a URL ends at a space, commas at its end close its candidate, and a candidate without descriptors may hold a comma")
        XCTAssertEqual(HTMLLinks.resolving("<img srcset=\"a.png 1x,\r\nb.png 2x,\u{301}c.png\">", against: URL(string: "https://e.org/p/")!),
                       "<img srcset=\"https://e.org/p/a.png 1x,\r\nhttps://e.org/p/b.png 2x,https://e.org/p/%CC%81c.png\">",
                       "a line break is a space, and a combining mark no part of the comma before it")
    }

    /// A link's value loses the spaces at its ends exactly as Foundation's `.whitespaces` trims them (tab
    /// and the space separators, not line breaks), character for character: random values against it.
    func testALinksValueIsTrimmedOfWhatFoundationCallsWhitespace() {
        let alphabet: [Unicode.Scalar] = ["a", "/", " ", "\t", "\n", "\r", "\u{0B}", "\u{0C}", "\u{A0}", "\u{2003}", "\u{3000}", "\u{200B}",
                                          "\u{2028}", "\u{85}", "\u{301}", "é", "\u{1F600}"]
        var random = SeededGenerator(seed: 38)
        for _ in 0..<3_000 {
            let text = random.text(from: alphabet, maxLength: 8)
            XCTAssertEqual(Array(HTMLLinks.trimmingSpaces(text).unicodeScalars), Array(text.trimmingCharacters(in: .whitespaces).unicodeScalars),
                           "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        XCTAssertEqual(HTMLLinks.resolving("<a href=\" \u{3000}pic.png\t\">", against: URL(string: "https://e.org/p/")!),
                       "<a href=\"https://e.org/p/pic.png\">")
    }

    func testAJSONFeedItemWithOnlyAModifiedDateIsPublishedThen() throws {
        let json = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [
             {"id": "m1", "url": "https://j.example/m", "date_modified": "2024-03-03T00:00:00Z"},
             {"id": "m2", "url": "https://j.example/n", "date_published": "2024-01-01T00:00:00Z", "date_modified": "2024-03-03T00:00:00Z"}]}
            """
        let items = try FeedParser(file: "j.json").parse(Data(json.utf8)).items
        XCTAssertEqual(items.map(\.published), [FeedDate.parse("2024-03-03T00:00:00Z"), FeedDate.parse("2024-01-01T00:00:00Z")])
        XCTAssertEqual(items.map(\.updated), [FeedDate.parse("2024-03-03T00:00:00Z"), FeedDate.parse("2024-03-03T00:00:00Z")])
    }

    func testAJSONFeedItemsRelativeAddressesAreResolvedAgainstItsHomePage() throws {
        let json = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "J", "home_page_url": "https://j.example/",
             "items": [{"id": "1", "url": "/relative/c", "content_html": "<img src=\\"pic.png\\">"}]}
            """
        let item = try XCTUnwrap(try FeedParser(file: "j.json").parse(Data(json.utf8)).items.first)
        XCTAssertEqual(item.link, "https://j.example/relative/c")
        XCTAssertEqual(item.content, "<img src=\"https://j.example/relative/pic.png\">")
    }

    /// `text` written to a file `name` and read from it as a build reads a feed (as a stream).
    private func readAsAFile(_ text: String, named name: String) throws -> SourceResult {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return try FeedSource(url: file, displayName: name).read()
    }

    func testEntitiesTheDocumentTypeDeclaresAreReplacedByTheirText() throws {
        let rss = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [
              <!ENTITY co "Example Corp">
              <!ENTITY full 'the &co; group'>
              <!ENTITY % param "ignored">
              <!ENTITY logo SYSTEM "logo.gif">
            ]>
            <rss version="2.0"><channel><title>&co; news</title>
            <item><title>Results from &co; today</title><link>https://e.com/a</link><description>&full; &amp; &eacute;</description></item>
            </channel></rss>
            """
        let feed = try FeedParser(file: "d.xml").parse(Data(rss.utf8))
        XCTAssertEqual(feed.title, "Example Corp news")
        XCTAssertEqual(feed.items.first?.title, "Results from Example Corp today")
        XCTAssertEqual(feed.items.first?.summary, "the Example Corp group & \u{E9}")
        XCTAssertEqual(feed.warnings.map(\.description),
                       ["d.xml:9: HTML entity names such as '&eacute;' are not XML; read as the characters they name"])
        let read = try readAsAFile(rss, named: "d.xml")
        XCTAssertEqual(read.records.first?.fields["title"], .text("Results from Example Corp today"), "read as a stream too")
        XCTAssertEqual(read.warnings.map(\.description), feed.warnings.map(\.description))
    }

    func testADocumentTypeInsideAnItemIsTextAndKeptWhole() throws {
        let rss = "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>t</title>\n"
            + "<item><title>Doc</title><link>https://e.com/1</link><description><![CDATA[Write <!DOCTYPE html [ <!ENTITY a \"b\"> ]> first &a;]]></description></item>"
            + "</channel></rss>\n"
        XCTAssertEqual(try FeedParser(file: "c.xml").parse(Data(rss.utf8)).items.first?.summary,
                       "Write <!DOCTYPE html [ <!ENTITY a \"b\"> ]> first &a;")
    }

    /// Nine declarations of ten references each name 7.2 GB of text: a feed from a stranger must not take
    /// the build's memory and minutes. One that grows past the bound is left out with a warning, and the
    /// parser never sees the declarations (libxml2 expanding the deepest itself took minutes).
    func testNestedDeclarationsAreExpandedWithinABoundAndDoNotStopTheBuild() throws {
        var declarations = "<!ENTITY a \"\(String(repeating: "a", count: 72))\">\n"
        for (previous, next) in zip("abcdefgh", "bcdefghi") {
            declarations += "<!ENTITY \(next) \"\(String(repeating: "&\(previous);", count: 10))\">\n"
        }
        let rss = "<?xml version=\"1.0\"?>\n<!DOCTYPE rss [\n\(declarations)]>\n<rss version=\"2.0\"><channel><title>F &c;</title>"
            + "<item><title>plain &d;</title><link>https://f.example.org/1</link><guid>g1</guid></item>"
            + "<item><title>deep &i;</title><link>https://f.example.org/2</link><guid>g2</guid></item></channel></rss>\n"
        let entities = XMLCleaner.internalEntities(in: Array(rss.utf8))
        XCTAssertEqual(entities["c"]?.count, 7_200, "two levels: a hundred a's of 72")
        XCTAssertEqual(entities["d"], [], "72,000 bytes, past 64 KiB: left out")
        XCTAssertEqual(entities["i"], [], "eight levels deep: left out")
        XCTAssertLessThanOrEqual(entities.values.map(\.count).max() ?? 0, 64 << 10)
        let feed = try FeedParser(file: "n.xml").parse(Data(rss.utf8))
        XCTAssertEqual(feed.title, "F " + String(repeating: "a", count: 7_200))
        XCTAssertEqual(feed.items.map(\.id), ["g1", "g2"])
        XCTAssertEqual(feed.items.map(\.title), ["plain", "deep"])
        XCTAssertEqual(feed.warnings.map(\.description), ["d", "i"].map {
            "n.xml:1: the entity '\($0)' declared in the document type nests too deep or grows past 64 KiB; its references are left out"
        })
        let read = try readAsAFile(rss, named: "n.xml")
        XCTAssertEqual(read.records.map { $0.fields["title"] }, [.text("plain"), .text("deep")], "read as a stream too")
        XCTAssertEqual(read.warnings.count, 2)
    }

    /// A declared external entity was reported as "an undeclared entity (&name;)", with `&name;` as it
    /// stands; an undeclared one is now named too, whether the feed is read whole or as a stream.
    func testAnUndeclaredOrExternalEntityIsNamedInTheError() throws {
        func failure(_ rss: String) throws -> [String] {
            var reasons: [String] = []
            XCTAssertThrowsError(try FeedParser(file: "e.xml").parse(Data(rss.utf8))) { reasons.append("\($0)") }
            XCTAssertThrowsError(try readAsAFile(rss, named: "e.xml")) { reasons.append("\($0)") }
            return reasons
        }
        let external = "<?xml version=\"1.0\"?>\n<!DOCTYPE rss [\n<!ENTITY logo SYSTEM \"file:///etc/passwd\">\n]>\n"
            + "<rss version=\"2.0\"><channel><title>t</title>\n<item><title>&amp; &lt;b&gt; &logo;</title></item></channel></rss>\n"
        XCTAssertEqual(try failure(external).map { $0.hasPrefix("e.xml:6:") }, [true, true])
        XCTAssertEqual(try failure(external).map { $0.components(separatedBy: ": ").dropFirst().joined(separator: ": ") }, Array(repeating:
            "not well-formed XML: the entity '&logo;' is declared in the document type as external (SYSTEM or PUBLIC: another file's text), "
            + "which sitegen never reads; declare its text (<!ENTITY logo \"...\">), or write &amp;logo; for the characters '&logo;'", count: 2))
        let undeclared = "<rss version=\"2.0\"><channel><title>t</title>\n<item><title>AT&T; &copy; &mystery;</title></item></channel></rss>\n"
        XCTAssertEqual(try failure(undeclared).map { $0.components(separatedBy: ": ").dropFirst().joined(separator: ": ") }, Array(repeating:
            "not well-formed XML: the entity '&T;' is not declared (XML has only &amp; &lt; &gt; &quot; &apos;; HTML's names are read too); "
            + "declare it in the document type, or write &amp;T; for the characters '&T;'", count: 2))
    }

    /// An entity under 64 KiB referenced 20,000 times was reported as one that "grows past 64 KiB; its
    /// references are left out" while 16 MiB of them were kept: the warning now says the document's budget ran
    /// out, how many were replaced, and where the first left out is.
    func testReferencesPastTheDocumentsBudgetAreCountedInTheWarning() throws {
        let value = String(repeating: "x", count: 1_000)
        let references = String(repeating: "&big;", count: 20_000)
        let rss = "<?xml version=\"1.0\"?>\n<!DOCTYPE rss [<!ENTITY big \"\(value)\">]>\n<rss version=\"2.0\"><channel><title>t</title>\n"
            + "<item><title>a</title><link>https://e.com/1</link><description>\(references)</description></item></channel></rss>\n"
        let feed = try FeedParser(file: "b.xml").parse(Data(rss.utf8))
        let replaced = (16 << 20) / 1_000
        XCTAssertEqual(feed.items.first?.summary?.count, replaced * 1_000)
        XCTAssertEqual(feed.warnings.map(\.description), [
            "b.xml:4: references to the entities the document type declares may add at most 16 MiB to a document; "
            + "the first \(replaced) were replaced, and from this one (&big;) on they are left out",
        ])
    }

    func testADocumentThatIsNotAFeedSaysSo() {
        XCTAssertThrowsError(try FeedParser(file: "page.xml").parse(Data("<html><body/></html>".utf8))) { error in
            XCTAssertEqual((error as? SourceError)?.reason, "not a feed: expected an <rss>, <rdf:RDF> or <feed> root element")
        }
    }

    func testItemLinksResolveAgainstXMLBaseAndElseTheFeedsLink() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://example.org/blog/">
            <link href="/"/>
            <entry xml:base="2024/"><id>e1</id><link href="post.html"/></entry>
            <entry><id>e2</id><link href="../about"/></entry>
            </feed>
            """
        let feed = try FeedParser(file: "base.xml").parse(Data(atom.utf8))
        XCTAssertEqual(feed.link, "http://example.org/")
        XCTAssertEqual(feed.items.map(\.link), ["http://example.org/blog/2024/post.html", "http://example.org/about"])
        let rss = "<rss version=\"2.0\"><channel><link>https://news.example.org/</link><item><guid>a</guid><link>/2024/a.html</link></item></channel></rss>"
        XCTAssertEqual(try FeedParser(file: "rel.xml").parse(Data(rss.utf8)).items.first?.link, "https://news.example.org/2024/a.html")
    }
}
