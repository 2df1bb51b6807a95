import Foundation
import SiteServe
import XCTest

/// Runs `sitegen serve` on a copy of the example site.
final class ServeCommandTests: XCTestCase {
    /// The port from the `serving http://127.0.0.1:PORT/` line.
    private func servedPort(_ serve: RunningSitegen) throws -> UInt16 {
        XCTAssertTrue(serve.waitFor("for changes"), "not serving: \(serve.stdout) \(serve.stderr)")
        let line = try XCTUnwrap(serve.stdout.split(separator: "\n").first { $0.hasPrefix("serving http://") }, serve.stdout)
        let address = line.dropFirst("serving http://".count).prefix { $0 != "/" }
        return try XCTUnwrap(UInt16(address.split(separator: ":").last ?? ""), String(line))
    }

    func testABuildThatWritesFilesSendsAReloadEventToOpenPages() throws {
        let site = try ExampleSite.copy(for: self)
        let serve = try RunningSitegen(["serve", "--site", site.path, "--port", "0"], in: site)
        let port = try servedPort(serve)

        let page = try RawHTTPConnection(port: port).request("/banks/23917/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains("Capitol Bank") && page.text.contains(LiveReload.script))

        let events = try RawHTTPConnection(port: port)
        try events.send(Array("GET \(LiveReload.eventsPath) HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n".utf8))
        XCTAssertTrue(events.read(until: "retry: 1000"), "no event stream")

        let edited = Date()
        try site.appendingPathComponent("content/records/failed-banks.csv").replace("\nCapitol Bank,", with: "\nCapitol Savings Bank,")
        XCTAssertTrue(events.read(until: "event: reload"), "no reload event: \(serve.stdout)")
        print("edit to reload event: \(String(format: "%.3f", Date().timeIntervalSince(edited))) s")
        XCTAssertTrue(try RawHTTPConnection(port: port).request("/banks/23917/").text.contains("Capitol Savings Bank"))

        // Ctrl-C with a page still listening.
        XCTAssertEqual(serve.stop(with: SIGINT), 0, serve.stderr)
    }

    /// `serve --drafts` serves drafts, marked, and says on standard error that it includes them; `serve`
    /// alone has no page for them.
    func testServeDraftsServesDraftsMarkedAndSaysSo() throws {
        let site = try ExampleSite.copy(for: self)
        try Data("---\ntitle: Plans\ndraft: true\n---\nNot yet.\n".utf8).write(to: site.appendingPathComponent("content/pages/plans.md"))
        let serve = try RunningSitegen(["serve", "--drafts", "--site", site.path, "--port", "0"], in: site)
        let port = try servedPort(serve)
        XCTAssertTrue(serve.stderr.contains("including 1 draft (--drafts): build without --drafts for the site you publish\n"), serve.stderr)
        let page = try RawHTTPConnection(port: port).request("/plans/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.text.contains(#"<h1>Plans<span class="draft">Draft</span></h1>"#), page.text)
        XCTAssertEqual(serve.stop(with: SIGINT), 0, serve.stderr)

        let plain = try RunningSitegen(["serve", "--site", site.path, "--port", "0"], in: site)
        let plainPort = try servedPort(plain)
        XCTAssertEqual(try RawHTTPConnection(port: plainPort).request("/plans/").status, 404)
        XCTAssertFalse(plain.stderr.contains("draft"), plain.stderr)
        XCTAssertEqual(plain.stop(with: SIGINT), 0, plain.stderr)
    }

    func testAFailedBuildShowsItsErrorOverOpenPagesUntilABuildSucceeds() throws {
        let site = try ExampleSite.copy(for: self)
        let serve = try RunningSitegen(["serve", "--site", site.path, "--port", "0"], in: site)
        let port = try servedPort(serve)
        let page = try RawHTTPConnection(port: port).request("/")
        XCTAssertTrue(page.text.contains(#"s.addEventListener("failure""#) && page.text.contains(LiveReload.failureID))
        let events = try RawHTTPConnection(port: port)
        try events.send(Array("GET \(LiveReload.eventsPath) HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n".utf8))
        XCTAssertTrue(events.read(until: "retry: 1000"), "no event stream")

        // A misspelt name: the open page is told where, with the message.
        let template = site.appendingPathComponent("Templates/list.mustache")
        try template.replace("<h1>{{listing.title}}</h1>", with: "<h1>{{listing.titel}}</h1>")
        XCTAssertTrue(events.read(until: "event: failure\ndata: [\"Templates/list.mustache:5:"), "no failure event: \(serve.stderr)")
        XCTAssertTrue(events.read(until: "titel"))
        // A page opened while the build is still failing is told at once.
        let later = try RawHTTPConnection(port: port)
        try later.send(Array("GET \(LiveReload.eventsPath) HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n".utf8))
        XCTAssertTrue(later.read(until: "event: failure\ndata: [\"Templates/list.mustache:5:"), "a page opened later is not told")

        // Fixed: the pages are as the last good build left them, so nothing is written; the error goes away.
        try template.replace("<h1>{{listing.titel}}</h1>", with: "<h1>{{listing.title}}</h1>")
        XCTAssertTrue(events.read(until: "event: fixed"), "no fixed event: \(serve.stdout)")
        XCTAssertEqual(serve.stop(with: SIGINT), 0, serve.stderr)
    }

    /// `sitegen serve` on a site reached through a symbolic link stopped at its watch (`inotify_add_watch:
    /// Not a directory`); it serves and reloads through the link.
    func testServeOnASiteReachedThroughALinkServesAndReloads() throws {
        let real = try ExampleSite.copy(for: self)
        let site = real.deletingLastPathComponent().appendingPathComponent("sitegen-link-\(UUID().uuidString)")
        try FileManager.default.createSymbolicLink(at: site, withDestinationURL: real)
        addTeardownBlock { try? FileManager.default.removeItem(at: site) }
        let serve = try RunningSitegen(["serve", "--site", site.path, "--port", "0"], in: site.deletingLastPathComponent())
        let port = try servedPort(serve)
        XCTAssertTrue(try RawHTTPConnection(port: port).request("/banks/23917/").text.contains("Capitol Bank"))
        let events = try RawHTTPConnection(port: port)
        try events.send(Array("GET \(LiveReload.eventsPath) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        XCTAssertTrue(events.read(until: "retry: 1000"), "no event stream")
        try site.appendingPathComponent("content/records/failed-banks.csv").replace("\nCapitol Bank,", with: "\nCapitol Savings Bank,")
        XCTAssertTrue(events.read(until: "event: reload"), "no reload event: \(serve.stdout)")
        XCTAssertTrue(try RawHTTPConnection(port: port).request("/banks/23917/").text.contains("Capitol Savings Bank"))
        XCTAssertEqual(serve.stop(with: SIGINT), 0, serve.stderr)
    }

    /// A change that a `build` in another terminal published first left serve's own build nothing to do: it
    /// wrote no file and sent no reload, so open pages went stale. A second watcher on the site was not said.
    func testAChangeAnotherProcessPublishedStillReloadsOpenPages() throws {
        let site = try ExampleSite.copy(for: self)
        let serve = try RunningSitegen(["serve", "--site", site.path, "--port", "0"], in: site)
        let port = try servedPort(serve)
        let events = try RawHTTPConnection(port: port)
        try events.send(Array("GET \(LiveReload.eventsPath) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        XCTAssertTrue(events.read(until: "retry: 1000"), "no event stream")

        let second = try RunningSitegen(["watch", "--site", site.path], in: site)
        XCTAssertTrue(second.waitFor("another sitegen watch or serve is already watching this site", inStandardError: true, timeout: 30),
                      second.stderr)
        XCTAssertEqual(second.stop(with: SIGINT), 0, second.stderr)
        XCTAssertFalse(serve.stderr.contains("already watching"), serve.stderr)

        // Held still while the change is made and built by another process, serve then finds it done.
        kill(serve.process.processIdentifier, SIGSTOP)
        try site.appendingPathComponent("content/records/failed-banks.csv").replace("\nCapitol Bank,", with: "\nCapitol Savings Bank,")
        XCTAssertEqual(try RunningSitegen.build(site), 0)
        kill(serve.process.processIdentifier, SIGCONT)
        XCTAssertTrue(serve.waitFor("failed-banks.csv changed: built in", timeout: 30), serve.stdout)
        XCTAssertTrue(serve.stdout.contains("0 files written") || serve.stdout.contains("0 written"), serve.stdout)
        XCTAssertTrue(events.read(until: "event: reload"), "no reload event: \(serve.stdout)")
        XCTAssertEqual(serve.stop(with: SIGINT), 0, serve.stderr)
    }

    func testItListensOnTheLoopbackAddressByDefault() throws {
        let site = try ExampleSite.copy(for: self)
        let serve = try RunningSitegen(["serve", "--site", site.path, "--port", "0"], in: site)
        let port = try servedPort(serve)
        XCTAssertTrue(serve.stdout.contains("serving http://127.0.0.1:\(port)/ from "), serve.stdout)
        XCTAssertEqual(try RawHTTPConnection(host: "127.0.0.1", port: port).request("/").status, 200)
        // Every other IPv4 address of this machine is refused (there may be none besides loopback).
        for address in Self.otherIPv4Addresses() {
            XCTAssertThrowsError(try RawHTTPConnection(host: address, port: port), "reachable on \(address)")
        }
        XCTAssertEqual(serve.stop(with: SIGTERM), 0, serve.stderr)
    }

    func testABadHostOrATakenPortFailsNamingIt() throws {
        let site = try ExampleSite.copy(for: self)
        let badHost = try RunningSitegen(["serve", "--site", site.path, "--host", "example.org"], in: site)
        badHost.process.waitUntilExit()
        XCTAssertEqual(badHost.process.terminationStatus, 64)
        XCTAssertTrue(badHost.stderr.contains("--host 'example.org': not an IPv4 or IPv6 address"), badHost.stderr)

        let first = try RunningSitegen(["serve", "--site", site.path, "--port", "0"], in: site)
        let port = try servedPort(first)
        let second = try RunningSitegen(["serve", "--site", site.path, "--port", String(port)], in: site)
        second.process.waitUntilExit()
        XCTAssertEqual(second.process.terminationStatus, 1)
        XCTAssertTrue(second.stderr.contains("error: cannot listen on 127.0.0.1:\(port): "), second.stderr)
        XCTAssertFalse(second.stdout.contains("built in"), "the port is tried before the first build: \(second.stdout)")
        XCTAssertEqual(first.stop(), 0)
    }

    private static func otherIPv4Addresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [String] = []
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet4 in
                var raw = inet4.pointee.sin_addr
                _ = inet_ntop(AF_INET, &raw, &text, socklen_t(INET_ADDRSTRLEN))
            }
            let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !name.hasPrefix("127.") { addresses.append(name) }
        }
        return addresses
    }
}
