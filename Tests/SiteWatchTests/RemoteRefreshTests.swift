import Foundation
import SiteBuild
import SiteWatch
import TestSupport
import XCTest

/// A watch fetches its URL sources again every `refresh:` interval, and builds only when a body changed.
final class RemoteRefreshTests: XCTestCase {
    private final class Reports: @unchecked Sendable {
        let lock = NSLock()
        var list: [RebuildReport] = []
        var all: [RebuildReport] { lock.withLock { list } }
    }

    private static func rss(_ titles: [String]) -> [UInt8] {
        Array(("<rss version=\"2.0\"><channel><title>F</title>"
            + titles.map { "<item><guid>\($0)</guid><title>\($0)</title></item>" }.joined() + "</channel></rss>").utf8)
    }

    func testAnOfflineWatchNeverFetches() throws {
        let server = try FeedTestServer()
        defer { server.stop() }
        let site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-refresh-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: site) }
        try FileManager.default.createDirectory(at: site.appendingPathComponent("Templates"), withIntermediateDirectories: true)
        try "{{#items}}{{title}};{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        try """
            title: Planet
            collections:
              posts: {kind: feed, sources: "\(server.url("/feed.xml"))", refresh: 1s}
            listings:
              home: {from: posts, sort: [title], path: /}
            """.write(to: site.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        server.route("/feed.xml", .document(body: Self.rss(["Alpha"]), etag: nil))
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded, "a build with the network keeps a copy")
        let session = try WatchSession(builder: SiteBuilder(root: site), offline: true)
        XCTAssertTrue(session.firstBuild().succeeded)
        let watching = Thread { try? session.watch { _ in } }
        watching.start()
        defer { session.stop() }
        Thread.sleep(forTimeInterval: 1.6)
        XCTAssertEqual(server.requests.count, 1, "only the build before the watch asked")
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8), "Alpha;")
    }

    func testAWatchRefetchesEveryRefreshIntervalAndRebuildsOnlyWhenAFeedChanged() throws {
        let server = try FeedTestServer()
        defer { server.stop() }
        let site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-refresh-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: site) }
        for folder in ["content", "Templates"] {
            try FileManager.default.createDirectory(at: site.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try "{{#items}}{{title}};{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        try """
            title: Planet
            collections:
              posts: {kind: feed, sources: "\(server.url("/feed.xml"))", refresh: 1s}
            listings:
              home: {from: posts, sort: [title], path: /}
            """.write(to: site.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        server.route("/feed.xml", .document(body: Self.rss(["Alpha"]), etag: "\"1\""))
        let home = site.appendingPathComponent("output/index.html")

        let session = try WatchSession(builder: SiteBuilder(root: site))
        XCTAssertTrue(session.firstBuild().succeeded)
        XCTAssertEqual(try String(contentsOf: home, encoding: .utf8), "Alpha;")
        let reports = Reports()
        let watching = Thread { try? session.watch { report in reports.lock.withLock { reports.list.append(report) } } }
        watching.start()
        defer { session.stop() }

        // Unchanged (304) twice or more: fetched, and nothing built.
        Thread.sleep(forTimeInterval: 2.6)
        XCTAssertGreaterThanOrEqual(server.requests.count, 3, "the first build's fetch and at least two refreshes")
        XCTAssertEqual(server.requests.last?.header("If-None-Match"), "\"1\"")
        XCTAssertTrue(reports.all.isEmpty, "no build when nothing changed: \(reports.all.map(\.line))")

        server.route("/feed.xml", .document(body: Self.rss(["Alpha", "Beta"]), etag: "\"2\""))
        let end = Date(timeIntervalSinceNow: 5)
        while reports.all.isEmpty && Date() < end { Thread.sleep(forTimeInterval: 0.05) }
        let built = reports.all
        XCTAssertEqual(built.count, 1, "\(built.map(\.line))")
        XCTAssertTrue(built.first?.line.contains("1 URL source changed") == true, "\(built.map(\.line))")
        XCTAssertEqual(try String(contentsOf: home, encoding: .utf8), "Alpha;Beta;")
    }
}
