import XCTest
@testable import SiteRender

/// What a Markdown body's HTML looks like where users bring tools and habits of their own.
final class MarkdownOutputTests: XCTestCase {
    /// Prism and highlight.js colour `<code class="language-…">`; GitHub's `<pre lang>` form left them bare.
    func testFencedCodeCarriesItsLanguageAsAClass() {
        let html = MarkdownRenderer().html("```python\nprint(1)\n```\n")
        XCTAssertEqual(html, "<pre><code class=\"language-python\">print(1)\n</code></pre>\n")
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
