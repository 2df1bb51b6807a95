import Foundation
@testable import SiteBuild
import SiteFetch
import SiteStore
import TestSupport
import XCTest

/// URL sources against a real HTTP server on 127.0.0.1 (`FeedTestServer`): conditional GETs, the store
/// as the cache when a server fails, redirects, caps, gzip, `keep:`, and OPML lists under a per-host limit.
final class RemoteSourcesTests: XCTestCase {
    private var site: URL!
    private var server: FeedTestServer!

    override func setUpWithError() throws {
        site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-remote-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: site.appendingPathComponent("Templates"), withIntermediateDirectories: true)
        try write("Templates/list.mustache", "{{#items}}{{title}}{{#leftFeed}} (left the feed){{/leftFeed}};{{/items}}")
        server = try FeedTestServer()
    }

    override func tearDownWithError() throws {
        server.stop()
        try? FileManager.default.removeItem(at: site)
    }

    private func write(_ path: String, _ text: String) throws {
        try text.write(to: site.appendingPathComponent(path), atomically: true, encoding: .utf8)
    }

    /// A site of one feed collection reading `sources`, listed by title on the home page.
    private func configure(sources: [String], keep: String? = nil, collections: String = "", listings: String = "") throws {
        try write("sitegen.yml", """
            title: Planet
            baseURL: https://planet.example.org/
            collections:
              posts:
                kind: feed
                sources: [\(sources.map { "\"\($0)\"" }.joined(separator: ", "))]
            \(keep.map { "    keep: \($0)" } ?? "")
            \(collections)
            listings:
              home: {from: posts, sort: [title], path: /}
            \(listings)
            """)
    }

    /// An RSS document of `items` (guid, title).
    private static func rss(_ items: [(String, String)]) -> [UInt8] {
        Array(("<rss version=\"2.0\"><channel><title>Feed</title>"
            + items.map { "<item><guid>\($0.0)</guid><title>\($0.1)</title><link>https://example.org/\($0.0)</link></item>" }.joined()
            + "</channel></rss>").utf8)
    }

    /// Builds the site (into `folder`'s output and store, when given), with short time limits and `adjust`'s settings.
    private func build(_ adjust: (inout SiteBuilder) -> Void = { _ in }, network: SiteBuilder.NetworkUse = .fetch,
                       storeIn folder: URL? = nil) throws -> BuildSummary {
        var builder = SiteBuilder(root: site, outputDirectory: folder?.appendingPathComponent("output"),
                                  storePath: folder?.appendingPathComponent("store/store.sqlite"))
        // A refused connection is tried again until the connect limit (the client's backoff), which the
        // whole limit must outlast for the refusal to be what is reported.
        builder.fetchSettings.wholeTimeout = .seconds(3)
        builder.fetchSettings.connectTimeout = .seconds(1)
        adjust(&builder)
        var options = SiteBuilder.Options()
        options.network = network
        return try builder.build(options: options)
    }

    /// The home page a build wrote (into `folder`'s output, when given).
    private func home(in folder: URL? = nil) throws -> String {
        try String(contentsOf: (folder ?? site).appendingPathComponent("output/index.html"), encoding: .utf8)
    }

    private func changes(_ summary: BuildSummary) -> [Int] { [summary.rowsInserted, summary.rowsUpdated, summary.rowsDeleted] }

    /// The store's rows of `posts`: key, title and whether it left the feed, by key.
    private func rows() throws -> [String] {
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        let flag = try store.database.fetchAll("PRAGMA table_info(posts)").contains { $0["name"]?.stringValue == "leftFeed" }
        return try store.database.fetchAll("SELECT _key, title\(flag ? ", leftFeed" : "") FROM posts ORDER BY _key").map {
            "\($0["_key"]?.stringValue ?? "")=\($0["title"]?.stringValue ?? "")" + ($0["leftFeed"]?.int64Value == 1 ? " (left)" : "")
        }
    }

    /// The body the store keeps for `url`.
    private func keptBody(_ url: String) throws -> [UInt8]? {
        try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path).storedResponses(for: [url])[url]?.body
    }

    /// A clean build (a new store, a new output folder) against the same server: the oracle for a
    /// conditional or incremental one.
    private func cleanBuildHome() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-remote-clean-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let summary = try build(storeIn: folder)
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        return try home(in: folder)
    }

    func testA200Then304IsNotParsedAndChangesNothingAndEqualsAFullFetch() throws {
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha"), ("b", "Beta")]), etag: "\"v1\""))
        try configure(sources: [server.url("/feed.xml")])
        let first = try build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        XCTAssertEqual(changes(first), [2, 0, 0])
        XCTAssertEqual([first.urlsFetched, first.urlsNotModified, first.urlsFailed], [1, 0, 0])

        let second = try build()
        XCTAssertEqual(server.requests.last?.header("If-None-Match"), "\"v1\"", "the kept ETag is sent back")
        XCTAssertEqual([second.urlsFetched, second.urlsNotModified], [0, 1])
        XCTAssertEqual(second.sourcesRead, 0, "a 304 costs no parse")
        XCTAssertEqual(changes(second), [0, 0, 0])
        XCTAssertEqual(try rows(), ["a=Alpha", "b=Beta"])
        XCTAssertEqual(try home(), "Alpha;Beta;")
        XCTAssertEqual(try home(), try cleanBuildHome(), "the conditional fetch ends where a full one does")
        XCTAssertTrue(server.requests.allSatisfy { $0.header("User-Agent")?.hasPrefix("sitegen/") == true })
    }

    func testAChangedBodyIsOneUpdateAndOneInsertAndEqualsAFullFetch() throws {
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha"), ("b", "Beta")]), etag: "\"v1\""))
        try configure(sources: [server.url("/feed.xml")])
        _ = try build()
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha, edited"), ("b", "Beta"), ("c", "Gamma")]), etag: "\"v2\""))
        let changed = try build()
        XCTAssertEqual(changes(changed), [1, 1, 0], "a is updated, never a new item; c is new")
        XCTAssertEqual(try rows(), ["a=Alpha, edited", "b=Beta", "c=Gamma"])
        XCTAssertEqual(try home(), try cleanBuildHome())
    }

    /// Every way a server can fail: the build warns with the URL and the reason, succeeds (exit 0), and
    /// the store and the pages keep the last good copy's items.
    func testAFailingServerKeepsTheLastGoodCopyWithAWarningAndTheBuildSucceeds() throws {
        let good = Self.rss([("a", "Alpha"), ("b", "Beta")])
        let url = server.url("/feed.xml")
        try configure(sources: [url])
        server.route("/feed.xml", .document(body: good, etag: nil))
        XCTAssertEqual(changes(try build()), [2, 0, 0])
        let failures: [(FeedTestServer.Route, String)] = [
            (.status(404), "HTTP 404 Not Found"),
            (.status(500), "HTTP 500 Internal Server Error"),
            (.hang, "timeout"),
            (.document(body: Array("<rss version=\"2.0\"><channel><item><title>Half".utf8), etag: nil), "not well-formed"),
            (.truncated(declared: good.count, sent: Array(good.prefix(40))), "truncated"),
        ]
        for (route, reason) in failures {
            server.route("/feed.xml", route)
            let summary = try build()
            XCTAssertTrue(summary.succeeded, "\(reason): \(summary.problems)")
            XCTAssertTrue(summary.warnings.contains { $0.file == url && $0.description.contains(reason) },
                          "\(reason): \(summary.warnings.map(\.description))")
            XCTAssertEqual(try rows(), ["a=Alpha", "b=Beta"], reason)
            XCTAssertEqual(try home(), "Alpha;Beta;", reason)
            XCTAssertEqual(try keptBody(url), good, "\(reason): the store keeps the last good body, not the broken one")
        }
        // Refused: nothing listens on the port any more.
        server.stop()
        let refused = try build()
        XCTAssertTrue(refused.succeeded, "\(refused.problems)")
        XCTAssertTrue(refused.warnings.contains { $0.file == url && $0.description.contains("connection refused")
            && $0.description.contains("building from the copy kept from") }, "\(refused.warnings.map(\.description))")
        XCTAssertEqual(try rows(), ["a=Alpha", "b=Beta"])
    }

    /// A host that does not resolve (`.invalid` never does, RFC 2606) is a warning naming its URL: the
    /// other sources build, and so does the site.
    func testAHostThatDoesNotResolveIsAWarningAndTheOtherSourcesBuild() throws {
        let missing = "http://feeds.sitegen-test.invalid/feed.xml"
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha")]), etag: nil))
        try configure(sources: [server.url("/feed.xml"), missing])
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertTrue(summary.warnings.contains { $0.file == missing }, "\(summary.warnings.map(\.description))")
        XCTAssertEqual(try home(), "Alpha;")
    }

    /// A remote feed that names no site of its own resolves its items' relative links against its own
    /// address, as a browser (and feedparser) would: not against the site that republishes it.
    func testARemoteFeedsRelativeLinksResolveAgainstItsAddress() throws {
        let url = server.url("/blog/feed.xml")
        server.route("/blog/feed.xml", .document(body: Array("""
            <rss version="2.0"><channel><title>Blog</title>
            <item><guid>a</guid><title>Alpha</title><link>posts/a.html</link>
            <description>&lt;a href="more.html"&gt;more&lt;/a&gt;</description></item>
            </channel></rss>
            """.utf8), etag: nil))
        try configure(sources: [url])
        XCTAssertTrue(try build().succeeded)
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        let row = try XCTUnwrap(try store.database.fetchAll("SELECT link, summary FROM posts").first)
        XCTAssertEqual(row["link"]?.stringValue, server.url("/blog/posts/a.html"))
        XCTAssertEqual(row["summary"]?.stringValue, "<a href=\"\(server.url("/blog/posts/more.html"))\">more</a>", "as on the item's page")
    }

    func testAURLNoLongerNamedTakesItsItemsAndItsKeptAnswerAlong() throws {
        server.route("/a.xml", .document(body: Self.rss([("a", "Alpha")]), etag: nil))
        server.route("/b.xml", .document(body: Self.rss([("b", "Beta")]), etag: nil))
        try configure(sources: [server.url("/a.xml"), server.url("/b.xml")])
        _ = try build()
        XCTAssertNotNil(try keptBody(server.url("/b.xml")))
        try configure(sources: [server.url("/a.xml")])
        XCTAssertEqual(changes(try build()), [0, 0, 1], "b's item goes with its source, archive or not")
        XCTAssertNil(try keptBody(server.url("/b.xml")))
        XCTAssertNotNil(try keptBody(server.url("/a.xml")))
    }

    func testAnOfflineBuildNeverTouchesTheNetworkAndLoadsTheKeptCopy() throws {
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha")]), etag: "\"v1\""))
        try configure(sources: [server.url("/feed.xml")])
        _ = try build()
        try FileManager.default.removeItem(at: site.appendingPathComponent("output"))
        let requests = server.requests.count
        let offline = try build(network: .offline)
        XCTAssertEqual(server.requests.count, requests, "no request at all")
        XCTAssertTrue(offline.succeeded)
        XCTAssertEqual(try home(), "Alpha;")
    }

    func testARedirectLoopFailsAndAPermanentRedirectIsFollowedAndReported() throws {
        server.route("/loop-a", .redirect(to: "/loop-b", status: 302))
        server.route("/loop-b", .redirect(to: "/loop-a", status: 302))
        server.route("/old.xml", .redirect(to: "/feed.xml", status: 301))
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha")]), etag: nil))
        try configure(sources: [server.url("/loop-a"), server.url("/old.xml")])
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        let said = summary.warnings.map(\.description)
        XCTAssertTrue(said.contains { $0.hasPrefix(server.url("/loop-a")) && $0.contains("redirect loop") }, "\(said)")
        XCTAssertTrue(said.contains { $0.hasPrefix(server.url("/old.xml")) && $0.contains("moved permanently to \(server.url("/feed.xml"))") }, "\(said)")
        XCTAssertEqual(try rows(), ["a=Alpha"])
        XCTAssertLessThan(server.requests.filter { $0.path.hasPrefix("/loop") }.count, 10, "the loop is stopped, not followed to the limit twice over")
    }

    func testABodyPastTheSizeCapFailsAndKeepsTheLastGoodCopy() throws {
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha")]), etag: nil))
        try configure(sources: [server.url("/feed.xml")])
        let cap: (inout SiteBuilder) -> Void = { $0.fetchSettings.maximumBytes = 4_000 }
        _ = try build(cap)
        server.route("/feed.xml", .document(body: Self.rss((0..<200).map { ("i\($0)", "Item \($0)") }), etag: nil))
        let summary = try build(cap)
        XCTAssertTrue(summary.succeeded)
        XCTAssertTrue(summary.warnings.contains { $0.description.contains("cap of 4000") }, "\(summary.warnings.map(\.description))")
        XCTAssertEqual(try rows(), ["a=Alpha"])
    }

    func testAGzippedBodyIsAskedForAndDecompressed() throws {
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha"), ("b", "Beta")]), etag: nil, gzip: true))
        try configure(sources: [server.url("/feed.xml")])
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems) \(summary.warnings)")
        XCTAssertEqual(server.requests.first?.header("Accept-Encoding")?.contains("gzip"), true)
        XCTAssertEqual(try rows(), ["a=Alpha", "b=Beta"])
    }

    func testAnItemThatLeavesTheFeedStaysFlaggedUnderKeepAllAndComesBackAsAnUpdate() throws {
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha"), ("b", "Beta")]), etag: nil))
        try configure(sources: [server.url("/feed.xml")])
        _ = try build()
        server.route("/feed.xml", .document(body: Self.rss([("b", "Beta"), ("c", "Gamma")]), etag: nil))
        let left = try build()
        XCTAssertEqual(changes(left), [1, 1, 0], "a is kept (flagged: an update), c is new, nothing is deleted")
        XCTAssertEqual(try rows(), ["a=Alpha (left)", "b=Beta", "c=Gamma"])
        XCTAssertEqual(try home(), "Alpha (left the feed);Beta;Gamma;")
        XCTAssertEqual(changes(try build()), [0, 0, 0], "a flagged item stays as it is")
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha"), ("b", "Beta"), ("c", "Gamma")]), etag: nil))
        XCTAssertEqual(changes(try build()), [0, 1, 0], "back in the feed: an update, not a new item")
        XCTAssertEqual(try rows(), ["a=Alpha", "b=Beta", "c=Gamma"])
    }

    func testAnItemThatLeavesTheFeedIsDeletedUnderKeepCurrent() throws {
        server.route("/feed.xml", .document(body: Self.rss([("a", "Alpha"), ("b", "Beta")]), etag: nil))
        try configure(sources: [server.url("/feed.xml")], keep: "current")
        // Without archives there is no `leftFeed` for a template to read.
        try write("Templates/list.mustache", "{{#items}}{{title}};{{/items}}")
        _ = try build()
        server.route("/feed.xml", .document(body: Self.rss([("b", "Beta")]), etag: nil))
        XCTAssertEqual(changes(try build()), [0, 0, 1])
        XCTAssertEqual(try rows(), ["b=Beta"])
        XCTAssertEqual(try home(), "Beta;")
    }

    func testASubscriptionListOfFiftyFeedsIsFetchedWithinThePerHostLimit() throws {
        var outlines = ""
        for number in 0..<50 {
            server.route("/feeds/\(number).xml", .document(body: Self.rss([("item-\(number)", "Post \(number)")]), etag: nil,
                                                            delay: 40))
            outlines += "<outline text=\"Blog \(number)\" type=\"rss\" xmlUrl=\"\(server.url("/feeds/\(number).xml"))\" htmlUrl=\"https://blog\(number).example\"/>\n"
        }
        try write("subscriptions.opml", """
            <?xml version="1.0"?>
            <opml version="2.0"><head><title>Planet</title></head>
            <body><outline text="Friends">
            \(outlines)</outline></body></opml>
            """)
        // The same list, read as records: the planet's page of its feeds.
        try configure(sources: ["subscriptions.opml"], collections: "  subscriptions: {kind: opml, sources: subscriptions.opml}",
                      listings: "  feeds: {from: subscriptions, sort: [feedURL], path: /feeds/, template: sources, pageSize: 100}")
        try write("Templates/sources.mustache", "{{#items}}{{title}} {{siteURL}} {{feedURL}}\n{{/items}}")
        let summary = try build { $0.fetchSettings.requestsPerHost = 3 }
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(summary.urlsFetched, 50)
        XCTAssertEqual(Set(server.requests.map(\.path)).count, 50)
        XCTAssertEqual(try rows().count, 50)
        XCTAssertLessThanOrEqual(server.mostInFlight, 3, "the per-host limit")
        XCTAssertGreaterThan(server.mostInFlight, 1, "fetched side by side, not one at a time")
        let sources = try String(contentsOf: site.appendingPathComponent("output/feeds/index.html"), encoding: .utf8)
        XCTAssertEqual(sources.split(separator: "\n").count, 50)
        XCTAssertTrue(sources.contains("Blog 7 https://blog7.example \(server.url("/feeds/7.xml"))\n"), sources)
    }

    /// A list broken by an edit must not empty the planet: the build fails naming the list, and the feeds of
    /// the last build are fetched and kept.
    func testASubscriptionListThatCannotBeReadFailsTheBuildAndKeepsItsFeeds() throws {
        server.route("/a.xml", .document(body: Self.rss([("a", "Alpha")]), etag: nil))
        try write("subscriptions.opml", "<opml version=\"2.0\"><body><outline text=\"A\" xmlUrl=\"\(server.url("/a.xml"))\"/></body></opml>")
        try configure(sources: ["subscriptions.opml"])
        XCTAssertEqual(changes(try build()), [1, 0, 0])
        try write("subscriptions.opml", "<opml version=\"2.0\"><body><outline text=\"A\" xmlUrl=\"\(server.url("/a.xml"))\"></body></opml>")
        let broken = try build()
        XCTAssertFalse(broken.succeeded)
        XCTAssertTrue(broken.problems.contains { $0.file == "subscriptions.opml" && $0.description.contains("the feeds it named at the last build are kept") },
                      "\(broken.problems.map(\.description))")
        XCTAssertEqual(try rows(), ["a=Alpha"])
        XCTAssertNotNil(try keptBody(server.url("/a.xml")))
        XCTAssertEqual(server.requests.last?.path, "/a.xml", "its feeds are still fetched")
    }

    func testKeepAndRefreshAreCheckedWhereTheyAreWritten() throws {
        try write("sitegen.yml", "title: T\ncollections:\n  banks:\n    kind: csv\n    sources: data/*.csv\n    key: id\n    fields: {id: text}\n    keep: all\n")
        XCTAssertThrowsError(try SiteConfig(contentsOf: site.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")) {
            XCTAssertTrue("\($0)".contains("sitegen.yml:8:11: 'keep' is for feed collections"), "\($0)")
        }
        try write("sitegen.yml", "title: T\ncollections:\n  posts:\n    kind: feed\n    sources: https://example.org/feed.xml\n    refresh: soon\n")
        XCTAssertThrowsError(try SiteConfig(contentsOf: site.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")) {
            XCTAssertTrue("\($0)".contains("sitegen.yml:6:14: refresh 'soon' is not an interval"), "\($0)")
        }
        try write("sitegen.yml", "title: T\ncollections:\n  posts:\n    kind: feed\n    sources: https://example.org/feed.xml\n    refresh: 2h\n")
        let config = try SiteConfig(contentsOf: site.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")
        XCTAssertEqual(config.collections.first?.refresh, 7200)
        XCTAssertEqual(config.collections.first?.retention(ofSource: "https://example.org/feed.xml"), .all, "the default for a URL")
        XCTAssertEqual(config.collections.first?.retention(ofSource: "data/feed.xml"), .current, "the default for a file")
    }
}

/// `sitegen build` with URL sources, as a user runs it: the exit status and what it says.
final class RemoteSourcesCommandLineTests: XCTestCase {
    private var executable: URL {
        let bundle = Bundle(for: Self.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("sitegen") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    private func sitegen(_ arguments: [String], in folder: URL) throws -> (status: Int32, stdout: String, stderr: String) {
        let output = try ProcessOutput.of(executable, arguments, in: folder)
        return (output.status, output.stdout, output.stderr)
    }

    func testAServerErrorIsAWarningWithExitZeroAndOfflineMakesNoRequest() throws {
        let server = try FeedTestServer()
        defer { server.stop() }
        let site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-remote-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: site) }
        try FileManager.default.createDirectory(at: site.appendingPathComponent("Templates"), withIntermediateDirectories: true)
        try "{{#items}}{{title}};{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        let url = server.url("/feed.xml")
        try """
            title: Planet
            collections:
              posts: {kind: feed, sources: "\(url)"}
            listings:
              home: {from: posts, sort: [title], path: /}
            """.write(to: site.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        server.route("/feed.xml", .document(body: Array("<rss version=\"2.0\"><channel><title>F</title><item><guid>a</guid><title>Alpha</title></item></channel></rss>".utf8), etag: "\"1\""))
        let first = try sitegen(["build"], in: site)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains("URLs: 1 fetched, 0 unchanged (304), 0 failed"), first.stdout)
        let sources = try sitegen(["sources"], in: site)
        XCTAssertTrue(sources.stdout.contains(url), "a URL source is listed with its rows: \(sources.stdout)")

        server.route("/feed.xml", .status(500))
        let failing = try sitegen(["build"], in: site)
        XCTAssertEqual(failing.status, 0, "a server's failure is no failure of the site")
        XCTAssertTrue(failing.stderr.contains("warning: \(url): could not be fetched: HTTP 500 Internal Server Error; building from the copy kept from"),
                      failing.stderr)
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8), "Alpha;")

        let requests = server.requests.count
        let offline = try sitegen(["build", "--offline"], in: site)
        XCTAssertEqual(offline.status, 0, offline.stderr)
        XCTAssertEqual(server.requests.count, requests, "--offline makes no request")
    }
}
