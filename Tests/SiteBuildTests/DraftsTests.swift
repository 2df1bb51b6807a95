import Foundation
@testable import SiteBuild
import XCTest

/// `--drafts` (`SiteBuilder.includesDrafts`): a Markdown file whose front matter says `draft: true` (Hugo) or
/// `published: false` (Jekyll) is published, marked as a draft, only by a build that includes drafts; a
/// build that flips the flag writes what a clean build with the flag writes, and one that keeps it stays
/// incremental.
final class DraftsTests: XCTestCase {
    private var scratch: ScratchSite!
    private var site: URL { scratch.site }
    private var output: URL { site.appendingPathComponent("output") }

    /// The starter site (`sitegen new`), whose theme marks drafts, with a draft post between its two posts
    /// (tagged, so in a taxonomy of its own too) and an unpublished page.
    override func setUpWithError() throws {
        scratch = try ScratchSite("drafts")
        for item in ["sitegen.yml", "content", "Templates"] { try FileManager.default.removeItem(at: site.appendingPathComponent(item)) }
        try StarterSite.write(into: site)
        try write("content/posts/secret.md", Self.secretPost(body: "Coming soon."))
        try write("content/pages/team.md", "---\ntitle: Team\npublished: false\n---\nWho we are.\n")
        // A first build then vouches for the files it reads: the next one does not read them again.
        waitPastTheClocksTick()
    }

    override func tearDownWithError() throws {
        scratch.remove()
    }

    private static func secretPost(body: String) -> String {
        "---\ntitle: Secret plans\ndate: 2026-01-05T12:00:00Z\ndescription: Not yet.\ntags: [news, plans]\ndraft: true\n---\n\(body)\n"
    }

    private func write(_ path: String, _ text: String) throws {
        try text.write(to: site.appendingPathComponent(path), atomically: false, encoding: .utf8)
    }

    private func text(_ path: String) throws -> String {
        try String(contentsOf: output.appendingPathComponent(path), encoding: .utf8)
    }

