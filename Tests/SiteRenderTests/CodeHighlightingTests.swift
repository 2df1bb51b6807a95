import Foundation
import XCTest
@testable import SiteRender

/// Fenced code as a reader's browser gets it with server-side highlighting (GNU source-highlight): tokens in
/// `sg-` spans inside the same `<pre><code class="language-…">`, every character of the code escaped.
final class CodeHighlightingTests: XCTestCase {
    let highlighted = MarkdownRenderer(highlighter: .shared)

    override func setUp() {
        // scripts/install-deps installs the definitions with the library: without them every test here fails.
        XCTAssertNil(CodeHighlighter.shared.problem)
    }

    func testAPythonFenceHasItsTokensInSpansInsideTheSameCodeElement() {
        let html = highlighted.html("```python\ndef area(r):\n    return 3.14 * r * r  # a circle\n```\n")
        XCTAssertEqual(html, "<pre><code class=\"language-python\"><span class=\"sg-keyword\">def</span> "
            + "<span class=\"sg-function\">area</span>(r):\n    <span class=\"sg-keyword\">return</span> "
            + "<span class=\"sg-number\">3.14</span> * r * r  <span class=\"sg-comment\"># a circle</span>\n</code></pre>\n")
    }

    func testAShellFenceHasItsKeywordsVariablesAndStringsInSpans() {
        let html = highlighted.html("```sh\nfor f in *.md; do\n  echo \"$f\" $HOME\ndone\n```\n")
        XCTAssertTrue(html.hasPrefix("<pre><code class=\"language-sh\">"), html)
        XCTAssertTrue(html.contains("<span class=\"sg-keyword\">for</span>"), html)
        XCTAssertTrue(html.contains("<span class=\"sg-keyword\">done</span>"), html)
        XCTAssertTrue(html.contains("<span class=\"sg-variable\">$HOME</span>"), html)
        XCTAssertTrue(html.contains("<span class=\"sg-string\">&quot;$f&quot;</span>"), html)
    }

    /// A language the library has no definition for (Swift, in Debian 12's 3.1.9), a fence without a
    /// language and `txt` are written exactly as without highlighting.
    func testUnknownLanguagesAndBareFencesAreLeftAsTheyWere() {
        for markdown in ["```swift\nlet x = \"a\" // b\n```\n", "```\nif x { y }\n```\n", "```no-such-language\nx = 1\n```\n",
                         "```txt\nplain <text>\n```\n", "    indented = 1 # code\n", "- item\n\n  ```foo\n  bar\n  ```\n"] {
            XCTAssertEqual(highlighted.html(markdown), MarkdownRenderer().html(markdown), markdown)
            XCTAssertFalse(highlighted.html(markdown).contains("<span"), markdown)
        }
    }

    /// Code that closes the code element and opens a script, in every kind of token, is text on the page:
    /// with raw HTML allowed too, which is about the Markdown's own HTML, never a code block's.
    func testHostileCodeIsEscapedWhateverTokenItIsIn() {
        let hostile = "</code><script>alert(\"x\")</script> & <b>"
        let markdown = "```python\n\(hostile)\n# \(hostile)\ns = '\(hostile)'\n\"\"\"\n\(hostile)\n\"\"\"\n```\n\n"
            + "```sh\necho \"\(hostile)\" # \(hostile)\n```\n\n```html\n\(hostile)\n```\n"
        for renderer in [highlighted, MarkdownRenderer(allowsRawHTML: true, highlighter: .shared)] {
            let html = renderer.html(markdown)
            XCTAssertFalse(html.contains("<script"), html)
            XCTAssertFalse(html.contains("<b>"), html)
            XCTAssertEqual(html.components(separatedBy: "</code>").count, 4, "three code elements, each closed once: \(html)")
            XCTAssertTrue(html.contains("&lt;/code&gt;&lt;script&gt;alert(&quot;x&quot;)"), html)
            // The text a reader sees is the code as written.
            let text = html.replacingOccurrences(of: "<[^>]+>", with: "", options: .regularExpression)
            XCTAssertEqual(text.components(separatedBy: "&lt;/code&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;").count - 1, 7, "each of the seven as written: \(text)")
        }
    }

