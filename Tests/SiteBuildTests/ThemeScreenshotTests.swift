import Foundation
@testable import SiteBuild
import XCTest

/// The starter theme in a real browser (headless Chromium, when installed): every kind of page at a desktop's
/// 1280 px and a phone's 390 px fits its width, and the pager's arrows have no border of their own.
/// Screenshots of each go to `SITEGEN_SCREENSHOTS` (a folder), else to a temporary folder the test prints.
final class ThemeScreenshotTests: XCTestCase {
    /// The pages of each kind: listings (paginated, of a CSV collection without pages, of a feed), a post,
    /// a Markdown page, a CSV record's page, a tag index, a tag's page and the 404 page.
    static let pages = ["index.html", "page/2/index.html", "parks/index.html", "releases/index.html",
                        "posts/welcome/index.html", "about/index.html", "tags/index.html", "tags/news/index.html",
                        "releases/2/index.html", "404.html"]
    static let widths = [1280, 390]

    private func chromium() throws -> String {
        for path in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw XCTSkip("Chromium is not installed (apt-get install chromium): the theme was not looked at in a browser")
    }

    /// The starter site with twelve more posts (two pages), a CSV collection without pages and a feed.
    private func site() throws -> URL {
        let site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-shots-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: site) }
        try StarterSite.write(into: site)
        let config = site.appendingPathComponent("sitegen.yml")
        let yaml = try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "\nlistings:\n", with: """

          parks:
            kind: csv
            sources: content/parks/*.csv
            key: id
            fields: {id: text, title: text, state: text, area_km2: real, visitors: integer, established: date, tags: list}
          releases:
            kind: feed
            sources: content/feeds/*.xml
            detail:
              path: /releases/{slug}/
              body: summary
              format: text

        listings:

        """) + """
          parks:
            from: parks
            sort: title
            path: /parks/
            title: National parks
          releases:
            from: releases
            sort: -published
            path: /releases/
            title: Releases

        """
        try yaml.write(to: config, atomically: true, encoding: .utf8)
        let parks = site.appendingPathComponent("content/parks"), feeds = site.appendingPathComponent("content/feeds")
        for folder in [parks, feeds] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try """
        id,title,state,area_km2,established,visitors,tags
        yell,Yellowstone National Park and its Supervolcano Caldera,WY,8983.2,1872-03-01,4501382,geysers; wildlife; volcanoes
        grca,Grand Canyon,AZ,4862.9,1919-02-26,4733705,canyons
        """.write(to: parks.appendingPathComponent("parks.csv"), atomically: true, encoding: .utf8)
        try """
        <?xml version="1.0"?><rss version="2.0"><channel><title>R</title><link>https://example.org/</link><description>d</description>
        <item><title>Version 2</title><link>https://example.org/releases/2</link><pubDate>Tue, 03 Feb 2026 09:00:00 GMT</pubDate>
        <category>news</category><description>Faster builds, and a much longer description that a phone has to wrap.</description></item></channel></rss>
        """.write(to: feeds.appendingPathComponent("releases.xml"), atomically: true, encoding: .utf8)
        for number in 1...12 {
            try """
            ---
            title: Post number \(number) with a title long enough to wrap on a phone
            date: 2026-03-\(String(format: "%02d", number))T08:00:00Z
            description: Post \(number).
            tags: [news]
            ---
            Text.
            """.write(to: site.appendingPathComponent("content/posts/post-\(number).md"), atomically: true, encoding: .utf8)
        }
        let summary = try SiteBuilder(root: site).build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems) \(summary.stoppedBy ?? "")")
        return site
    }

    /// Runs Chromium headless on `arguments` and returns what it printed to standard output.
    private func run(_ chromium: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chromium)
        // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--allow-file-access-from-files"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// What a script measures in the page: whether anything is wider than the window, and the border of the
    /// pager arrows (`<span aria-hidden>` inside a pager link). The page runs in a frame of the width looked
    /// at (headless Chromium's own window is never narrower than 500 px), and posts what it found to it.
    private static let probe = """
        <script>addEventListener('load', () => {
          const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > innerWidth + 1)
            .map(e => e.tagName + '.' + e.className);
          const arrows = [...document.querySelectorAll('.pagination [aria-hidden]')].map(e => getComputedStyle(e).borderTopWidth);
          parent.postMessage(JSON.stringify({scrollWidth: document.documentElement.scrollWidth, innerWidth, wide, arrows}), '*');
        });</script>
        """

    /// A page holding `page` in a frame `width` px wide, which writes what the frame's probe posts into its body.
    private static func frame(_ page: String, width: Int) -> String {
        """
        <!DOCTYPE html><html><body style="margin:0"><script>addEventListener('message', e => document.body.setAttribute('data-probe', e.data))</script>
        <iframe src="\(page)" style="width:\(width)px;height:1000px;border:0"></iframe></body></html>
        """
    }

    func testEveryPageKindFitsADesktopAndAPhoneAndThePagerArrowsHaveNoBorder() throws {
        let chromium = try chromium()
        let output = try site().appendingPathComponent("output")
        let shots = ProcessInfo.processInfo.environment["SITEGEN_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-screenshots")
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        print("theme screenshots: \(shots.path)")
        var arrowsSeen = 0
        for page in Self.pages {
            let file = output.appendingPathComponent(page)
            let html = try String(contentsOf: file, encoding: .utf8)
            let probed = output.appendingPathComponent(page.replacingOccurrences(of: ".html", with: ".probe.html"))
            try html.replacingOccurrences(of: "</body>", with: Self.probe + "</body>").write(to: probed, atomically: true, encoding: .utf8)
            for width in Self.widths {
                let name = page.replacingOccurrences(of: "/index.html", with: "").replacingOccurrences(of: "/", with: "-")
                    .replacingOccurrences(of: ".html", with: "")
                let shot = shots.appendingPathComponent("\(name == "index" ? "home" : name)-\(width).png")
                _ = try run(chromium, ["--window-size=\(width),1000", "--screenshot=\(shot.path)", file.absoluteString])
                XCTAssertGreaterThan((try? Data(contentsOf: shot).count) ?? 0, 2_000, "\(page) at \(width) px: no screenshot")
                let frame = probed.deletingLastPathComponent().appendingPathComponent("frame-\(width).html")
                try Self.frame(probed.lastPathComponent, width: width).write(to: frame, atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(at: frame) }
                let dom = try run(chromium, ["--window-size=1280,1000", "--virtual-time-budget=3000", "--dump-dom", frame.absoluteString])
                guard let start = dom.range(of: "data-probe=\""), let end = dom[start.upperBound...].firstIndex(of: "\"") else {
                    XCTFail("\(page) at \(width) px: the probe did not run")
                    continue
                }
                let json = String(dom[start.upperBound..<end]).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
                let probe = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
                XCTAssertEqual(probe["wide"] as? [String], [], "\(page) at \(width) px: wider than the window")
                XCTAssertEqual(probe["innerWidth"] as? Int, width, "\(page): the frame is as wide as asked")
                XCTAssertLessThanOrEqual(probe["scrollWidth"] as? Int ?? .max, width, "\(page) at \(width) px scrolls sideways")
                let arrows = probe["arrows"] as? [String] ?? []
                XCTAssertEqual(arrows, arrows.map { _ in "0px" }, "\(page): a pager arrow has a border of its own")
                arrowsSeen += arrows.count
            }
            try FileManager.default.removeItem(at: probed)
        }
        XCTAssertGreaterThan(arrowsSeen, 0, "the paginated pages have arrows to look at")
    }
}