    private func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: output.appendingPathComponent(path).path)
    }

    private func build(drafts: Bool, session: BuildSession? = nil, changed: Set<String>? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws -> BuildSummary {
        var builder = SiteBuilder(root: site)
        builder.includesDrafts = drafts
        builder.session = session
        let summary = try builder.build(options: SiteBuilder.Options(changedSources: changed))
        XCTAssertTrue(summary.succeeded, "\(summary.problems) \(summary.stoppedBy ?? "")", file: file, line: line)
        XCTAssertEqual(summary.warnings.map(\.description), [], file: file, line: line)
        return summary
    }

    /// The output's files that mention `text`: pages, listings, feeds, the sitemap.
    private func files(mentioning text: String) throws -> [String] {
        try ScratchSite.files(under: output).filter { String(decoding: $0.value, as: UTF8.self).contains(text) }.keys.sorted()
    }

    func testWithoutTheFlagADraftIsNowhereInTheSite() throws {
        let summary = try build(drafts: false)
        XCTAssertNil(summary.drafts)
        XCTAssertNil(summary.draftsLine)
        XCTAssertFalse(exists("posts/secret/index.html"))
        XCTAssertFalse(exists("team/index.html"))
        XCTAssertFalse(exists("tags/plans/index.html"), "a tag only the draft has is no section")
        // No listing, tag page, neighbour, feed, sitemap or menu names them.
        XCTAssertEqual(try files(mentioning: "Secret plans"), [])
        XCTAssertEqual(try files(mentioning: "/posts/secret/"), [])
        XCTAssertEqual(try files(mentioning: "/team/"), [])
        XCTAssertEqual(try files(mentioning: #"class="draft""#), [])
        XCTAssertTrue(try text("posts/welcome/index.html").contains(#"<a rel="prev" href="/posts/tables-and-code/">"#))
    }

    func testWithTheFlagADraftIsAPageLikeAnyOtherMarkedAsADraft() throws {
        let summary = try build(drafts: true)
        XCTAssertEqual(summary.drafts, 2)
        XCTAssertEqual(summary.draftsLine, "including 2 drafts (--drafts): build without --drafts for the site you publish")
        // Its page, marked; a page that is no draft is not.
        XCTAssertTrue(try text("posts/secret/index.html").contains(#"<h1>Secret plans<span class="draft">Draft</span></h1>"#))
        XCTAssertTrue(try text("posts/welcome/index.html").contains("<h1>Welcome</h1>"))
        XCTAssertTrue(try text("team/index.html").contains(#"<h1>Team<span class="draft">Draft</span></h1>"#), "Jekyll's published: false")
        XCTAssertTrue(try text("about/index.html").contains("<h1>About</h1>"))
        // In the listing, marked, between the posts it falls between; in its tags' pages; its neighbours link it.
        let home = try text("index.html")
        let secret = try XCTUnwrap(home.range(of: #"<h2><a href="/posts/secret/">Secret plans</a><span class="draft">Draft</span></h2>"#))
        XCTAssertLessThan(try XCTUnwrap(home.range(of: #"<a href="/posts/tables-and-code/">Tables, code and footnotes</a></h2>"#)).lowerBound,
                          secret.lowerBound)
        XCTAssertLessThan(secret.lowerBound, try XCTUnwrap(home.range(of: #"<a href="/posts/welcome/">Welcome</a></h2>"#)).lowerBound)
        XCTAssertTrue(try text("tags/plans/index.html").contains(#"<a href="/posts/secret/">Secret plans</a><span class="draft">Draft</span>"#))
        XCTAssertTrue(try text("tags/news/index.html").contains(#"<a href="/posts/secret/">Secret plans</a><span class="draft">Draft</span>"#))
        XCTAssertTrue(try text("posts/welcome/index.html").contains(#"<a rel="prev" href="/posts/secret/">"#))
        // The feeds and the sitemap carry it, as a preview of the site would.
        XCTAssertEqual(try text("atom.xml").components(separatedBy: "<entry>").count - 1, 3)
        XCTAssertTrue(try text("atom.xml").contains("https://example.org/posts/secret/"))
        XCTAssertTrue(try text("rss.xml").contains("https://example.org/posts/secret/"))
        XCTAssertTrue(try text("sitemap.xml").contains("<loc>https://example.org/posts/secret/</loc>"))
    }

    /// On, off, on again, with edits between: each build's output is what a clean build with its flag writes,
    /// and a flipped flag reads every Markdown file again (the posts' and the pages'), an unflipped one none.
    func testFlippingTheFlagBetweenBuildsWritesWhatACleanBuildWithTheFlagWrites() throws {
        XCTAssertEqual(try build(drafts: true).sourcesRead, 5)
        try scratch.assertSameAsCleanBuild("with drafts", includesDrafts: true)
        waitPastTheClocksTick()
        XCTAssertEqual(try build(drafts: true).sourcesRead, 0, "the same flag, nothing changed: nothing read")

        let off = try build(drafts: false)
        XCTAssertEqual(off.sourcesRead, 5, "the flag flipped: every Markdown file is read again")
        try scratch.assertSameAsCleanBuild("drafts left out")
        XCTAssertFalse(exists("posts/secret/index.html"))

        // A post made a draft while drafts are left out goes; the flag back on brings both drafts back.
        try write("content/posts/welcome.md", try String(contentsOf: site.appendingPathComponent("content/posts/welcome.md"), encoding: .utf8)
            .replacingOccurrences(of: "tags: [news, sitegen]\n", with: "tags: [news, sitegen]\ndraft: yes\n"))
        XCTAssertEqual(try build(drafts: false).sourcesRead, 1)
        try scratch.assertSameAsCleanBuild("a post made a draft, drafts left out")
        XCTAssertFalse(exists("posts/welcome/index.html"))

        let on = try build(drafts: true)
        XCTAssertEqual(on.sourcesRead, 5)
        XCTAssertEqual(on.drafts, 3)
        try scratch.assertSameAsCleanBuild("drafts included again", includesDrafts: true)
        XCTAssertTrue(try text("posts/welcome/index.html").contains(#"<h1>Welcome<span class="draft">Draft</span></h1>"#))
    }

    /// A `--drafts` build after one edit reads one file and looks at the pages it touches, as a build
    /// without the flag does; a watch's session (told the changed file) too.
    func testOneEditUnderTheFlagReadsOneFileAndLooksAtThePagesItTouches() throws {
        XCTAssertTrue(try build(drafts: true).sourcesRead > 0)
        waitPastTheClocksTick()
        try write("content/posts/secret.md", Self.secretPost(body: "Coming soon, with more."))
        let edit = try build(drafts: true)
        XCTAssertEqual(edit.sourcesRead, 1)
        XCTAssertEqual(edit.sourcesUnchanged, 4)
        XCTAssertEqual(edit.drafts, 2)
        // The pages the draft is on (a Markdown listing reads every field, its body too), and its neighbours'.
        let touched = ["index.html", "posts/secret/index.html", "tags/news/index.html", "tags/plans/index.html"]
        XCTAssertLessThanOrEqual(edit.pagesLookedAt, 6, "\(edit.rendered)")
        XCTAssertEqual(edit.rendered.map(\.path).sorted(), touched)
        try scratch.assertSameAsCleanBuild("one draft edited", includesDrafts: true)

        let session = BuildSession()
        _ = try build(drafts: true, session: session)
        waitPastTheClocksTick()
        try write("content/posts/secret.md", Self.secretPost(body: "Coming soon, with even more."))
        let watched = try build(drafts: true, session: session, changed: ["content/posts/secret.md"])
        XCTAssertEqual(watched.sourcesRead, 1)
        XCTAssertLessThanOrEqual(watched.pagesLookedAt, 6, "\(watched.rendered)")
        XCTAssertEqual(watched.rendered.map(\.path).sorted(), touched)
        try scratch.assertSameAsCleanBuild("one draft edited under a watch", includesDrafts: true)
    }

    /// A listing's Markdown report marks a draft by its title, and has no `draft` column.
    func testAListingsMarkdownReportMarksADraftByItsTitle() throws {
        let config = site.appendingPathComponent("sitegen.yml")
        try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "    feeds: [atom, rss]\n", with: "    feeds: [atom, rss]\n    formats: [html, md]\n")
            .write(to: config, atomically: true, encoding: .utf8)
        _ = try build(drafts: true)
        let report = try text("index.md")
        XCTAssertTrue(report.contains("[Secret plans (draft)](https://example.org/posts/secret/)"), report)
        XCTAssertTrue(report.contains("[Welcome](https://example.org/posts/welcome/)"), report)
        XCTAssertFalse(report.lowercased().contains("| draft"), report)
        _ = try build(drafts: false)
        XCTAssertFalse(try text("index.md").contains("Secret plans"))
    }

    /// The `--drafts` build's count follows the drafts as they are made and published.
    func testTheCountOfDraftsFollowsTheirFrontMatter() throws {
        XCTAssertEqual(try build(drafts: true).drafts, 2)
        waitPastTheClocksTick()
        try write("content/pages/team.md", "---\ntitle: Team\n---\nWho we are.\n")
        let published = try build(drafts: true)
        XCTAssertEqual(published.drafts, 1)
        XCTAssertEqual(published.draftsLine, "including 1 draft (--drafts): build without --drafts for the site you publish")
        XCTAssertTrue(try text("team/index.html").contains("<h1>Team</h1>"))
    }

    /// A declared `draft` field must be the bool sitegen fills; another type is an error at its line.
    func testADraftFieldOfAnotherTypeIsAnError() throws {
        let config = site.appendingPathComponent("sitegen.yml")
        let yaml = try String(contentsOf: config, encoding: .utf8)
        try yaml.replacingOccurrences(of: "      tags: list\n", with: "      tags: list\n      draft: text\n").write(to: config, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try SiteBuilder(root: site).build()) { error in
            XCTAssertEqual("\(error)", "sitegen.yml:15:7: 'draft' of Markdown collection 'posts' is sitegen's: true for a draft that a --drafts "
                           + "build publishes; declare it bool, or remove it")
        }
        try yaml.replacingOccurrences(of: "      tags: list\n", with: "      tags: list\n      draft: bool\n").write(to: config, atomically: true, encoding: .utf8)
        XCTAssertEqual(try build(drafts: true).drafts, 2, "declared bool, it is the same field")
    }
}
