import Foundation
@testable import SiteBuild
import XCTest

/// `sitegen new`'s site: it builds as it is into the pages a blog has, and never writes over a site's files.
final class StarterSiteTests: XCTestCase {
    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-new-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return folder
    }

    private func text(_ path: String, in folder: URL) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)
    }

    func testANewSiteBuildsIntoABlogWithoutAWarning() throws {
        let site = try temporaryFolder().appendingPathComponent("my site/blog")
        let written = try StarterSite.write(into: site)
        XCTAssertEqual(written, StarterSite.files.map(\.path))
        XCTAssertEqual(try text(".gitignore", in: site), "output/\n.sitegen/\n")

        let summary = try SiteBuilder(root: site).build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems) \(summary.stoppedBy ?? "")")
        XCTAssertEqual(summary.warnings.map(\.description), [])
        let output = site.appendingPathComponent("output")
        // Newest post first, each linking its page, with its date as a reader reads it.
        let home = try text("index.html", in: output)
        let newer = try XCTUnwrap(home.range(of: #"<a href="/posts/tables-and-code/">Tables, code and footnotes</a>"#))
        let older = try XCTUnwrap(home.range(of: #"<a href="/posts/welcome/">Welcome</a>"#))
        XCTAssertLessThan(newer.lowerBound, older.lowerBound)
        XCTAssertTrue(home.contains(#"<span class="label">Date</span> <time datetime="2026-01-02T09:00:00Z">2 January 2026</time>"#))
        // The menu has the listings and the About page; the post links its tags' pages, which list it.
        XCTAssertTrue(home.contains(#"<a href="/" aria-current="page">Posts</a><a href="/tags/">Tags</a><a href="/about/">About</a>"#))
        let post = try text("posts/welcome/index.html", in: output)
        XCTAssertTrue(post.contains(#"<dt>Tags</dt><dd><a href="/tags/news/">news</a> <a href="/tags/sitegen/">sitegen</a> </dd>"#), post)
        XCTAssertTrue(post.contains(#"<link rel="icon" href="/favicon.svg" type="image/svg+xml">"#))
        XCTAssertTrue(FileManager.default.fileExists(atPath: output.appendingPathComponent("favicon.svg").path))
        XCTAssertTrue(post.contains(#"<meta name="description" content="The first post of a new sitegen site.">"#))
        XCTAssertTrue(try text("tags/news/index.html", in: output).contains(#"<a href="/posts/welcome/">Welcome</a>"#))
        XCTAssertTrue(try text("tags/index.html", in: output).contains(#"<a href="/tags/sitegen/">sitegen</a> <span class="count">2</span>"#))
        // GFM: the table and the footnote render; the feeds carry both posts.
        let tables = try text("posts/tables-and-code/index.html", in: output)
        XCTAssertTrue(tables.contains("<th>Format</th>") && tables.contains(#"<section class="footnotes""#))
        XCTAssertEqual(try text("atom.xml", in: output).components(separatedBy: "<entry>").count - 1, 2)
        XCTAssertEqual(try text("rss.xml", in: output).components(separatedBy: "<item>").count - 1, 2)
        XCTAssertTrue(try text("about/index.html", in: output).contains("<h1>About</h1>"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: output.appendingPathComponent("404.html").path))
    }

    /// The starter site with a CSV collection with tags and no detail pages (in the menu, and then left out
    /// of it), and a feed collection, each listed through the starter's `list` template.
    private func bentSite() throws -> URL {
        let site = try temporaryFolder().appendingPathComponent("site")
        try StarterSite.write(into: site)
        let config = site.appendingPathComponent("sitegen.yml")
        var yaml = try String(contentsOf: config, encoding: .utf8)
        yaml = yaml.replacingOccurrences(of: "\nlistings:\n", with: """

          parks:
            kind: csv
            sources: content/parks/*.csv
            key: id
            fields: {id: text, title: text, area: real, visitors: integer, established: date, open: bool, tags: list}
          releases:
            kind: feed
            sources: content/feeds/*.xml
            detail:
              path: /releases/{slug}/
              body: summary
              format: text

        listings:
          parks:
            from: parks
            sort: title
            path: /parks/
            title: Parks
          releases:
            from: releases
            sort: -published
            path: /releases/
            title: Releases

        """)
        try yaml.write(to: config, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: site.appendingPathComponent("content/parks"), withIntermediateDirectories: true)
        try """
        id,title,area,visitors,established,open,tags
        yell,Yellowstone,8983.2,4501382,1872-03-01,true,geysers; news
        grca,Grand Canyon,4862.9,4733705,1919-02-26,false,
        """.write(to: site.appendingPathComponent("content/parks/parks.csv"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: site.appendingPathComponent("content/feeds"), withIntermediateDirectories: true)
        try """
        <?xml version="1.0"?><rss version="2.0"><channel><title>R</title><link>https://example.org/</link><description>d</description>
        <item><title>Version 2</title><link>https://example.org/releases/2</link><pubDate>Tue, 03 Feb 2026 09:00:00 GMT</pubDate>
        <category>news</category><description>Faster.</description></item></channel></rss>
        """.write(to: site.appendingPathComponent("content/feeds/releases.xml"), atomically: true, encoding: .utf8)
        return site
    }

    func testTheThemeLinksOnlyPagesThatExistAndShowsEachCollectionsFieldsByType() throws {
        let site = try bentSite()
        let summary = try SiteBuilder(root: site).build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems) \(summary.stoppedBy ?? "")")
        // The parks have no pages: the build says so once, at the listing's `from`, and nothing else.
        XCTAssertEqual(summary.warnings.map(\.description), [
            "sitegen.yml:43:11: listing 'parks': collection 'parks' has no detail pages, so its items link nowhere "
                + "(their url is empty); give 'parks' a detail: with a path, such as /parks/{key}/, for a page per record",
        ])
        let output = site.appendingPathComponent("output")
        let (broken, checked) = try LinkChecker(output: output).brokenLinks()
        XCTAssertEqual(broken.map(\.description), [], "no link leads to a missing page, and none is empty")
        XCTAssertGreaterThan(checked, 40)
        // A park is a title without a link; its fields are formatted by type; its tags are text, not links to
        // the posts' tag pages (the taxonomy there lists posts, not parks).
        let parks = try text("parks/index.html", in: output)
        XCTAssertTrue(parks.contains("<h2>Yellowstone</h2>"), parks)
        XCTAssertTrue(parks.contains(#"<span class="label">Area</span> 8,983.2</span>"#), parks)
        XCTAssertTrue(parks.contains(#"<span class="label">Visitors</span> 4,501,382</span>"#))
        XCTAssertTrue(parks.contains(#"<span class="label">Established</span> <time datetime="1872-03-01">1 March 1872</time></span>"#))
        XCTAssertTrue(parks.contains(#"<span class="label">Open</span> yes</span>"#) && parks.contains(#"<span class="label">Open</span> no</span>"#))
        XCTAssertTrue(parks.contains(#"<span class="label">Tags</span> geysers news </span>"#), "tags without a taxonomy are text")
        XCTAssertFalse(parks.contains("/tags/geysers/") || parks.contains("/tags/news/"))
        // A feed item: its page is linked, its link is a link, its date a date; its HTML fields are not listed.
        let releases = try text("releases/index.html", in: output)
        XCTAssertTrue(releases.contains(#"<h2><a href="/releases/2/">Version 2</a></h2>"#), releases)
        XCTAssertTrue(releases.contains(#"<span class="label">Link</span> <a href="https://example.org/releases/2">https://example.org/releases/2</a>"#))
        XCTAssertTrue(releases.contains(#"<span class="label">Categories</span> news </span>"#))
        XCTAssertFalse(releases.contains(#"<span class="label">Summary</span>"#))
        // A post's tags link to the posts' taxonomy, as the configuration declares it.
        XCTAssertTrue(try text("posts/welcome/index.html", in: output).contains(#"<a href="/tags/news/">news</a>"#))
    }

    func testNavFalseLeavesAListingOutOfTheMenuAndPutsItBackWhenDropped() throws {
        let site = try bentSite()
        let config = site.appendingPathComponent("sitegen.yml")
        let yaml = try String(contentsOf: config, encoding: .utf8)
        try yaml.replacingOccurrences(of: "    title: Parks\n", with: "    title: Parks\n    nav: false\n")
            .write(to: config, atomically: true, encoding: .utf8)
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        let output = site.appendingPathComponent("output")
        XCTAssertTrue(try text("index.html", in: output).contains(#"<nav aria-label="Site"><a href="/releases/">Releases</a>"#
            + #"<a href="/" aria-current="page">Posts</a><a href="/tags/">Tags</a><a href="/about/">About</a></nav>"#))
        XCTAssertTrue(FileManager.default.fileExists(atPath: output.appendingPathComponent("parks/index.html").path), "the listing is still built")
        // Back in the menu: every page shows it again, as a clean build would.
        try yaml.write(to: config, atomically: true, encoding: .utf8)
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        XCTAssertTrue(try text("about/index.html", in: output).contains(#"<nav aria-label="Site"><a href="/parks/">Parks</a><a href="/releases/">Releases</a>"#))
    }

    func testDatePartsInAPathPatternPutPostsUnderTheirYearAndMonth() throws {
        let site = try temporaryFolder().appendingPathComponent("site")
        try StarterSite.write(into: site)
        let config = site.appendingPathComponent("sitegen.yml")
        let yaml = try String(contentsOf: config, encoding: .utf8)
        try yaml.replacingOccurrences(of: "path: /posts/{key}/", with: "path: /{date:yyyy}/{date:MM}/{key}/")
            .write(to: config, atomically: true, encoding: .utf8)
        let summary = try SiteBuilder(root: site).build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems) \(summary.stoppedBy ?? "")")
        let output = site.appendingPathComponent("output")
        XCTAssertTrue(try text("index.html", in: output).contains(#"<a href="/2026/01/welcome/">Welcome</a>"#))
        XCTAssertTrue(try text("2026/01/tables-and-code/index.html", in: output).contains("<h1>Tables, code and footnotes</h1>"))
        XCTAssertEqual(try LinkChecker(output: output).brokenLinks().broken.map(\.description), [])
        // A part no date has, or a part of a field that is no date, is an error at the detail's line.
        for (path, message) in [("/{date:yy}/{key}/", "uses {date:yy}, which is not a field of 'posts'; a date part is yyyy, MM or dd, as in {date:yyyy}"),
                                ("/{description:yyyy}/{key}/", "takes a date part of 'description', which is not a date or datetime field of 'posts'")] {
            try yaml.replacingOccurrences(of: "path: /posts/{key}/", with: "path: \(path)").write(to: config, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try SiteBuilder(root: site).build()) { error in
                XCTAssertTrue("\(error)".hasPrefix("sitegen.yml:16:7: the path '\(path)' ") && "\(error)".hasSuffix(message), "\(error)")
            }
        }
    }

    func testAFolderWithASitesFilesIsLeftAsItIs() throws {
        let site = try temporaryFolder()
        try "title: Mine\n".write(to: site.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: site.appendingPathComponent("content"), withIntermediateDirectories: false)
        XCTAssertThrowsError(try StarterSite.write(into: site)) { error in
            XCTAssertEqual(error as? StarterSite.Failure, .occupied(folder: site.path, names: ["sitegen.yml", "content"]))
            XCTAssertTrue("\(error)".hasSuffix("already has sitegen.yml, content/; `sitegen new` makes a site only in a new folder or one without these"))
        }
        XCTAssertEqual(try text("sitegen.yml", in: site), "title: Mine\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: site.path).sorted(), ["content", "sitegen.yml"])
    }

    func testAGitignoreThereIsKept() throws {
        let site = try temporaryFolder()
        try "*.log\n".write(to: site.appendingPathComponent(".gitignore"), atomically: true, encoding: .utf8)
        let written = try StarterSite.write(into: site)
        XCTAssertFalse(written.contains(".gitignore"))
        XCTAssertEqual(try text(".gitignore", in: site), "*.log\n")
        XCTAssertTrue(written.contains("sitegen.yml"))
    }

    func testAFileWhereTheFolderShouldBeIsAnError() throws {
        let file = try temporaryFolder().appendingPathComponent("site")
        try "x".write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try StarterSite.write(into: file)) { error in
            XCTAssertEqual(error as? StarterSite.Failure, .notAFolder(file.path))
        }
    }

    func testAWriteThatFailsTakesBackWhatItMade() throws {
        let parent = try temporaryFolder(), site = parent.appendingPathComponent("site")
        // A name longer than a file system takes fails after the files and folders before it were made.
        let files = [StarterFile(path: "sitegen.yml", text: "title: T\n"), StarterFile(path: "content/posts/a.md", text: "a\n"),
                     StarterFile(path: "Templates/" + String(repeating: "x", count: 300), text: "")]
        XCTAssertThrowsError(try StarterSite.write(files, into: site))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: parent.path), [])
    }
}
