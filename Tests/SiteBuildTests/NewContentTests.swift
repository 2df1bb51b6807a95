import Foundation
@testable import SiteBuild
import XCTest

/// `sitegen new post "A title"`: a new post's file, from the site's archetype or the built-in front matter.
final class NewContentTests: XCTestCase {
    private func site() throws -> URL {
        let site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-newpost-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: site) }
        try StarterSite.write(into: site)
        return site
    }

    private let now = Date(timeIntervalSince1970: 1_795_000_000)   // 2026-11-18T11:06:40Z

    func testWithoutAnArchetypeAPostHasItsTitleAndTodaysDateAndBuildsIntoTheBlog() throws {
        let site = try site()
        let path = try NewContent.write(kind: "post", title: "A \"first\" title: part 2", site: site, now: now)
        XCTAssertEqual(path, "content/posts/a-first-title-part-2.md")
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent(path), encoding: .utf8),
                       "---\ntitle: \"A \\\"first\\\" title: part 2\"\ndate: 2026-11-18T11:06:40Z\n---\n")
        let summary = try SiteBuilder(root: site).build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems) \(summary.stoppedBy ?? "")")
        XCTAssertEqual(summary.warnings.map(\.description), [])
        let home = try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8)
        XCTAssertTrue(home.contains(#"<a href="/posts/a-first-title-part-2/">A &quot;first&quot; title: part 2</a>"#), home)
    }

    func testTheSitesArchetypeIsFilledInAndAFileThereIsNeverWrittenOver() throws {
        let site = try site()
        try FileManager.default.createDirectory(at: site.appendingPathComponent("archetypes"), withIntermediateDirectories: true)
        try "---\ntitle: {{title}}\ndate: {{date}}\ntags: [draft-ideas]\n---\nWrite about {{slug}} here.\n"
            .write(to: site.appendingPathComponent("archetypes/post.md"), atomically: true, encoding: .utf8)
        let path = try NewContent.write(kind: "post", title: "Hello", site: site, now: now)
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent(path), encoding: .utf8),
                       "---\ntitle: \"Hello\"\ndate: 2026-11-18T11:06:40Z\ntags: [draft-ideas]\n---\nWrite about hello here.\n")
        try "mine".write(to: site.appendingPathComponent(path), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try NewContent.write(kind: "post", title: "Hello", site: site, now: now)) { error in
            XCTAssertEqual("\(error)", "content/posts/hello.md is there already; pick another title, or edit that file")
        }
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent(path), encoding: .utf8), "mine")
    }
}
