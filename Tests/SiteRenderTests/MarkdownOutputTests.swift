import XCTest
@testable import SiteRender

/// What a Markdown body's HTML looks like where users bring tools and habits of their own.
final class MarkdownOutputTests: XCTestCase {
    /// Prism and highlight.js colour `<code class="language-…">`; GitHub's `<pre lang>` form left them bare.
    func testFencedCodeCarriesItsLanguageAsAClass() {
        let html = MarkdownRenderer().html("```python\nprint(1)\n```\n")
        XCTAssertEqual(html, "<pre><code class=\"language-python\">print(1)\n</code></pre>\n")
    }

    /// A site published under a path (a GitHub Pages project site): links and images written from the
    /// site's root lead under that path, as the site's own links do; others are left as written.
    func testLinksFromTheSitesRootLeadUnderItsPath() {
        let markdown = "[About](/about/) ![Map](/img/map.png) [Here](/project/x/) [Far](//cdn.example.org/a) [Rel](notes/) "
            + "[Abs](https://e.org/) [Top](#top) <https://auto.example/>\n\n[ref]: /refs/\n\n[By ref][ref]\n"
        XCTAssertEqual(MarkdownRenderer(basePath: "/project/").html(markdown),
                       "<p><a href=\"/project/about/\">About</a> <img src=\"/project/img/map.png\" alt=\"Map\" /> <a href=\"/project/x/\">Here</a> "
                       + "<a href=\"//cdn.example.org/a\">Far</a> <a href=\"notes/\">Rel</a> <a href=\"https://e.org/\">Abs</a> <a href=\"#top\">Top</a> "
                       + "<a href=\"https://auto.example/\">https://auto.example/</a></p>\n<p><a href=\"/project/refs/\">By ref</a></p>\n")
        XCTAssertTrue(MarkdownRenderer().html("[About](/about/)").contains("href=\"/about/\""), "at the host's root, as written")
        XCTAssertEqual(MarkdownRenderer(basePath: "/project/").html("[Home](/project) [Q](/project?x=1) [F](/project#top) [P](/projects/)"),
                       "<p><a href=\"/project\">Home</a> <a href=\"/project?x=1\">Q</a> <a href=\"/project#top\">F</a> "
                       + "<a href=\"/project/projects/\">P</a></p>\n", "the base itself is under it")
    }

    /// Footnotes, as GitHub renders them: a numbered reference and a list at the end linking back.
    func testFootnotesRenderAsReferencesAndANoteList() {
        let html = MarkdownRenderer().html("A claim.[^1]\n\n[^1]: The source.\n")
        XCTAssertFalse(html.contains("[^1]"), html)
        XCTAssertTrue(html.contains("<sup class=\"footnote-ref\"><a href=\"#fn-1\" id=\"fnref-1\" data-footnote-ref>1</a></sup>"), html)
        XCTAssertTrue(html.contains("<li id=\"fn-1\">"), html)
        XCTAssertTrue(html.contains("The source."), html)
        XCTAssertTrue(html.contains("href=\"#fnref-1\""), html)
    }
}
