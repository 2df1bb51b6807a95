import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import SiteBuild
import SiteRender
import SiteSources
import XCTest

/// Builds the bundled example site (sitegen.yml, content/, Templates/ at the repository root) in a temporary copy.
final class ExampleSiteTests: XCTestCase {
    private var site: URL!
    private var output: URL { site.appendingPathComponent("output") }

    override func setUpWithError() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-example-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        for item in ["sitegen.yml", "content", "Templates"] {
            try FileManager.default.copyItem(at: repository.appendingPathComponent(item), to: site.appendingPathComponent(item))
        }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: site)
    }

    private func build() throws -> BuildSummary { try SiteBuilder(root: site).build() }

    private func page(_ path: String) throws -> String {
        try String(contentsOf: output.appendingPathComponent(path), encoding: .utf8)
    }

    private func writtenFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: output.path)!
        return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".html") }.sorted()
    }

    func testTheExampleBuildsEveryListingAndDetailPage() throws {
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        // 300 banks at 20 a page, 31 news items at 20 a page, a page per bank, news item and Markdown page;
        // then 404.html, sitemap.xml and robots.txt, and the feeds (Atom and RSS of the banks, all three of the
        // news for each of its two archive pages), the banks by state (an index and 22 pages for 18 states) and the news by topic (an index and
        // a page for each of 15 topics).
        XCTAssertEqual(summary.pagesWritten, 15 + 2 + 300 + 31 + 2 + 3 + 8 + 23 + 16 + 23, "and the Markdown report by state")
        XCTAssertEqual(writtenFiles().count, 350 + 1 + 23 + 16)
        XCTAssertTrue(writtenFiles().contains("page/15/index.html"))
        XCTAssertFalse(writtenFiles().contains("page/16/index.html"))
        XCTAssertEqual(summary.rowsInserted, 300 + 31 + 2)
        // Kept counts pages, as rendered does: a page's feeds and Markdown twin are not more pages.
        XCTAssertEqual(try build().pagesKept, summary.rendered.count)
        let records = site.appendingPathComponent("content/records/failed-banks.csv")
        try String(contentsOf: records, encoding: .utf8).replacingOccurrences(of: "\nCapitol Bank,", with: "\nCapitol Bank RENAMED,")
            .write(to: records, atomically: true, encoding: .utf8)
        let edited = try build()
        XCTAssertGreaterThan(edited.rendered.count, 0)
        XCTAssertEqual(edited.rendered.count + edited.pagesKept, summary.rendered.count)
    }

    func testPastItsLimitTheSitemapIsAnIndexOfPartsThatAnIncrementalBuildKeepsAsACleanBuildWould() throws {
        var options = SiteBuilder.Options()
        options.pagesPerSitemap = 20
        func locations(_ path: String) throws -> [String] {
            try XMLDocument(xmlString: page(path)).nodes(forXPath: "//*[local-name()='loc']").compactMap(\.stringValue)
        }
        func pageURLs() -> [String] {
            writtenFiles().filter { $0.hasSuffix("index.html") }.sorted().map { "https://failedbanks.example.org/" + $0.dropLast("index.html".count) }
        }
        func checkParts(limit: Int = 20) throws -> Int {
            let index = try XMLDocument(xmlString: page("sitemap.xml"))
            XCTAssertEqual(index.rootElement()?.name, "sitemapindex")
            let parts = try locations("sitemap.xml")
            let expected = (pageURLs().count + limit - 1) / limit
            XCTAssertEqual(parts, (1...expected).map { "https://failedbanks.example.org/sitemap-\($0).xml" })
            let listed = try (1...expected).map { try locations("sitemap-\($0).xml") }
            XCTAssertEqual(listed.map(\.count), (0..<expected).map { min(limit, pageURLs().count - $0 * limit) }, "\(limit) pages a part")
            XCTAssertEqual(listed.flatMap { $0 }, pageURLs(), "every page once, in path order")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output.appendingPathComponent("sitemap-\(expected + 1).xml").path))
            return expected
        }
        // One file at first; then, with no page added or removed, the parts a build from nothing would write.
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        XCTAssertEqual(try XMLDocument(xmlString: page("sitemap.xml")).rootElement()?.name, "urlset")
        XCTAssertTrue(try SiteBuilder(root: site).build(options: options).succeeded)
        let before = try checkParts()
        XCTAssertGreaterThan(before, 3)

        // Two limits a page apart that make as many parts: the same files, split elsewhere.
        let pageCount = pageURLs().count
        let parts = { (limit: Int) in (pageCount + limit - 1) / limit }
        let limit = (21..<pageCount / 4).first { parts($0) == parts($0 + 1) }!
        for limit in [limit, limit + 1, 20] {
            var other = options
            other.pagesPerSitemap = limit
            XCTAssertTrue(try SiteBuilder(root: site).build(options: other).succeeded)
            XCTAssertEqual(try checkParts(limit: limit), parts(limit), "\(limit) pages a part")
        }

        // The banks gone: fewer parts, and the last ones go.
        try FileManager.default.removeItem(at: site.appendingPathComponent("content/records/failed-banks.csv"))
        let incremental = try SiteBuilder(root: site).build(options: options)
        XCTAssertTrue(incremental.succeeded)
        XCTAssertLessThan(try checkParts(), before)
        XCTAssertTrue(incremental.deletedPaths.contains("sitemap-\(before).xml"), "\(incremental.deletedPaths.filter { $0.hasPrefix("sitemap") })")

        // Pages added before, among and after the last build's, and one gone: each part lists its pages in
        // path order, the new merged with those the store has.
        let pages = site.appendingPathComponent("content/pages")
        for name in ["0-first", "news-between", "zz-last"] {
            try "---\ntitle: Page \(name)\n---\nA page.\n".write(to: pages.appendingPathComponent("\(name).md"), atomically: true, encoding: .utf8)
        }
        try FileManager.default.removeItem(at: pages.appendingPathComponent("methodology.md"))
        let added = try SiteBuilder(root: site).build(options: options)
        XCTAssertTrue(added.succeeded, "\(added.problems)")
        XCTAssertTrue(added.rendered.contains { $0.path == "sitemap-1.xml" }, "\(added.rendered.map(\.path).filter { $0.hasPrefix("sitemap") })")
        _ = try checkParts()
        for url in ["0-first/", "news-between/", "zz-last/"] { XCTAssertTrue(pageURLs().contains("https://failedbanks.example.org/" + url), url) }

        // An edit that adds or removes no page leaves the sitemap alone.
        let about = site.appendingPathComponent("content/pages/about.md")
        try (String(contentsOf: about, encoding: .utf8) + "\nOne more sentence.\n").write(to: about, atomically: true, encoding: .utf8)
        let edit = try SiteBuilder(root: site).build(options: options)
        XCTAssertFalse(edit.rendered.contains { $0.path.hasPrefix("sitemap") }, "\(edit.rendered.map(\.path))")
        XCTAssertTrue(edit.rendered.contains { $0.path.hasPrefix("about/") }, "\(edit.rendered.map(\.path))")

        // A new base URL, with the same pages: every part is written again, with the new addresses.
        let config = site.appendingPathComponent("sitegen.yml")
        try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "https://failedbanks.example.org/", with: "https://banks.example.net/")
            .write(to: config, atomically: true, encoding: .utf8)
        let moved = try SiteBuilder(root: site).build(options: options)
        XCTAssertTrue(moved.rendered.contains { $0.path == "sitemap-1.xml" }, "\(moved.rendered.map(\.path))")
        XCTAssertTrue(try locations("sitemap-1.xml").allSatisfy { $0.hasPrefix("https://banks.example.net/") })

        // What a build from nothing writes.
        let clean = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-clean-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: clean) }
        try FileManager.default.createDirectory(at: clean, withIntermediateDirectories: true)
        for item in ["sitegen.yml", "content", "Templates"] {
            try FileManager.default.copyItem(at: site.appendingPathComponent(item), to: clean.appendingPathComponent(item))
        }
        XCTAssertTrue(try SiteBuilder(root: clean).build(options: options).succeeded)
        let files = { (root: URL) in
            FileManager.default.enumerator(atPath: root.appendingPathComponent("output").path)!.compactMap { $0 as? String }.sorted()
        }
        XCTAssertEqual(files(site), files(clean))
        for file in files(clean) where file.hasSuffix(".xml") {
            XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent(file)),
                           try Data(contentsOf: clean.appendingPathComponent("output").appendingPathComponent(file)), file)
        }
    }

    func testTheSitemapListsEveryPageAndRobotsAndTheNotFoundPagePointTheWay() throws {
        _ = try build()
        let sitemap = try page("sitemap.xml")
        let document = try XMLDocument(xmlString: sitemap)
        let locations = try document.nodes(forXPath: "//*[local-name()='loc']").compactMap(\.stringValue)
        let pages = writtenFiles().filter { $0.hasSuffix("index.html") }
        XCTAssertEqual(locations.count, pages.count)
        XCTAssertEqual(Set(locations), Set(pages.map { "https://failedbanks.example.org/" + $0.dropLast("index.html".count) }))
        XCTAssertTrue(locations.contains("https://failedbanks.example.org/banks/23917/"))
        XCTAssertEqual(try page("robots.txt"), "User-agent: *\nAllow: /\n\nSitemap: https://failedbanks.example.org/sitemap.xml\n")
        let notFound = try page("404.html")
        XCTAssertTrue(notFound.contains("<h1>Page not found</h1>") && notFound.contains(#"<a href="/">Go to the home page</a>"#))
        XCTAssertTrue(notFound.contains(#"<a href="/news/">News</a>"#), "the site's navigation")
    }

    func testListingFeedsParseBackWithTheFirstPagesRowsInEveryFormat() throws {
        // A page whose path is not ASCII: feeds link it as a URL, percent-encoded (RSS and JSON Feed allow nothing else).
        let news = site.appendingPathComponent("content/feeds/news.xml")
        try String(contentsOf: news, encoding: .utf8).replacingOccurrences(of: "2024-02-02-capitol-bank.html", with: "東京-capitol-bank.html")
            .write(to: news, atomically: true, encoding: .utf8)
        _ = try build()
        XCTAssertTrue(FileManager.default.fileExists(atPath: output.appendingPathComponent("news/東京-capitol-bank/index.html").path))
        for file in ["news/atom.xml", "news/rss.xml", "news/feed.json"] {
            let text = try page(file)
            XCTAssertTrue(text.contains("https://failedbanks.example.org/news/%E6%9D%B1%E4%BA%AC-capitol-bank/"), file)
            // The entry's id is as it was: a new id is a new entry to a reader.
            XCTAssertTrue(text.contains("https://failedbanks.example.org/news/東京-capitol-bank/"), file)
        }
        XCTAssertTrue(try page("news/rss.xml").contains(#"<guid isPermaLink="false">https://failedbanks.example.org/news/東京-capitol-bank/</guid>"#))
        func feed(_ path: String) throws -> FeedDocument {
            try FeedParser(file: path).parse(Data(contentsOf: output.appendingPathComponent(path)))
        }
        let atom = try feed("news/atom.xml"), rss = try feed("news/rss.xml"), json = try feed("news/feed.json")
        XCTAssertEqual([atom.kind, rss.kind, json.kind], [.atom10, .rss20, .json11])
        XCTAssertEqual([atom.title, rss.title, json.title], ["News", "News", "News"])
        XCTAssertEqual(atom.items.count, 11, "the newest page's rows: 31 news in a stable archive of 20 a page")
        for other in [rss, json] {
            XCTAssertEqual(other.items.map(\.id), atom.items.map(\.id))
            XCTAssertEqual(other.items.map(\.title), atom.items.map(\.title))
            XCTAssertEqual(other.items.map(\.published), atom.items.map(\.published), "RFC 822 and RFC 3339 dates agree")
            XCTAssertEqual(other.items.map(\.content), atom.items.map(\.content))
        }
        let dates = atom.items.compactMap(\.published)
        XCTAssertEqual(dates.count, 11)
        XCTAssertEqual(dates, dates.sorted(by: >), "newest first")
        XCTAssertTrue(atom.items[0].title?.contains("Farmers & Merchants Bank of Long Beach") == true)
        for item in atom.items {
            let link = try XCTUnwrap(item.link)
            XCTAssertTrue(link.hasPrefix("https://failedbanks.example.org/news/"), link)
            let path = String(link.dropFirst("https://failedbanks.example.org/".count)).removingPercentEncoding! + "index.html"
            XCTAssertTrue(FileManager.default.fileExists(atPath: output.appendingPathComponent(path).path), "\(link) is a written page")
        }
        // An Atom entry updated after it was published says so in the feeds written from it.
        try """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>U</title><id>urn:u</id><updated>2024-03-01T08:00:00Z</updated>
            <entry><id>urn:u:1</id><title>Corrected closing</title><link href="https://u.example/corrected.html"/>
            <published>2024-02-21T10:00:00Z</published><updated>2024-03-01T08:00:00Z</updated><content>Text</content></entry></feed>
            """.write(to: site.appendingPathComponent("content/feeds/updates.xml"), atomically: true, encoding: .utf8)
        _ = try build()
        XCTAssertTrue(try page("news/atom.xml").contains("<id>https://failedbanks.example.org/news/corrected/</id>\n"
            + "<updated>2024-03-01T08:00:00Z</updated>\n<published>2024-02-21T10:00:00Z</published>"))
        XCTAssertTrue(try page("news/feed.json").contains(#""date_published": "2024-02-21T10:00:00Z", "date_modified": "2024-03-01T08:00:00Z""#))
        let banks = try feed("atom.xml")
        XCTAssertEqual(banks.items.count, 20)
        // The list pages never show a bank's notes, so they read rows without them; the feed's page reads
        // whole records: its entries carry the notes (the detail body) as content.
        XCTAssertEqual(banks.items.first?.title, "Farmers & Merchants Bank of Long Beach")
        XCTAssertTrue(banks.items.first?.content?.contains("<strong>$185,500,000</strong> were assumed by Regions Bank") == true,
                      banks.items.first?.content ?? "no content")
        XCTAssertFalse(try page("index.html").contains("185,500,000"), "the list page does not show the notes")
        XCTAssertEqual(banks.items.first.flatMap(\.published).map(FeedDate.rfc3339), "2024-02-20T00:00:00Z", "a date field is midnight UTC")
        XCTAssertTrue(try page("index.html").contains(#"<link rel="alternate" type="application/atom+xml" title="Failed banks, newest first (atom)" href="/atom.xml">"#))
    }

    func testSectionIndexCountsAddUpAndEachSectionListsOnlyItsOwnRows() throws {
        _ = try build()
        let index = try page("states/index.html")
        let entries = try NSRegularExpression(pattern: #"<li><a href="/states/([a-z]+)/">([A-Z]+)</a> <span class="count">(\d+)</span></li>"#)
        let matches = entries.matches(in: index, range: NSRange(index.startIndex..., in: index)).map { match in
            (1...3).map { String(index[Range(match.range(at: $0), in: index)!]) }
        }
        XCTAssertEqual(matches.count, 18)
        XCTAssertEqual(matches.reduce(0) { $0 + Int($1[2])! }, 300, "the counts add up to the rows")
        XCTAssertTrue(index.contains("<p>300 records in 18 sections</p>"))
        let groups = try NSRegularExpression(pattern: #"<h2 id="section-([A-Z])">"#).matches(in: index, range: NSRange(index.startIndex..., in: index))
            .map { String(index[Range($0.range(at: 1), in: index)!]) }
        XCTAssertEqual(groups, groups.sorted())
        XCTAssertEqual(Set(groups), Set(matches.map { String($0[1].prefix(1)) }), "a group per first letter")
        let states = try NSRegularExpression(pattern: #"</td><td>([A-Z]{2})</td><td>"#)
        for match in matches {
            let count = Int(match[2])!
            var seen = 0
            for number in 1...((count + 19) / 20) {
                let html = try page("states/\(match[0])/" + (number == 1 ? "" : "page/\(number)/") + "index.html")
                let rows = states.matches(in: html, range: NSRange(html.startIndex..., in: html)).map { String(html[Range($0.range(at: 1), in: html)!]) }
                XCTAssertEqual(Set(rows), [match[1]], "only \(match[1]) on its pages")
                seen += rows.count
            }
            XCTAssertEqual(seen, count)
        }
        XCTAssertTrue(try page("states/ca/index.html").contains(#"<p class="crumbs"><a href="/states/">Failed banks by state</a> › CA</p>"#))
    }

    func testAStableArchiveLinksItsFeedsByRFC5005AndAFullPageNeverChanges() throws {
        _ = try build()
        let current = try page("news/atom.xml"), archive = try page("news/page/1/atom.xml")
        XCTAssertTrue(current.contains(#"<link rel="current" type="application/atom+xml" href="https://failedbanks.example.org/news/atom.xml"/>"#))
        XCTAssertTrue(current.contains(#"<link rel="prev-archive" type="application/atom+xml" href="https://failedbanks.example.org/news/page/1/atom.xml"/>"#))
        XCTAssertFalse(current.contains("<fh:archive/>"))
        XCTAssertTrue(archive.contains("<fh:archive/>"))
        XCTAssertTrue(archive.contains(#"<link rel="current" type="application/atom+xml" href="https://failedbanks.example.org/news/atom.xml"/>"#))
        XCTAssertFalse(archive.contains("prev-archive"), "page 1 is the oldest")
        XCTAssertFalse(archive.contains("next-archive"), "the page after it is the current document, not an archive")
        XCTAssertTrue(try page("news/rss.xml").contains(#"<atom:link rel="prev-archive" type="application/rss+xml" href="https://failedbanks.example.org/news/page/1/rss.xml"/>"#))
        XCTAssertTrue(try page("news/feed.json").contains(#""next_url": "https://failedbanks.example.org/news/page/1/feed.json","#))
        let archived = try FeedParser(file: "a").parse(Data(archive.utf8))
        XCTAssertEqual(archived.items.count, 20, "the oldest twenty")
        XCTAssertTrue(try page("news/index.html").contains(#"<a rel="next" href="/news/page/1/">"#), "older is page 1")

        // One more news item: only the newest page and its feeds change; the full archive page does not.
        let before = try ["news/page/1/index.html", "news/page/1/atom.xml", "news/page/1/rss.xml", "news/page/1/feed.json"].map(page)
        let feedURL = site.appendingPathComponent("content/feeds/news.xml")
        var xml = try String(contentsOf: feedURL, encoding: .utf8)
        xml = xml.replacingOccurrences(of: "</channel>", with: """
              <item><title>Late news</title><link>https://news.example.org/2024/late.html</link>
              <pubDate>Wed, 28 Feb 2024 12:00:00 +0000</pubDate><category>Explainers</category></item>
            </channel>
            """)
        try xml.write(to: feedURL, atomically: true, encoding: .utf8)
        let again = try build()
        XCTAssertEqual(again.rowsInserted, 1)
        XCTAssertEqual(try ["news/page/1/index.html", "news/page/1/atom.xml", "news/page/1/rss.xml", "news/page/1/feed.json"].map(page), before)
        XCTAssertEqual(try FeedParser(file: "c").parse(Data(try page("news/atom.xml").utf8)).items.first?.title, "Late news")
    }

    func testOfficeLockFilesBesideSourcesAreNoSourcesAsTheWatchIgnoresThem() throws {
        waitPastTheClocksTick()
        let first = try build()
        XCTAssertTrue(first.succeeded)
        // What Word or LibreOffice leaves beside an open file: a name the pattern matches, and no content.
        try "---\ntitle: Two\n---\nbody\n".write(to: site.appendingPathComponent("content/pages/~$two.md"), atomically: true, encoding: .utf8)
        try "owner,when\nme,now\n".write(to: site.appendingPathComponent("content/records/~$failed-banks.csv"), atomically: true, encoding: .utf8)
        let second = try build()
        XCTAssertTrue(second.succeeded, "\(second.problems)")
        XCTAssertEqual(second.sourcesRead, 0)
        XCTAssertEqual(second.pagesWritten, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.appendingPathComponent("two").path))
        // A build told of them (a watch's) leaves them out too.
        let told = try SiteBuilder(root: site).build(options: SiteBuilder.Options(changedSources: ["content/pages/~$two.md", "content/records/~$failed-banks.csv"]))
        XCTAssertTrue(told.succeeded, "\(told.problems)")
        XCTAssertEqual(told.sourcesRead, 0)
    }

    func testPagesAndFoldersTakeTheirModesFromTheUmask() throws {
        let saved = umask(0o022)
        defer { umask(saved) }
        func mode(_ path: String) throws -> Int {
            try XCTUnwrap(FileManager.default.attributesOfItem(atPath: output.appendingPathComponent(path).path)[.posixPermissions] as? Int)
        }
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try mode("index.html"), 0o644)
        // A team's deploy folder from now on: group-writable, as a umask of 002 makes every tool's files.
        umask(0o002)
        let config = site.appendingPathComponent("sitegen.yml")
        let text = try String(contentsOf: config, encoding: .utf8)
        // Every page written again twice: the second time through the files the first left as spares.
        for title in ["New ", "Newer "] {
            try text.replacingOccurrences(of: "\ntitle: ", with: "\ntitle: " + title).write(to: config, atomically: true, encoding: .utf8)
            XCTAssertGreaterThan(try build().pagesWritten, 300)
            XCTAssertTrue(try page("index.html").contains(title))
        }
        let pages = writtenFiles()
        XCTAssertGreaterThan(pages.count, 300)
        let modes = Set(try pages.map { try mode($0) })
        XCTAssertEqual(modes, [0o664], "every page of the build has its mode")
        XCTAssertEqual(try mode("banks"), 0o755, "a folder made before keeps its mode")
    }

    func testTwoCleanBuildsWriteTheSameBytes() throws {
        _ = try build()
        let other = site.appendingPathComponent("second-output")
        let store = site.appendingPathComponent("second-store.sqlite")
        _ = try SiteBuilder(root: site, outputDirectory: other, storePath: store).build()
        let files = writtenFiles()
        let all = FileManager.default.enumerator(atPath: output.path)!.compactMap { $0 as? String }
            .filter { !$0.hasSuffix("/") && (try? FileManager.default.attributesOfItem(atPath: output.appendingPathComponent($0).path)[.type] as? FileAttributeType) == .typeRegular }
        XCTAssertGreaterThan(files.count, 300)
        for path in all {
            XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent(path)), try Data(contentsOf: other.appendingPathComponent(path)), path)
        }
        let otherCount = FileManager.default.enumerator(atPath: other.path)!.compactMap { $0 as? String }
            .filter { (try? FileManager.default.attributesOfItem(atPath: other.appendingPathComponent($0).path)[.type] as? FileAttributeType) == .typeRegular }.count
        XCTAssertEqual(otherCount, all.count)
    }

    func testTheMarkdownReportSumsUpBySectionAndYearAndTheIndexChartsIt() throws {
        _ = try build()
        let report = try page("states/index.md")
        XCTAssertTrue(report.hasPrefix("# Failed banks by state\n\n300 records in 18 sections.\n\n## Records per section\n\n| Section | Records |\n|---|---:|\n"))
        func total(_ heading: String) -> Int {
            let part = report.components(separatedBy: "## " + heading)[1].components(separatedBy: "\n## ")[0]
            return part.split(separator: "\n").filter { $0.hasPrefix("| ") && !$0.hasPrefix("| Section") && !$0.hasPrefix("| Year") }
                .compactMap { Int($0.split(separator: "|").last!.trimmingCharacters(in: .whitespaces)) }.reduce(0, +)
        }
        XCTAssertEqual(total("Records per section"), 300)
        XCTAssertEqual(total("Records per year"), 300)
        defer { _ = try? build() }
        // A bank with no state is in no section: the years counted it all the same (300 against 299).
        let records = site.appendingPathComponent("content/records/failed-banks.csv")
        let csv = try String(contentsOf: records, encoding: .utf8)
        try csv.replacingOccurrences(of: "\nCapitol Bank,Minneapolis,MN,", with: "\nCapitol Bank,Minneapolis,,")
            .write(to: records, atomically: true, encoding: .utf8)
        // A taxonomy's report had no years at all.
        let config = site.appendingPathComponent("sitegen.yml")
        let settings = try String(contentsOf: config, encoding: .utf8)
        try settings.replacingOccurrences(of: "    title: News by topic\n", with: "    title: News by topic\n    formats: [html, md]\n")
            .write(to: config, atomically: true, encoding: .utf8)
        _ = try build()
        let fewer = try page("states/index.md")
        XCTAssertTrue(fewer.contains("299 records in 18 sections."), fewer)
        func totals(_ report: String) -> (sections: Int, years: Int) {
            func sum(_ heading: String) -> Int {
                let part = report.components(separatedBy: "## " + heading)[1].components(separatedBy: "\n## ")[0]
                return part.split(separator: "\n").filter { $0.hasPrefix("| ") && !$0.hasPrefix("| Section") && !$0.hasPrefix("| Year") }
                    .compactMap { Int($0.split(separator: "|").last!.trimmingCharacters(in: .whitespaces)) }.reduce(0, +)
            }
            return (sum("Records per section"), sum("Records per year"))
        }
        XCTAssertEqual(totals(fewer).sections, 299)
        XCTAssertEqual(totals(fewer).years, 299)
        let topics = try page("news/topics/index.md")
        let tagged = try XCTUnwrap(Int(topics.components(separatedBy: "\n\n")[1].split(separator: " ")[0]), topics)
        XCTAssertGreaterThan(tagged, 0)
        XCTAssertEqual(totals(topics).years, tagged, "each tagged item once, however many topics it has: \(topics)")
        XCTAssertTrue(report.contains("| [CA](https://failedbanks.example.org/states/ca/index.md) | 11 |"))
        let california = try page("states/ca/index.md")
        XCTAssertTrue(california.contains("| Title | city | state | cert | acquirer | closing\\_date | fund |\n|---|---|---|---:|---|---|---:|\n"), california)
        XCTAssertEqual(california.components(separatedBy: "\n| [").count - 1, 11, "a row per California bank")
        XCTAssertTrue(california.contains("[Farmers \\& Merchants Bank of Long Beach](https://failedbanks.example.org/banks/17443/)"), california)
        XCTAssertTrue(MarkdownRenderer().html(california).contains(">Farmers &amp; Merchants Bank of Long Beach</a>"), "the escaped & reads as &")
        // The report reads as a table where GitHub renders it.
        XCTAssertTrue(MarkdownRenderer().html(california).contains("<td><a href=\"https://failedbanks.example.org/banks/17443/\">"))
        let index = try page("states/index.html")
        let svg = try XCTUnwrap(index.range(of: "<svg").flatMap { start in index.range(of: "</svg>").map { String(index[start.lowerBound..<$0.upperBound]) } })
        let chart = try XMLDocument(xmlString: svg)
        XCTAssertEqual(try chart.nodes(forXPath: "//*[local-name()='rect']").count, 18, "a bar per state")
        // The list below has the same links: the chart's are for a pointer, out of the keyboard's way.
        XCTAssertTrue(svg.contains(#"<a href="/states/ca/" tabindex="-1" aria-hidden="true">"#))
    }

    func testAMisspeltNameInATemplateFailsTheBuildAtItsLine() throws {
        let list = site.appendingPathComponent("Templates/list.mustache")
        let text = try String(contentsOf: list, encoding: .utf8)
        try text.replacingOccurrences(of: "{{acquirer}}", with: "{{acquierer}}").write(to: list, atomically: true, encoding: .utf8)
        let line = text.components(separatedBy: "\n").firstIndex { $0.contains("{{acquirer}}") }! + 1
        XCTAssertThrowsError(try build()) { error in
            let description = "\(error)"
            XCTAssertTrue(description.contains("Templates/list.mustache:\(line):"), description)
            XCTAssertTrue(description.contains("'acquierer' is not a field or a value this page has"), description)
        }
    }

    /// A template error at the detail pages, after the listings' pages were written, published the new
    /// data on the home page and in the feeds while the record's own page kept the old: every file now
    /// waits until the last page is made, and a build that stops leaves the output as the last one left it.
    func testABuildStoppedByATemplateErrorLeavesEveryFileAsTheLastBuildLeftIt() throws {
        _ = try build()
        func snapshot() throws -> [String: Data] {
            let enumerator = FileManager.default.enumerator(atPath: output.path)!
            var files: [String: Data] = [:]
            for case let path as String in enumerator {
                var isFolder: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: output.appendingPathComponent(path).path, isDirectory: &isFolder)
                files[path] = isFolder.boolValue ? Data() : try Data(contentsOf: output.appendingPathComponent(path))
            }
            return files
        }
        let before = try snapshot()
        let records = site.appendingPathComponent("content/records/failed-banks.csv")
        let csv = try String(contentsOf: records, encoding: .utf8)
        // A renamed bank, and a new one whose page would be in a new folder.
        try (csv.replacingOccurrences(of: "\nCapitol Bank,", with: "\nCapitol Bank RENAMED,")
            + "New Bank,Springfield,IL,99999,Nobody,2024-03-01,1,\n").write(to: records, atomically: true, encoding: .utf8)
        let detail = site.appendingPathComponent("Templates/detail.mustache")
        let template = try String(contentsOf: detail, encoding: .utf8)
        try template.replacingOccurrences(of: "{{acquirer}}", with: "{{acquirr}}").write(to: detail, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try build()) { error in
            XCTAssertTrue("\(error)".contains("'acquirr' is not a field"), "\(error)")
        }
        let after = try snapshot()
        XCTAssertEqual(after.keys.sorted(), before.keys.sorted(), "no file or folder made, none left half made")
        XCTAssertTrue(after == before, "every file as the last build left it: \(after.keys.filter { after[$0] != before[$0] }.sorted())")
        try template.write(to: detail, atomically: true, encoding: .utf8)
        XCTAssertTrue(try build().succeeded)
        XCTAssertTrue(try page("index.html").contains("Capitol Bank RENAMED"))
        XCTAssertTrue(try page("banks/99999/index.html").contains("New Bank"))
    }

    /// With `.sitegen/` gone (a CI cache of `output/` alone), a deleted record's page stayed with no word:
    /// builds delete only what they made, and the new store knows of nothing made.
    func testAFirstBuildIntoAFolderWithFilesItDidNotMakeSaysSo() throws {
        let first = try build()
        XCTAssertFalse(first.warnings.contains { $0.reason.contains("did not make") }, "\(first.warnings)")
        try FileManager.default.removeItem(at: site.appendingPathComponent(".sitegen"))
        let records = site.appendingPathComponent("content/records/failed-banks.csv")
        let lines = try String(contentsOf: records, encoding: .utf8).components(separatedBy: "\r\n")
        XCTAssertTrue(lines[1].hasPrefix("Farmers & Merchants Bank of Long Beach,"))
        try (lines[..<1] + lines[2...]).joined(separator: "\r\n").write(to: records, atomically: true, encoding: .utf8)
        let again = try build()
        XCTAssertEqual(again.warnings.filter { $0.reason.contains("did not make") }.map(\.description), [
            "output: 1 file here this build did not make (banks/17443/index.html), and its store is new: pages of records deleted "
                + "since the folder was built stay, as builds delete only pages they made; empty the folder for a clean build",
        ])
        XCTAssertFalse(try build().warnings.contains { $0.reason.contains("did not make") }, "said by a first build only")
        // A folder with only files of the user's own is no sign of an old build.
        try FileManager.default.removeItem(at: site.appendingPathComponent(".sitegen"))
        try FileManager.default.removeItem(at: output)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try "failedbanks.example.org\n".write(to: output.appendingPathComponent("CNAME"), atomically: true, encoding: .utf8)
        XCTAssertFalse(try build().warnings.contains { $0.reason.contains("did not make") })
    }

    func testARecordsFieldOutsideTheRecordOnADetailPageFailsTheBuildAtItsLine() throws {
        let detail = site.appendingPathComponent("Templates/detail.mustache")
        let text = try String(contentsOf: detail, encoding: .utf8)
        try text.replacingOccurrences(of: "<h1>{{title}}</h1>", with: "<h1>{{title}}</h1>\n<p>{{acquirer}}</p>")
            .write(to: detail, atomically: true, encoding: .utf8)
        let line = text.components(separatedBy: "\n").firstIndex { $0.contains("<h1>{{title}}</h1>") }! + 2
        XCTAssertThrowsError(try build()) { error in
            let description = "\(error)"
            XCTAssertTrue(description.contains("Templates/detail.mustache:\(line):4: 'acquirer' is a record's field, but no record is open here"),
                          description)
        }
        try text.replacingOccurrences(of: "<h1>{{title}}</h1>", with: "<h1>{{title}}</h1>\n<p>{{record.acquirer}}</p>")
            .write(to: detail, atomically: true, encoding: .utf8)
        _ = try build()
        XCTAssertTrue(try page("banks/17443/index.html").contains("<p>Regions Bank</p>"))
    }

    /// Values used on the wrong kind of page printed nothing and the build succeeded.
    func testAValueAListPageNeverHasInTheListTemplateFailsTheBuildAtItsLine() throws {
        let list = site.appendingPathComponent("Templates/list.mustache")
        let text = try String(contentsOf: list, encoding: .utf8)
        try text.replacingOccurrences(of: "{{pagination.pageCount}}</p>", with: "{{pageCount}}</p>").write(to: list, atomically: true, encoding: .utf8)
        let line = text.components(separatedBy: "\n").firstIndex { $0.contains("{{pagination.pageCount}}") }! + 1
        XCTAssertThrowsError(try build()) { error in
            XCTAssertTrue("\(error)".contains("Templates/list.mustache:\(line):"), "\(error)")
            XCTAssertTrue("\(error)".contains("'pageCount' is not a value of list pages, so it would print nothing there; they have empty, feeds, "
                + "items, listing, nav, pageTitle, pageURL, pagination, section, site; 'pageCount' is inside 'pagination': {{pagination.pageCount}}"), "\(error)")
        }
        let detail = site.appendingPathComponent("Templates/detail.mustache")
        try text.write(to: list, atomically: true, encoding: .utf8)
        try String(contentsOf: detail, encoding: .utf8).replacingOccurrences(of: "<h1>{{title}}</h1>", with: "<h1>{{title}}</h1>{{prev.url}}")
            .write(to: detail, atomically: true, encoding: .utf8)
        XCTAssertTrue(try build().succeeded, "a detail page has prev")
    }

    func testEveryInternalLinkResolvesToAWrittenPage() throws {
        _ = try build()
        var checked = 0
        let links = try NSRegularExpression(pattern: ##"href="([^"#]*)""##)
        for file in writtenFiles() {
            let html = try page(file)
            for match in links.matches(in: html, range: NSRange(html.startIndex..., in: html)) {
                let href = String(html[Range(match.range(at: 1), in: html)!])
                guard !href.hasPrefix("http"), !href.hasPrefix("mailto:") else { continue }
                let folder = URL(fileURLWithPath: "/" + file).deletingLastPathComponent()
                let target = href.hasPrefix("/") ? URL(fileURLWithPath: href) : folder.appendingPathComponent(href)
                let path = target.standardized.path.dropFirst() + (href.hasSuffix("/") || href.isEmpty ? "/index.html" : "")
                XCTAssertTrue(FileManager.default.fileExists(atPath: output.appendingPathComponent(String(path)).path),
                              "\(file) links to \(href), which was not written")
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 2_000)
    }

    func testListingPagesAreInDateOrderAndLinkToTheirNeighbours() throws {
        _ = try build()
        let first = try page("index.html")
        XCTAssertTrue(first.contains("<p>300 banks · page 1 of 15</p>"))
        XCTAssertTrue(first.contains(#"<a rel="next" href="/page/2/">"#))
        XCTAssertFalse(first.contains(#"rel="prev""#))
        XCTAssertTrue(first.contains(#"<a href="/page/3/" aria-label="Page 3">3</a>"#) && first.contains(#"<span class="gap">…</span>"#)
                      && first.contains(#"<a href="/page/15/" aria-label="Page 15">15</a>"#) && !first.contains(#"href="/page/9/""#),
                      "page 1 links pages 2, 3 and the last, not every page")
        let second = try page("page/2/index.html")
        XCTAssertTrue(second.contains(#"<a rel="prev" href="/">"#))
        XCTAssertTrue(second.contains(#"<a rel="next" href="/page/3/">"#))
        let last = try page("page/15/index.html")
        XCTAssertFalse(last.contains(#"rel="next""#))

        let dates = try NSRegularExpression(pattern: #"<td class="date">(\d{4}-\d{2}-\d{2})</td></tr>"#)
        var all: [String] = []
        for number in 1...15 {
            let html = try page(number == 1 ? "index.html" : "page/\(number)/index.html")
            all += dates.matches(in: html, range: NSRange(html.startIndex..., in: html)).map { String(html[Range($0.range(at: 1), in: html)!]) }
        }
        XCTAssertEqual(all.count, 300)
        XCTAssertEqual(all, all.sorted(by: >), "newest first across every page")
    }

    func testTitlesAreEscapedAndMarkdownIsRenderedWithGFM() throws {
        _ = try build()
        let home = try page("index.html")
        XCTAssertTrue(home.contains("Farmers &amp; Merchants Bank of Long Beach"))
        XCTAssertTrue(home.contains("Heritage Bank &lt;Tallahassee&gt; &amp; Trust"))
        XCTAssertFalse(home.contains("<Tallahassee>"))
        let about = try page("about/index.html")
        XCTAssertTrue(about.contains("<table>") && about.contains("<th>Field</th>"), "the GFM table in about.md")
        let methodology = try page("methodology/index.html")
        XCTAssertTrue(methodology.contains("<del>the old one</del>"))
        XCTAssertTrue(methodology.contains(#"<input type="checkbox" checked="" disabled="" />"#))
        let news = try page("news/deposit-insurance-explainer/index.html")
        XCTAssertTrue(news.contains("<h1>Deposits &lt; $250,000 stay fully insured &amp; available, regulator says</h1>"))
    }

    /// An HTML and accessibility review of the default theme: pages a validator and a screen reader accept.
    func testTheDefaultThemeNamesEachPageAndItsLandmarks() throws {
        _ = try build()
        let second = try page("page/2/index.html")
        XCTAssertTrue(second.contains(#"<link rel="canonical" href="https://failedbanks.example.org/page/2/">"#))
        XCTAssertTrue(second.contains(#"<nav aria-label="Site"><a href="/" aria-current="page">Failed banks, newest first</a><a href="/states/">"#),
                      "the menu marks the listing a page is one of")
        XCTAssertTrue(second.contains("<div class=\"scroll\">\n<table>"), "a wide table scrolls on its own, not the page")
        // Three banks named Metro Bank: each page's title says which.
        let metro = try page("banks/10170/index.html")
        XCTAssertTrue(metro.contains("<title>Metro Bank, Reno, NV · Failed Bank Watch</title>"), metro)
        XCTAssertTrue(metro.contains(#"<nav class="neighbours" aria-label="Neighbouring records">"#))
        XCTAssertTrue(metro.contains(#"<time datetime="2018-08-22">22 August 2018</time>"#))
        // A Markdown page: one h1 (its title), its description for search snippets.
        let about = try page("about/index.html")
        XCTAssertEqual(about.components(separatedBy: "<h1").count - 1, 1, about)
        XCTAssertTrue(about.contains("<h1>About Failed Bank Watch</h1>"))
        XCTAssertTrue(about.contains(#"<a href="/about/" aria-current="page">"#) && about.components(separatedBy: "aria-current").count == 2)
        XCTAssertFalse(metro.contains(#"aria-current"#), "a record's page is none of the menu's")
        XCTAssertTrue(try page("states/ca/index.html").contains(#"<a href="/states/" aria-current="page">"#), "a section's pages are its listing's")
        XCTAssertTrue(about.contains(#"<meta name="description" content="What this site lists, where the figures come from, and how often it changes.">"#))
        let news = try page("news/index.html")
        XCTAssertTrue(news.contains(#"<time datetime="2024-02-20T22:30:00Z">20 February 2024</time>"#), news)
        // The 404 page answers at any address: it names none.
        XCTAssertFalse(try page("404.html").contains("canonical"))
    }

    func testDetailPagesLinkToTheirNeighboursInTheListingOrder() throws {
        _ = try build()
        let newest = try page("banks/17443/index.html")
        XCTAssertFalse(newest.contains(#"rel="prev""#))
        XCTAssertTrue(newest.contains(#"<a rel="next" href="/banks/23917/">Capitol Bank <span aria-hidden="true">→</span></a>"#))
        let second = try page("banks/23917/index.html")
        XCTAssertTrue(second.contains(#"<a rel="prev" href="/banks/17443/"><span aria-hidden="true">←</span> Farmers &amp; Merchants Bank of Long Beach</a>"#))
        XCTAssertTrue(second.contains("<dt>Certificate</dt><dd>23917</dd>"))
    }

    func testARebuildWithNoChangeRendersNothingWritesNothingAndTwoBuildsAreIdentical() throws {
        _ = try build()
        let before = try writtenFiles().map { try page($0) }
        let again = try build()
        XCTAssertEqual(again.pagesWritten, 0)
        XCTAssertEqual(again.rendered.map(\.path), [])
        XCTAssertEqual(again.pagesKept, 392, "the pages of a first build, their 423 files")
        XCTAssertEqual(again.pagesUnchanged, 0)
        let full = try SiteBuilder(root: site).build(options: SiteBuilder.Options(full: true))
        XCTAssertEqual(full.pagesWritten, 0)
        XCTAssertEqual(full.pagesUnchanged, 423)
        XCTAssertEqual(again.rowsInserted + again.rowsUpdated + again.rowsDeleted, 0)
        XCTAssertEqual(try writtenFiles().map { try page($0) }, before)
    }

    func testAFirstBuildKeepsTheIdenticalFilesItFindsAndWritesThePagesOfTheFoldersItMakes() throws {
        _ = try build()
        let before = try writtenFiles().map { try page($0) }
        let detailPages = writtenFiles().filter { $0.hasPrefix("banks/") && $0.split(separator: "/").count == 3 }
        XCTAssertGreaterThan(detailPages.count, 10)
        // The store gone, every page is rendered; the detail pages' folder is gone too, so this build makes it.
        try FileManager.default.removeItem(at: site.appendingPathComponent(".sitegen"))
        for path in detailPages { try FileManager.default.removeItem(at: output.appendingPathComponent(path).deletingLastPathComponent()) }
        let first = try build()
        XCTAssertEqual(first.pagesWritten, detailPages.count)
        XCTAssertEqual(first.pagesUnchanged, 423 - detailPages.count, "a file already there with the page's bytes is left alone")
        XCTAssertEqual(try writtenFiles().map { try page($0) }, before)
    }

    func testABadRowFailsItsSourceKeepsTheLastGoodRowsAndTheRestStillBuilds() throws {
        _ = try build()
        let csv = site.appendingPathComponent("content/records/failed-banks.csv")
        var text = try String(contentsOf: csv, encoding: .utf8)
        text = text.replacingOccurrences(of: "Capitol Bank,Minneapolis,MN,23917,\"U.S. Bank, N.A.\",2024-02-02",
                                         with: "Capitol Bank,Minneapolis,MN,23917,\"U.S. Bank, N.A.\",2024-02-31")
        try text.write(to: csv, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(at: site.appendingPathComponent("content/pages/methodology.md"))

        let summary = try build()
        XCTAssertFalse(summary.succeeded)
        XCTAssertEqual(summary.problems.map(\.description), [
            "content/records/failed-banks.csv:3: column 'closing_date': expected a date (YYYY-MM-DD, MM/DD/YYYY or DD-Mon-YY), found '2024-02-31'",
        ])
        XCTAssertTrue(try page("banks/23917/index.html").contains("2024-02-02"), "the bank keeps its last good row")
        XCTAssertEqual(summary.pagesDeleted, 1, "the removed Markdown page is deleted from output/")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.appendingPathComponent("methodology").path))
    }

    func testEditingOneRowReportsOneUpdate() throws {
        _ = try build()
        let csv = site.appendingPathComponent("content/records/failed-banks.csv")
        let text = try String(contentsOf: csv, encoding: .utf8)
        try text.replacingOccurrences(of: "Capitol Bank,Minneapolis", with: "Capitol Bank & Trust,Minneapolis")
            .write(to: csv, atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertEqual([summary.rowsInserted, summary.rowsUpdated, summary.rowsDeleted], [0, 1, 0])
        XCTAssertTrue(try page("banks/23917/index.html").contains("<h1>Capitol Bank &amp; Trust</h1>"))
    }
}
