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
        XCTAssertTrue(home.contains(#"<time datetime="2026-01-02T09:00:00Z">2 January 2026</time>"#))
        // The menu has the listings and the About page; the post links its tags' pages, which list it.
        XCTAssertTrue(home.contains(#"<a href="/" aria-current="page">Posts</a><a href="/tags/">Tags</a><a href="/about/">About</a>"#))
        let post = try text("posts/welcome/index.html", in: output)
        XCTAssertTrue(post.contains(#"Tags: <a href="/tags/news/">news</a> <a href="/tags/sitegen/">sitegen</a>"#))
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
