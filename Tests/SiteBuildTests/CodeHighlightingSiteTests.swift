import Foundation
@testable import SiteBuild
import SiteRender
import TestSupport
import XCTest

/// Server-side highlighting as a site's reader and author meet it: the pages' markup, `highlight: false`,
/// builds after the setting changes, and a machine without the library's definitions.
final class CodeHighlightingSiteTests: XCTestCase {
    /// A page of the example site with a Python, a shell and a Swift fence (Swift: a language the library
    /// does not know) and one without a language.
    static let page = """
        ---
        title: Code
        ---
        Python:

        ```python
        def total(rows):
            return sum(r.fund for r in rows)  # in dollars
        ```

        Shell:

        ```sh
        sitegen build --output "$HOME/site"
        ls $HOME/site
        ```

        Swift and plain:

        ```swift
        let banks = 3
        ```

        ```
        just <text>
        ```

        """

    private func scratchSite(_ name: String) throws -> ScratchSite {
        let scratch = try ScratchSite(name)
        addTeardownBlock { scratch.remove() }
        try Self.page.write(to: scratch.site.appendingPathComponent("content/pages/code.md"), atomically: true, encoding: .utf8)
        return scratch
    }

    private func setHighlight(_ value: String?, in site: URL) throws {
        let config = site.appendingPathComponent("sitegen.yml")
        var yaml = try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "\nhighlight: true\n", with: "\n")
            .replacingOccurrences(of: "\nhighlight: false\n", with: "\n")
        if let value { yaml = yaml.replacingOccurrences(of: "\ncollections:\n", with: "\nhighlight: \(value)\ncollections:\n") }
        try yaml.write(to: config, atomically: true, encoding: .utf8)
    }

    private func codePage(in site: URL) throws -> String {
        try String(contentsOf: site.appendingPathComponent("output/code/index.html"), encoding: .utf8)
    }

    func testAPagesFencedCodeIsHighlightedByDefault() throws {
        let scratch = try scratchSite("highlight-default")
        let summary = try SiteBuilder(root: scratch.site).build()
        XCTAssertTrue(summary.succeeded)
        XCTAssertEqual(summary.warnings.map(\.description), [])
        let page = try codePage(in: scratch.site)
        XCTAssertTrue(page.contains("<pre><code class=\"language-python\"><span class=\"sg-keyword\">def</span> "
            + "<span class=\"sg-function\">total</span>(rows):\n    <span class=\"sg-keyword\">return</span> "), page)
        XCTAssertTrue(page.contains("<span class=\"sg-comment\"># in dollars</span>\n</code></pre>"), page)
        XCTAssertTrue(page.contains("<pre><code class=\"language-sh\">sitegen build --output <span class=\"sg-string\">&quot;$HOME/site&quot;</span>\n"
            + "ls <span class=\"sg-variable\">$HOME</span>/site\n</code></pre>"), page)
        XCTAssertTrue(page.contains("<pre><code class=\"language-swift\">let banks = 3\n</code></pre>"), page)
        XCTAssertTrue(page.contains("<pre><code>just &lt;text&gt;\n</code></pre>"), page)
    }

    /// `sitegen new`'s post with code shows it coloured, in light and dark, by classes its theme styles.
    func testTheStarterSitesCodeIsHighlightedAndItsThemeStylesTheClasses() throws {
        let site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-highlight-new-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: site) }
        try StarterSite.write(into: site)
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        let post = try String(contentsOf: site.appendingPathComponent("output/posts/tables-and-code/index.html"), encoding: .utf8)
        XCTAssertTrue(post.contains("<pre><code class=\"language-python\"><span class=\"sg-keyword\">def</span> "
            + "<span class=\"sg-function\">greet</span>(name):"), post)
        XCTAssertTrue(post.contains("<pre><code class=\"language-sh\">sitegen build --output <span class=\"sg-string\">"), post)
        for name in Set(CodeHighlighter.classes.map(\.value)).sorted() {
            XCTAssertEqual(post.components(separatedBy: ".\(name){").count - 1, 2, "\(name) styled for light and dark")
        }
    }

    func testHighlightFalseLeavesEveryBlockForABrowserHighlighter() throws {
        let scratch = try scratchSite("highlight-off")
        try setHighlight("false", in: scratch.site)
        XCTAssertTrue(try SiteBuilder(root: scratch.site).build().succeeded)
        let page = try codePage(in: scratch.site)
        XCTAssertFalse(page.contains("<span class=\"sg-"), page)
        XCTAssertTrue(page.contains("<pre><code class=\"language-python\">def total(rows):\n    return sum(r.fund for r in rows)  # in dollars\n</code></pre>"), page)
        XCTAssertTrue(page.contains("<pre><code class=\"language-sh\">sitegen build --output &quot;$HOME/site&quot;\nls $HOME/site\n</code></pre>"), page)
    }

    /// The setting is one of every page's inputs: turned off and on again, each build writes what a clean build does.
    func testTurningHighlightingOffAndOnBuildsWhatACleanBuildWrites() throws {
        let scratch = try scratchSite("highlight-flip")
        XCTAssertTrue(try SiteBuilder(root: scratch.site).build().succeeded)
        for value in ["false", "true", nil, "false"] as [String?] {
            try setHighlight(value, in: scratch.site)
            let summary = try SiteBuilder(root: scratch.site).build()
            XCTAssertTrue(summary.succeeded)
            XCTAssertEqual(try codePage(in: scratch.site).contains("<span class=\"sg-keyword\">def</span>"), value != "false")
            try scratch.assertSameAsCleanBuild("highlight: \(value ?? "(unset)")")
        }
    }

    /// A binary on a machine without source-highlight's definitions (here: the library pointed elsewhere)
    /// builds every page, unhighlighted, and says why once.
    func testWithoutTheLibrarysDefinitionsTheBuildWarnsOnceAndSucceeds() throws {
        let scratch = try scratchSite("highlight-missing")
        let executable = Bundle(for: Self.self).bundleURL.deletingLastPathComponent().appendingPathComponent("sitegen")
        let bundled = Bundle(for: Self.self).bundleURL.appendingPathComponent("sitegen")
        let output = try ProcessOutput.of(FileManager.default.isExecutableFile(atPath: bundled.path) ? bundled : executable, ["build"],
                                          in: scratch.site, environment: ["SOURCE_HIGHLIGHT_DATADIR": "/nonexistent/source-highlight"])
        XCTAssertEqual(output.status, 0, output.stderr)
        let said = output.stdout + output.stderr
        XCTAssertEqual(said.components(separatedBy: "fenced code is not highlighted").count - 1, 1, said)
        XCTAssertTrue(said.contains("/nonexistent/source-highlight"), said)
        let page = try codePage(in: scratch.site)
        XCTAssertFalse(page.contains("<span class=\"sg-"), page)
        XCTAssertTrue(page.contains("<pre><code class=\"language-python\">def total(rows):\n"), page)
    }
}
