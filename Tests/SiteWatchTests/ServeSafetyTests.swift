import Foundation
@testable import SiteServe
import XCTest

/// The development server over a prepared output folder: what it serves, and that nothing outside the folder leaks.
final class ServeSafetyTests: XCTestCase {
    private var folder: URL!
    private var server: SiteServer!
    private var port: UInt16 = 0

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-serve-\(UUID().uuidString)")
        let output = folder.appendingPathComponent("output")
        try FileManager.default.createDirectory(at: output.appendingPathComponent("banks/10538"), withIntermediateDirectories: true)
        let files = [
            "secret.txt": "TOP-SECRET outside the output folder",
            "output/index.html": "<!DOCTYPE html>\n<html><body><h1>Home</h1></BODY>\n</html>\n",
            "output/banks/10538/index.html": "<html><body>Bank 10538</body></html>\n",
            "output/style.css": "body { color: black }\n",
            "output/states/index.md": "| state | banks |\n",
            "output/404.html": "<html><body>NOT-FOUND-PAGE</body></html>\n",
            "output/.index.html.sitegen-123-456.tmp": "<html><body>HALF WRITTEN",
        ]
        for (path, text) in files {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: false, encoding: .utf8)
        }
        XCTAssertEqual(symlink(folder.appendingPathComponent("secret.txt").path, output.appendingPathComponent("leak.txt").path), 0)
        XCTAssertEqual(symlink("..", output.appendingPathComponent("up").path), 0)
        XCTAssertEqual(symlink("/etc", output.appendingPathComponent("etc").path), 0)
        XCTAssertEqual(symlink("index.html", output.appendingPathComponent("alias.html").path), 0)

        server = try SiteServer(SiteServer.Configuration(outputDirectory: output, port: 0))
        port = try startBlocking(server).port
    }

    override func tearDownWithError() throws {
        stopBlocking(server)
        try FileManager.default.removeItem(at: folder)
    }

    private func get(_ target: String, method: String = "GET") throws -> RawHTTPConnection.Response {
        try RawHTTPConnection(port: port).request(target, method: method, keepAlive: false)
    }

    /// A page that was left kept its event stream's connection open until the next build that wrote files;
    /// at 1,024 open files the server stopped for good, with nothing said. Streams get a comment each
    /// heartbeat, which finds the closed ones.
    func testTheEventStreamsOfPagesThatWereLeftAreClosed() throws {
        let output = folder.appendingPathComponent("output")
        let beating = try SiteServer(SiteServer.Configuration(outputDirectory: output, port: 0, heartbeat: .milliseconds(100)))
        let port = try startBlocking(beating).port
        defer { stopBlocking(beating) }
        for _ in 0..<40 {
            let connection = try RawHTTPConnection(port: port)
            try connection.send(Array("GET /_sitegen/live HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
            XCTAssertTrue(connection.read(until: "retry: 1000"))
        }
        // The connections above are closed (deinit); the server finds out at its next writes.
        let deadline = Date().addingTimeInterval(5)
        while beating.liveReload.listenerCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertEqual(beating.liveReload.listenerCount, 0)
        // A stream still open hears the comments, and stays.
        let open = try RawHTTPConnection(port: port)
        try open.send(Array("GET /_sitegen/live HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        XCTAssertTrue(open.read(until: ": ping"))
        XCTAssertEqual(beating.liveReload.listenerCount, 1)
    }

    /// When the listening socket went (an accept failed), the process went on building with nothing served.
    func testAServerThatStopsListeningSaysSoAndListensAgain() throws {
        let troubles = Troubles()
        server.onTrouble = { troubles.add($0) }
        let dropped = DispatchSemaphore(value: 0)
        Task { [server] in
            await server!.dropListener()
            dropped.signal()
        }
        dropped.wait()
        let deadline = Date().addingTimeInterval(10)
        var answer: RawHTTPConnection.Response?
        while answer == nil && Date() < deadline {
            answer = try? get("/style.css")
            if answer == nil { Thread.sleep(forTimeInterval: 0.1) }
        }
        XCTAssertEqual(answer?.status, 200)
        XCTAssertEqual(troubles.all.count, 1)
        XCTAssertTrue(troubles.all.first?.hasSuffix("listening again on port \(port) in a second") == true, "\(troubles.all)")
    }

    /// Debian's default soft limit of 1,024 open files is a thousand open pages: serve raises it to the hard limit.
    func testServeRaisesTheOpenFileLimitToTheHardLimit() throws {
        var before = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &before), 0)
        try XCTSkipIf(before.rlim_max <= 256, "a hard limit this low leaves nothing to raise")
        // Lowered first, so that the test sees a raise wherever it runs (here soft and hard are often equal).
        var lowered = before
        lowered.rlim_cur = 256
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered), 0)
        let raised = SiteServer.raiseOpenFileLimit()
        var after = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &after), 0)
        XCTAssertEqual(UInt64(after.rlim_cur), raised)
        XCTAssertEqual(after.rlim_cur, before.rlim_max == rlim_t.max ? 1 << 20 : before.rlim_max)
    }

    func testPathsThatReachOutsideTheOutputFolderAreNotFound() throws {
        let attacks = [
            "/../etc/passwd", "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/%2E%2E/", "/%2E%2e/secret.txt",
            "/..%2fsecret.txt", "/%2e%2e%2fsecret.txt", "/banks/../../secret.txt", "/banks/%2e%2e/%2e%2e/secret.txt",
            "//etc/passwd", "//secret.txt", "/banks//10538/", "/.%2e/secret.txt", "/./index.html", "/..", "/%5c..%5csecret.txt",
            "/index.html%00", "/index.html%00.txt", "/%00/", "/banks/10538/index.html%00",
            "/leak.txt", "/up/secret.txt", "/up/", "/up", "/etc/passwd", "/etc/",
            "/.index.html.sitegen-123-456.tmp", "/%2eindex.html.sitegen-123-456.tmp",
            "http://localhost/../secret.txt", "*",
        ]
        for target in attacks {
            let response = try get(target)
            XCTAssertEqual(response.status, 404, target)
            XCTAssertFalse(response.text.contains("TOP-SECRET"), target)
            XCTAssertFalse(response.text.contains("root:"), target)
            XCTAssertFalse(response.text.contains("HALF WRITTEN"), target)
        }
        // A raw NUL in the request line.
        let connection = try RawHTTPConnection(port: port)
        try connection.send(Array("GET /index.html".utf8) + [0] + Array(" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
        XCTAssertTrue(connection.read(until: "HTTP/1.1 404"))
    }

    func testFoldersServeTheirIndexAndRedirectWithoutTheirSlash() throws {
        let home = try get("/")
        XCTAssertEqual(home.status, 200)
        XCTAssertEqual(home.headers["content-type"], "text/html; charset=utf-8")
        XCTAssertEqual(home.text, "<!DOCTYPE html>\n<html><body><h1>Home</h1>\(LiveReload.script)</BODY>\n</html>\n")
        XCTAssertEqual(try get("/banks/10538/").text, "<html><body>Bank 10538\(LiveReload.script)</body></html>\n")
        XCTAssertEqual(try get("/banks/10538/index.html").status, 200)
        XCTAssertEqual(try get("/alias.html").status, 200, "a link inside the folder is served")

        let redirect = try get("/banks/10538?page=2")
        XCTAssertEqual(redirect.status, 301)
        XCTAssertEqual(redirect.headers["location"], "/banks/10538/?page=2")
        XCTAssertEqual(try get("/banks").headers["location"], "/banks/")

        let missing = try get("/banks/99999/")
        XCTAssertEqual(missing.status, 404)
        XCTAssertTrue(missing.text.contains("NOT-FOUND-PAGE") && missing.text.contains(LiveReload.script), missing.text)
        XCTAssertEqual(try get("/style.css/").status, 404, "a file is not a folder")
        XCTAssertEqual(try get("/banks/10538/", method: "POST").status, 405)

        let head = try get("/", method: "HEAD")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-length"], String(home.body.count))
    }

    /// A video in `static/` did not play in Safari, which asks for ranges only: the server sent the whole file.
    func testARangeOfAFileIsServedAsAsked() throws {
        func get(_ range: String) throws -> RawHTTPConnection.Response {
            try RawHTTPConnection(port: port).request("/style.css", keepAlive: false, headers: ["Range": range])
        }
        let whole = "body { color: black }\n"
        XCTAssertEqual(try self.get("/style.css").headers["accept-ranges"], "bytes")
        let first = try get("bytes=0-3")
        XCTAssertEqual(first.status, 206)
        XCTAssertEqual(first.text, "body")
        XCTAssertEqual(first.headers["content-range"], "bytes 0-3/\(whole.utf8.count)")
        XCTAssertEqual(try get("bytes=5-").text, String(whole.dropFirst(5)))
        XCTAssertEqual(try get("bytes=-8").text, "black }\n")
        XCTAssertEqual(try get("bytes=0-9999").text, whole, "an end past the file is the file's end")
        let past = try get("bytes=500-")
        XCTAssertEqual(past.status, 416)
        XCTAssertEqual(past.headers["content-range"], "bytes */\(whole.utf8.count)")
        XCTAssertEqual(try get("bytes=0-1,4-5").status, 200, "several ranges: the whole file")
        XCTAssertEqual(try get("lines=1-2").text, whole)
    }

    func testASiteWithABasePathIsServedUnderItAsItIsPublished() throws {
        let blog = try SiteServer(SiteServer.Configuration(outputDirectory: folder.appendingPathComponent("output"), port: 0, basePath: "/blog/"))
        let port = try startBlocking(blog).port
        defer { stopBlocking(blog) }
        func get(_ target: String) throws -> RawHTTPConnection.Response {
            try RawHTTPConnection(port: port).request(target, keepAlive: false)
        }
        XCTAssertEqual(try get("/blog/").text, "<!DOCTYPE html>\n<html><body><h1>Home</h1>\(LiveReload.script)</BODY>\n</html>\n")
        XCTAssertEqual(try get("/blog/banks/10538/").text, "<html><body>Bank 10538\(LiveReload.script)</body></html>\n")
        XCTAssertEqual(try get("/blog/banks").headers["location"], "/blog/banks/")
        XCTAssertEqual(try get("/").headers["location"], "/blog/", "the server's root leads to the site")
        XCTAssertEqual(try get("/blog?x=1").headers["location"], "/blog/?x=1")
        let outside = try get("/banks/10538/")
        XCTAssertEqual(outside.status, 404, "links lead under the base path, so nothing is served outside it")
        XCTAssertTrue(outside.text.contains("NOT-FOUND-PAGE"))
        for attack in ["/blog/../secret.txt", "/blog/%2e%2e/secret.txt", "/blog/up/secret.txt", "/blog//etc/passwd", "/blogx/index.html"] {
            XCTAssertEqual(try get(attack).status, 404, attack)
        }
        blog.basePath = "news"
        XCTAssertEqual(try get("/news/banks/10538/").status, 200, "a build that changed baseURL's path moves the site")
        XCTAssertEqual(try get("/blog/").status, 404)
        // A base path outside ASCII, as baseURL encodes it: the hex digits' case is no matter (RFC 3986).
        blog.basePath = "/%E6%97%A5/"
        for target in ["/%E6%97%A5/banks/10538/", "/%e6%97%a5/banks/10538/"] {
            XCTAssertEqual(try get(target).status, 200, target)
        }
        XCTAssertEqual(try get("/%e6%97%a5").headers["location"], "/%E6%97%A5/")
        XCTAssertEqual(try get("/%E6%97%A6/banks/10538/").status, 404)
    }

    func testTheSitesOwn404PageIsOptional() throws {
        try FileManager.default.removeItem(at: folder.appendingPathComponent("output/404.html"))
        let missing = try get("/nothing-here")
        XCTAssertEqual(missing.status, 404)
        XCTAssertTrue(missing.text.contains("<h1>404 Not Found</h1>"), missing.text)
        XCTAssertEqual(missing.headers["content-type"], "text/html; charset=utf-8")
        XCTAssertTrue(missing.text.contains(LiveReload.script), "a page whose file is gone (the output folder deleted) comes back on its own")
    }

    func testEachKindOfFileHasItsContentType() throws {
        XCTAssertEqual(try get("/style.css").headers["content-type"], "text/css; charset=utf-8")
        XCTAssertEqual(try get("/states/index.md").headers["content-type"], "text/markdown; charset=utf-8")
        let expected = [
            "a.html": "text/html; charset=utf-8", "a.css": "text/css; charset=utf-8", "a.js": "text/javascript; charset=utf-8",
            "feed.json": "application/json", "sitemap.xml": "application/xml; charset=utf-8",
            "atom.xml": "application/atom+xml; charset=utf-8", "rss.xml": "application/rss+xml; charset=utf-8",
            "news.atom": "application/atom+xml; charset=utf-8", "news.rss": "application/rss+xml; charset=utf-8",
            "chart.svg": "image/svg+xml", "a.png": "image/png", "a.JPG": "image/jpeg", "a.jpeg": "image/jpeg",
            "a.gif": "image/gif", "a.webp": "image/webp", "robots.txt": "text/plain; charset=utf-8",
            "index.md": "text/markdown; charset=utf-8", "font.woff2": "font/woff2", "LICENSE": "application/octet-stream",
        ]
        for (name, type) in expected { XCTAssertEqual(ContentType.of(fileNamed: name), type, name) }
    }

    func testTheServerListensOnThisMachineOnlyUnlessToldOtherwise() throws {
        XCTAssertEqual(SiteServer.defaultHost, "127.0.0.1")
        XCTAssertEqual(SiteServer.Configuration(outputDirectory: folder).host, "127.0.0.1")
        XCTAssertEqual(server.configuration.host, "127.0.0.1")
        XCTAssertTrue(SiteServer.isAddress("::1") && SiteServer.isAddress("0.0.0.0") && SiteServer.isAddress("localhost"))
        XCTAssertFalse(SiteServer.isAddress("example.org"))
    }
}

/// Messages a server's `onTrouble` gave, from whichever thread.
private final class Troubles: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}