    /// A docstring over three lines is a string on each line, and the lines stay in their order.
    func testAStringOverSeveralLinesKeepsItsLinesInOrder() {
        let html = highlighted.html("```python\nx = \"\"\"one\ntwo\nthree\"\"\"\ny = 2\n```\n")
        let text = html.replacingOccurrences(of: "<[^>]+>", with: "", options: .regularExpression)
        XCTAssertEqual(text, "x = &quot;&quot;&quot;one\ntwo\nthree&quot;&quot;&quot;\ny = 2\n\n", html)
        XCTAssertTrue(html.contains("<span class=\"sg-string\">two</span>"), html)
    }

    /// Headings keep their ids, and code holding heading tags does not take one.
    func testHeadingsKeepTheirIdsAroundHighlightedCode() {
        let html = highlighted.html("## Setup\n\n```python\n# <h2>not a heading</h2>\n```\n\n## Run\n")
        XCTAssertTrue(html.hasPrefix("<h2 id=\"setup\">Setup</h2>\n<pre><code class=\"language-python\"><span class=\"sg-comment\">"), html)
        XCTAssertTrue(html.hasSuffix("</code></pre>\n<h2 id=\"run\">Run</h2>\n"), html)
    }

    /// A fence's language as written keeps its class; the library's name is found in lower case.
    func testALanguageInCapitalsIsHighlightedAndKeepsItsClass() {
        let html = highlighted.html("```Python\nimport os\n```\n")
        XCTAssertEqual(html, "<pre><code class=\"language-Python\"><span class=\"sg-meta\">import</span> os\n</code></pre>\n")
    }

    /// A template's `{{{markdown(notes)}}}` highlights as a page's body does, when the site does.
    func testTheMarkdownHelperHighlightsWhenTheSiteDoes() {
        let notes = "```python\nx = 1\n```\n"
        let on = TemplateText.Site(baseURL: "/", allowsRawHTML: false, highlighter: .shared)
        let off = TemplateText.Site(baseURL: "/", allowsRawHTML: false)
        XCTAssertEqual(TemplateText(notes, site: on).helper("markdown"),
                       "<pre><code class=\"language-python\">x = <span class=\"sg-number\">1</span>\n</code></pre>\n")
        XCTAssertEqual(TemplateText(notes, site: off).helper("markdown"), "<pre><code class=\"language-python\">x = 1\n</code></pre>\n")
    }

    /// Without the library's definitions (a binary copied to another machine), nothing is highlighted and
    /// the reason is told; nothing fails.
    func testMissingDefinitionsLeaveCodeAsItWas() throws {
        let missing = CodeHighlighter(dataDirectory: "/nonexistent/source-highlight")
        let problem = try XCTUnwrap(missing.problem)
        XCTAssertTrue(problem.contains("lang.map"), problem)
        XCTAssertTrue(missing.languages.isEmpty)
        let markdown = "```python\nprint(1)\n```\n"
        XCTAssertEqual(MarkdownRenderer(highlighter: missing).html(markdown), MarkdownRenderer().html(markdown))
    }

    /// Pages render on several threads at once, each taking a library highlighter of its own from the pool
    /// (or waiting for one, at the limit): every page is as one thread alone writes it.
    func testHighlightingOnManyThreadsAtOnceGivesWhatOneThreadGives() {
        let markdown = (0..<20).map { "```\(["python", "sh", "c", "java"][$0 % 4])\nif (x == \($0)) { y = \"s\" } // c\n```\n" }.joined(separator: "\n")
        let expected = highlighted.html(markdown)
        for limit in [1, 3] {
            let renderer = MarkdownRenderer(highlighter: CodeHighlighter(limit: limit))
            let results = UnsafeMutableBufferPointer<String>.allocate(capacity: 64)
            results.initialize(repeating: "")
            defer { results.deallocate() }
            nonisolated(unsafe) let slots = results
            DispatchQueue.concurrentPerform(iterations: 64) { slots[$0] = renderer.html(markdown) }
            XCTAssertEqual(Set(results), [expected], "limit \(limit)")
        }
    }
}
