import Foundation
@testable import SiteRender
import TestSupport
import XCTest

final class MarkdownRendererTests: XCTestCase {
    /// A report cell renders on GitHub as the text it holds: an address stays a working link, and marks
    /// Markdown would read (strikethrough, entities, math) stay characters.
    func testAReportCellRendersAsTheTextItHoldsAndItsWebAddressesAsLinks() {
        let cells = ["See https://data.example.gov/raw_data/file_v2.csv.", "~~draft~~ R&amp;D for $5 and $10", "a|b http://x.org/a|b"]
        let table = MarkdownReport.table(headers: ["text"], rows: cells.map { [MarkdownReport.cell($0)] })
        let html = MarkdownRenderer().html(table)
        XCTAssertTrue(html.contains(#"<td>See <a href="https://data.example.gov/raw_data/file_v2.csv">https://data.example.gov/raw_data/file_v2.csv</a>.</td>"#), html)
        XCTAssertTrue(html.contains("<td>~~draft~~ R&amp;amp;D for $5 and $10</td>"), html)
        XCTAssertTrue(html.contains(#"<td>a|b <a href="http://x.org/a%7Cb">http://x.org/a|b</a></td>"#), html)
        XCTAssertEqual(MarkdownReport.cell("line\nbreak https://"), "line break https://", "too short to be an address")
        XCTAssertEqual(MarkdownReport.cell("a\r\nb"), "a b", "a Windows line end keeps the row on one line")
        XCTAssertEqual(MarkdownReport.cell("(see https://x.org/raw_data/a_(b)_c)."), #"(see <https://x.org/raw_data/a_(b)_c>)."#,
                       "the sentence's brackets stay out of the address, its own stay in")
        // A link's text holds no link: a record titled by its address links to its page.
        let link = MarkdownReport.link("https://x.org/a_b", "https://m.example.org/things/g/")
        XCTAssertEqual(link, #"[https://x.org/a\_b](https://m.example.org/things/g/)"#)
        XCTAssertTrue(MarkdownRenderer().html(link).contains(#"<a href="https://m.example.org/things/g/">https://x.org/a_b</a>"#))
    }

    func testABarChartCutsALabelTooWideForItsRoomAndShowsItWholeOnHover() {
        let long = "Federal Reserve Bank of Saint Louis Eighth District"
        let svg = BarChart(title: "By district", bars: [.init(label: "CA", value: 3), .init(label: long, value: 5),
                                                        .init(label: String(repeating: "東", count: 20), value: 1)]).svg()
        XCTAssertTrue(svg.contains(">CA</text>"), svg)
        XCTAssertTrue(svg.contains("<title>\(long)</title>Federal Reserve…</text>"), svg)
        XCTAssertTrue(svg.contains("<title>\(String(repeating: "東", count: 20))</title>\(String(repeating: "東", count: 10))…</text>"), svg)
    }

    func testHeadingsGetGitHubStyleAnchorsAndRawHTMLInThemStaysWithheld() {
        let markdown = "# Intro\n\n## Closing date\n\ntext\n\n## Closing date\n\n### `cert` & <b>x</b> Ünïcode: 2024!\n"
        XCTAssertEqual(MarkdownRenderer().html(markdown), """
            <h1 id="intro">Intro</h1>
            <h2 id="closing-date">Closing date</h2>
            <p>text</p>
            <h2 id="closing-date-1">Closing date</h2>
            <h3 id="cert--x-ünïcode-2024"><code>cert</code> &amp; <!-- raw HTML omitted -->x<!-- raw HTML omitted --> Ünïcode: 2024!</h3>

            """)
        XCTAssertTrue(MarkdownRenderer(allowsRawHTML: true).html("## a <b>b</b>").hasPrefix(#"<h2 id="a-b">a <b>b</b></h2>"#))
    }

    func testARepeatedHeadingTakesTheNextIDNoOtherHeadingHasAsGitHubGivesIt() {
        let html = MarkdownRenderer().html("## Intro\n\n## Intro\n\n## Intro 1\n\n## Intro\n")
        XCTAssertEqual(html.components(separatedBy: "id=\"").dropFirst().map { $0.prefix { $0 != "\"" } },
                       ["intro", "intro-1", "intro-1-1", "intro-2"])
    }

    func testQuotesAndDashesStayAsWrittenAsGitHubKeepsThem() {
        XCTAssertEqual(MarkdownRenderer().html("Use --full or \"quotes\" -- isn't it...\n"),
                       "<p>Use --full or &quot;quotes&quot; -- isn't it...</p>\n")
    }

    func testHeadingsInsideQuotesAndListsAreAnchoredInDocumentOrderAndTableCellsAreNotHeadings() {
        let markdown = "> ## Notes\n>\n> - ## Notes\n\n1. item\n\n   ### Deep *one*\n\n## Notes\n\n| Notes |\n|---|\n| ## x |\n"
        XCTAssertEqual(MarkdownRenderer().html(markdown), """
            <blockquote>
            <h2 id="notes">Notes</h2>
            <ul>
            <li>
            <h2 id="notes-1">Notes</h2>
            </li>
            </ul>
            </blockquote>
            <ol>
            <li>
            <p>item</p>
            <h3 id="deep-one">Deep <em>one</em></h3>
            </li>
            </ol>
            <h2 id="notes-2">Notes</h2>
            <table>
            <thead>
            <tr>
            <th>Notes</th>
            </tr>
            </thead>
            <tbody>
            <tr>
            <td>## x</td>
            </tr>
            </tbody>
            </table>

            """)
    }

    /// Ids go into a page two ways: into the rendered HTML (no raw HTML allowed, so an `<hN>` there is
    /// a heading's) and into the document before rendering (raw HTML allowed, or the tags do not match).
    /// Where raw HTML is withheld, the first must work and give the second's bytes, whatever the headings
    /// hold, where they are, and whatever raw HTML the page tries to slip in.
    /// A line of 100,000 list markers nests as many blocks: looking for headings among them took a call
    /// per level and overflowed the stack (the build died with SIGSEGV, naming no file).
    func testHeadingsAreFoundUnderBlocksNestedDeeperThanAStackCouldRecurse() {
        let html = MarkdownRenderer().html(String(repeating: "- ", count: 100_000) + "# Deep\n\n## After\n")
        XCTAssertTrue(html.contains(#"<h1 id="deep">Deep</h1>"#))
        XCTAssertTrue(html.hasSuffix("<h2 id=\"after\">After</h2>\n"), String(html.suffix(80)))
        XCTAssertEqual(html.components(separatedBy: "<ul>").count - 1, 100_000)
    }

    func testAnASCIIHeadingsAnchorIsWhatUnicodesRulesMakeOfIt() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        for _ in 0..<2_000 {
            let text = String(decoding: (0..<Int.random(in: 0...24, using: &random)).map { _ in UInt8.random(in: 0...127, using: &random) },
                              as: UTF8.self)
            XCTAssertEqual(MarkdownRenderer.slug(text), MarkdownRenderer.unicodeSlug(text), "seed \(seed): \(Array(text.utf8))")
        }
        XCTAssertEqual(MarkdownRenderer.slug("Ünïcode: 2024!"), "ünïcode-2024")
    }

    func testHeadingIDsAreTheSameWhetherAddedToTheHTMLOrToTheDocument() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let texts = ["Notes", "Closing date", "`<h2>` tag", "a \\<h1\\> b", "[link](https://x.org/<h3> \"t <h4>\")",
                     "*Ünïcode* 2024!", "~~old~~ new", "x_y_z", "", "   ", "Notes", "<https://example.org/h1>", "1 < 2 > 0",
                     "raw <h2>inline</h2>", "![alt <h5>](i.png \"<h6>\")"]
        let blocks = ["para with `<h5>` code", "```\n<h2>not a heading</h2>\n```", "> quoted", "- item", "1. one",
                      "| a | b |\n|---|---|\n| <h1> | ## x |", "---", "text <h6 and h1>", "<h2>raw block</h2>",
                      "<div>\n<h3>in a div</h3>\n</div>"]
        let renderer = MarkdownRenderer()
        for _ in 0..<300 {
            var document = ""
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let text = texts.randomElement(using: &random)!
                switch Int.random(in: 0..<6, using: &random) {
                case 0: document += String(repeating: "#", count: Int.random(in: 1...6, using: &random)) + " \(text)\n\n"
                case 1: document += "\(text.isEmpty ? "x" : text)\n" + (Bool.random(using: &random) ? "===" : "---") + "\n\n"
                case 2: document += "> ## \(text)\n\n"
                case 3: document += "- ### \(text)\n\n"
                default: document += blocks.randomElement(using: &random)! + "\n\n"
                }
            }
            let inHTML = renderer.render(document, idsInHTML: true), inDocument = renderer.render(document, idsInHTML: false)
            XCTAssertEqual(inHTML, inDocument, "seed \(seed), document:\n\(document)")
            XCTAssertEqual(inHTML, renderer.html(document))
            // One failing document is enough to read.
            if inHTML != inDocument { return }
        }
        let tricky = "<h2>raw</h2>\n\n## Real\n\n| <h1> | b |\n|---|---|\n| c | d |\n\ntext <h6 and h1> `<h3>`\n"
        XCTAssertEqual(renderer.render(tricky, idsInHTML: true), """
            <!-- raw HTML omitted -->
            <h2 id="real">Real</h2>
            <table>
            <thead>
            <tr>
            <th><!-- raw HTML omitted --></th>
            <th>b</th>
            </tr>
            </thead>
            <tbody>
            <tr>
            <td>c</td>
            <td>d</td>
            </tr>
            </tbody>
            </table>
            <p>text <!-- raw HTML omitted --> <code>&lt;h3&gt;</code></p>

            """)
        // With raw HTML allowed its tags would be counted as headings: the ids must go into the document.
        XCTAssertNil(MarkdownRenderer(allowsRawHTML: true).render(tricky, idsInHTML: true))
        XCTAssertTrue(MarkdownRenderer(allowsRawHTML: true).html(tricky).contains("<h2>raw</h2>\n<h2 id=\"real\">Real</h2>"))
    }

    func testGFMTablesStrikethroughTaskListsAndAutolinksRender() {
        let html = MarkdownRenderer().html("""
            | a | b |
            |---|--:|
            | 1 | 2 |

            ~~old~~ new

            - [x] done
            - [ ] todo

            See https://example.org.
            """)
        XCTAssertTrue(html.contains("<table>"), html)
        // HTML5 has no `align`: the alignment is a style.
        XCTAssertTrue(html.contains("<td style=\"text-align: right\">2</td>"), html)
        XCTAssertTrue(html.contains("<del>old</del>"), html)
        XCTAssertTrue(html.contains("<input type=\"checkbox\" checked=\"\" disabled=\"\" /> done"), html)
        XCTAssertTrue(html.contains("<a href=\"https://example.org\">https://example.org</a>"), html)
    }

    /// Render workers parse Markdown at once; cmark-gfm's shared table of special characters once made
    /// pages lose their strikethrough and autolinks now and then.
    func testMarkdownRendersTheSameOnManyThreadsAtOnce() {
        let documents = (0..<64).map { "Item \($0): ~~old~~ new, see https://example.org/\($0) and www.example.com.\n\n| a | b |\n|---|---|\n| ~~\($0)~~ | x |\n" }
        let renderer = MarkdownRenderer()
        let expected = documents.map(renderer.html)
        XCTAssertTrue(expected[0].contains("<del>old</del>") && expected[0].contains("<a href=\"https://example.org/0\">"))
        nonisolated(unsafe) let results = UnsafeMutableBufferPointer<String>.allocate(capacity: documents.count * 20)
        results.initialize(repeating: "")
        defer { results.deallocate() }
        DispatchQueue.concurrentPerform(iterations: results.count) { index in
            results[index] = renderer.html(documents[index % documents.count])
        }
        for index in results.indices where results[index] != expected[index % documents.count] {
            XCTFail("render \(index) differs from the serial one:\n\(results[index])")
            break
        }
    }

    func testRawHTMLIsOmittedUnlessAllowed() {
        let markdown = "<script>alert(1)</script>\n\nText <b>bold</b>\n\n<iframe src=\"https://www.youtube.com/embed/x\"></iframe>\n"
        let safe = MarkdownRenderer().html(markdown)
        XCTAssertFalse(safe.contains("<script>"), safe)
        XCTAssertFalse(safe.contains("<b>"), safe)
        XCTAssertFalse(safe.contains("<iframe"), safe)
        // A site that turns raw HTML on gets its embeds as written, as Hugo's `unsafe` and Jekyll publish them.
        let unsafe = MarkdownRenderer(allowsRawHTML: true).html(markdown)
        XCTAssertTrue(unsafe.contains("<b>bold</b>"), unsafe)
        XCTAssertTrue(unsafe.contains("<script>alert(1)</script>"), unsafe)
        XCTAssertTrue(unsafe.contains("<iframe src=\"https://www.youtube.com/embed/x\"></iframe>"), unsafe)
    }
}

final class TemplateSetTests: XCTestCase {
    private func folder(_ files: [String: String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        for (name, text) in files { try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return folder
    }

    func testLayoutsPartialsAndEscaping() throws {
        let templates = try TemplateSet(directory: folder([
            "base.mustache": "<title>{{title}}</title>{{$content}}{{/content}}",
            "item.mustache": "<li>{{name}}</li>",
            "list.mustache": "{{<base}}{{$content}}<ul>{{#items}}{{>item}}{{/items}}</ul>{{/content}}{{/base}}",
        ]))
        let html = try templates.render("list", context: ["title": "A & <B>", "items": [["name": "x<y"], ["name": "z"]]])
        XCTAssertEqual(html, "<title>A &amp; &lt;B&gt;</title><ul><li>x&lt;y</li><li>z</li></ul>")
    }

    func testARecordTextFitsInAnAnyWithoutABox() {
        // Every field of every row presented is a text stored as `Any`: larger than three words, each
        // would be boxed on the heap.
        XCTAssertLessThanOrEqual(MemoryLayout<TemplateText>.size, 3 * MemoryLayout<Int>.size)
    }

    func testRecordTextsCarryHelpersAsTransforms() throws {
        let templates = try TemplateSet(directory: folder([
            "page.mustache": """
                {{date(d)}}|{{month(t)}}|{{year(d)}}|{{number(n)}}|{{number(x)}}|{{excerpt(long)}}|{{{markdown(m)}}}|\
                {{absolute(u)}}|{{json(q)}}|{{xml(q)}}|{{uppercased(q)}}|{{d}}|{{#d}}[{{site}}]{{/d}}|{{date(q)}}
                """,
        ]))
        let site = TemplateText.Site(baseURL: "https://x.org/sub/", allowsRawHTML: false)
        func text(_ value: String) -> TemplateText { TemplateText(value, site: site) }
        let long = "**Deposits** of <b>many</b> dollars " + String(repeating: "were assumed again ", count: 12)
        let html = try templates.render("page", context: [
            "d": text("2024-02-20"), "t": text("2023-11-03T10:00:00Z"), "n": text("185500000"), "x": text("-1234.5"),
            "long": text(long), "m": text("## Hi\n\n*a* <i>b</i>"), "u": text("/sub/banks/1/"), "q": text("say \"hi\" & go"),
            "site": "S",
        ])
        let excerpt = TemplateText.excerpt(long, limit: 160)
        XCTAssertTrue(excerpt.hasPrefix("Deposits of many dollars were assumed"))
        XCTAssertTrue(excerpt.hasSuffix("again…") && excerpt.count <= 161, excerpt)
        XCTAssertEqual(TemplateText.excerpt("<p>5 &lt; 6 &amp;&nbsp;caf&#233; &#xE9; AT&T; &bogus;</p>", limit: 160),
                       "5 < 6 & café é AT&T; &bogus;", "an HTML summary's references are its characters")
        XCTAssertEqual(TemplateText.excerpt("# Notes\nDeposits < $1 million in `snake_case_field` for C# and 5 * 3, see [FDIC notice](https://f.gov/x) "
                                            + "![chart](c.png) and __bold__ *it*.\n> quoted [1]", limit: 160),
                       "Notes Deposits < $1 million in snake_case_field for C# and 5 * 3, see FDIC notice chart and bold it. quoted 1",
                       "marks go only where Markdown reads them")
        XCTAssertEqual(TemplateText.excerpt(String(repeating: "x", count: 200), limit: 160), String(repeating: "x", count: 160) + "…")
        XCTAssertEqual(TemplateText.excerpt("~~old~~ new\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n\n- [ ] todo\n- [x] done\n1. first\n\n"
                                            + "```swift\nlet x = 1\n```\n***\nSee[^1] and a~b.\n\n[^1]: note\n", limit: 160),
                       "old new a b 1 2 todo done first let x = 1 See and a~b.", "GitHub's marks go too")
        XCTAssertEqual(TemplateText.excerpt("about ~30 °C", limit: 160), "about ~30 °C", "a lone tilde is text")
        XCTAssertEqual(TemplateText.groupedNumber("1e+20"), "1e+20", "no groups in an exponent")
        XCTAssertEqual(TemplateText.groupedNumber("1234567.25"), "1,234,567.25")
        XCTAssertEqual(TemplateText.groupedNumber("02134"), "02134", "a ZIP code is no quantity")
        XCTAssertEqual(TemplateText.calendarText("2024-02-29", style: "date"), "29 February 2024")
        XCTAssertEqual(TemplateText.calendarText("2023-02-29", style: "date"), "2023-02-29", "no such day: as written")
        XCTAssertEqual(TemplateText.calendarText("2024-04-31T10:00:00Z", style: "year"), "2024-04-31T10:00:00Z")
        XCTAssertEqual(TemplateText.calendarText("03/04/2024", style: "year"), "03/04/2024", "a text field's other forms are as written")
        // With a site's timeZone, a datetime (stored in UTC) is dated on the day it was there: a New Year
        // post written at half past midnight in Paris was dated the year before.
        let paris = TemplateText.Site(baseURL: "/", allowsRawHTML: false, timeZone: TimeZone(identifier: "Europe/Paris"))
        let newYork = TemplateText.Site(baseURL: "/", allowsRawHTML: false, timeZone: TimeZone(identifier: "America/New_York"))
        XCTAssertEqual(TemplateText("2023-12-31T23:30:00Z", site: paris).helper("year"), "2024")
        XCTAssertEqual(TemplateText("2023-12-31T23:30:00.250Z", site: paris).helper("date"), "1 January 2024", "fractions of a second")
        XCTAssertEqual(TemplateText("2024-03-01T03:00:00Z", site: newYork).helper("date"), "29 February 2024", "back over a leap day")
        XCTAssertEqual(TemplateText("2024-07-01T03:00:00Z", site: newYork).helper("date"), "30 June 2024", "summer time: four hours")
        XCTAssertEqual(TemplateText("1969-12-31T23:00:00Z", site: newYork).helper("date"), "31 December 1969", "before 1970")
        XCTAssertEqual(TemplateText("2023-12-31T23:30:00Z", site: TemplateText.Site(baseURL: "/", allowsRawHTML: false)).helper("year"),
                       "2023", "no zone: UTC, as stored")
        XCTAssertEqual(TemplateText("2024-01-01", site: newYork).helper("date"), "1 January 2024", "a date has no zone")
        XCTAssertEqual(TemplateText("2024-02-30T10:00:00Z", site: newYork).helper("date"), "2024-02-30T10:00:00Z", "no such day: as written")
        XCTAssertEqual(TemplateText.groupedNumber("-00501"), "-00501")
        XCTAssertEqual(TemplateText.groupedNumber("0.25"), "0.25")
        XCTAssertEqual(html, "20 February 2024|November 2023|2024|185,500,000|-1,234.5|\(excerpt.replacingOccurrences(of: "…", with: "…"))|"
            + "<h2 id=\"hi\">Hi</h2>\n<p><em>a</em> <!-- raw HTML omitted -->b<!-- raw HTML omitted --></p>\n|"
            + "https://x.org/sub/banks/1/|&quot;say \\&quot;hi\\&quot; \\u0026 go&quot;|say &amp;quot;hi&amp;quot; &amp;amp; go|"
            + "SAY &quot;HI&quot; &amp; GO|2024-02-20|[S]|say &quot;hi&quot; &amp; go")
    }

    func testANameNoScopeHasIsAnErrorAtItsTemplateLineButAnOptionalOneIsNot() throws {
        let directory = try folder([
            "base.mustache": "<h1>{{title}}</h1>{{$content}}{{/content}}",
            "page.mustache": "{{<base}}{{$content}}\n{{#items}}\n  <li>{{name}} {{city}}{{#acquirer}}, {{acquirer}}{{/acquirer}}</li>\n{{/items}}{{/content}}{{/base}}",
            "typo.mustache": "{{#items}}\n<li>{{name}}</li>\n<li>{{date(clossing)}}</li>{{/items}}",
        ])
        let templates = try TemplateSet(directory: directory)
        let context: [String: Any] = ["title": "T", "items": [["name": "A", "city": "X", "acquirer": "Y"], ["name": "B", "city": "Z"]]]
        XCTAssertEqual(try templates.render("page", context: context, knownNames: ["acquirer", "title"]),
                       "<h1>T</h1>  <li>A X, Y</li>\n  <li>B Z</li>\n", "a field null in one row is fine when it is known")
        XCTAssertThrowsError(try templates.render("page", context: context, knownNames: ["title"])) { error in
            XCTAssertEqual(error as? TemplateError, .unknownVariable(name: "acquirer", file: directory.appendingPathComponent("page.mustache").path, line: 3, column: 24))
        }
        XCTAssertThrowsError(try templates.render("typo", context: context, knownNames: ["title"])) { error in
            XCTAssertEqual((error as? TemplateError)?.description,
                           directory.appendingPathComponent("typo.mustache").path + ":3:5: 'clossing' is not a field or a value this page has; check its spelling")
        }
    }

    func testARecordsFieldUsedWhereNoRecordIsOpenIsAnErrorButALackingRecordIsNot() throws {
        let directory = try folder([
            "detail.mustache": "<h1>{{title}}</h1>\n{{#record}}{{city}}{{acquirer}}{{/record}}|{{record.acquirer}}",
            "outside.mustache": "<h1>{{title}}</h1>\n<p>{{city}}</p>",
            "list.mustache": "{{#items}}{{city}}{{acquirer}};{{/items}}{{#pagination}}{{acquirer}}{{/pagination}}",
        ])
        let templates = try TemplateSet(directory: directory)
        let record = TemplateRecord(names: ["city", "acquirer"], values: ["X", nil])
        let known: Set<String> = ["title", "pagination", "city", "acquirer"], fields: Set<String> = ["city", "acquirer"]
        // A record without an acquirer falls through to the page's own values: that is a record lacking it.
        XCTAssertEqual(try templates.render("detail", context: ["title": "T", "record": record], knownNames: known, recordNames: fields),
                       "<h1>T</h1>\nX|")
        XCTAssertThrowsError(try templates.render("outside", context: ["title": "T", "record": record], knownNames: known,
                                                  recordNames: fields)) { error in
            XCTAssertEqual(error as? TemplateError, .fieldOutsideRecord(name: "city", file: directory.appendingPathComponent("outside.mustache").path,
                                                                        line: 2, column: 4))
            XCTAssertEqual((error as? TemplateError)?.description, directory.appendingPathComponent("outside.mustache").path
                + ":2:4: 'city' is a record's field, but no record is open here, so it would print nothing; on a detail page write "
                + "{{record.city}} (or use it inside {{#record}}…{{/record}}), on a list page inside {{#items}}…{{/items}}")
        }
        // Inside a list's rows the field is a record's; inside the pagination no record is open.
        XCTAssertThrowsError(try templates.render("list", context: ["items": [record], "pagination": ["number": 1]], knownNames: known,
                                                  recordNames: fields)) { error in
            XCTAssertEqual(error as? TemplateError, .fieldOutsideRecord(name: "acquirer", file: directory.appendingPathComponent("list.mustache").path,
                                                                        line: 1, column: 57))
        }
        XCTAssertEqual(try templates.render("list", context: ["items": [record]], knownNames: known, recordNames: fields), "X;")
        XCTAssertEqual(try templates.render("outside", context: ["title": "T"], knownNames: known), "<h1>T</h1>\n<p></p>",
                       "without record names, a known name is only known")
    }

    /// `{{pageCount}}` (inside `pagination`) in a list template, or `{{pagination.number}}` in a detail one,
    /// printed nothing with status 0, where a misspelling failed the build.
    func testAValueTheKindOfPageNeverHasPrintedByItsOwnTemplateIsAnError() throws {
        let directory = try folder([
            "base.mustache": "<title>{{pageTitle}}{{pagination.number}}</title>{{$content}}{{/content}}",
            "list.mustache": "{{<base}}{{$content}}\n<p>{{pageCount}}</p>{{/content}}{{/base}}",
            "guarded.mustache": "{{<base}}{{$content}}{{#pagination}}{{pageCount}}{{/pagination}}{{#chart}}{{{chart}}}{{/chart}}"
                + "{{#pagination.multiple}}{{rowCount}}{{/pagination.multiple}}{{/content}}{{/base}}",
            "detail.mustache": "<h1>{{title}}</h1>\n{{pagination.number}}",
        ])
        let templates = try TemplateSet(directory: directory)
        let known: Set<String> = ["pageTitle", "pagination", "number", "pageCount", "rowCount", "multiple", "chart", "title"]
        let list = PageKind(name: "list pages", values: ["pageTitle", "pagination"])
        let context: [String: Any] = ["pageTitle": "T", "pagination": ["number": 2, "pageCount": 3, "multiple": true]]
        XCTAssertThrowsError(try templates.render("list", context: context, knownNames: known, page: list)) { error in
            XCTAssertEqual((error as? TemplateError)?.description, directory.appendingPathComponent("list.mustache").path
                + ":2:4: 'pageCount' is not a value of list pages, so it would print nothing there; they have pageTitle, pagination; "
                + "'pageCount' is inside 'pagination': {{pagination.pageCount}}")
        }
        // Sections and the layout may hold what only some pages have; without a kind, nothing is checked.
        XCTAssertEqual(try templates.render("guarded", context: context, knownNames: known, page: list), "<title>T2</title>3")
        XCTAssertEqual(try templates.render("list", context: context, knownNames: known), "<title>T2</title><p></p>")
        let detail = PageKind(name: "detail pages", values: ["pageTitle", "title", "record"])
        XCTAssertThrowsError(try templates.render("detail", context: ["title": "R"], knownNames: known, page: detail)) { error in
            XCTAssertEqual((error as? TemplateError)?.description, directory.appendingPathComponent("detail.mustache").path
                + ":2:1: 'pagination' is not a value of detail pages, so it would print nothing there; they have pageTitle, record, title")
        }
    }

    func testADottedNameWhoseLastPartIsMissingIsAnErrorUnlessThatPartIsKnown() throws {
        let directory = try folder([
            "page.mustache": "{{site.title}}|{{#items}}{{name}} {{record.acquirer}} {{bank.name}}{{/items}}|{{nothing.at.all}}",
            "typo.mustache": "<title>\n  {{site.titl}}</title>",
            "string.mustache": "{{#items}}{{name.first}}{{/items}}",
        ])
        let templates = try TemplateSet(directory: directory)
        let context: [String: Any] = ["site": ["title": "S"], "items": [["name": "A", "record": ["x": 1], "bank": 7]]]
        let known: Set<String> = ["acquirer", "name", "nothing"]
        // A known field may be missing from a record, a related record (here only its key) may lack its fields,
        // and a name missing at the root is known or not by its first part.
        XCTAssertEqual(try templates.render("page", context: context, knownNames: known), "S|A  |")
        XCTAssertThrowsError(try templates.render("typo", context: context, knownNames: known)) { error in
            XCTAssertEqual(error as? TemplateError, .unknownVariable(name: "site.titl", file: directory.appendingPathComponent("typo.mustache").path,
                                                                     line: 2, column: 3))
        }
        XCTAssertThrowsError(try templates.render("string", context: context, knownNames: known)) { error in
            XCTAssertEqual((error as? TemplateError).map { "\($0)" }?.hasSuffix(":1:11: 'name.first' is not a field or a value this page has; check its spelling"),
                           true, "\(error)")
        }
    }

    func testATransformSitegenDoesNotHaveIsAnErrorWhereItIsUsed() throws {
        let directory = try folder(["ok.mustache": "{{date(d)}}{{#first()}}{{/first()}}{{count(items)}}",
                                    "page.mustache": "<td>\n{{number(n)}} {{dat(d)}}</td>"])
        XCTAssertThrowsError(try TemplateSet(directory: directory).checkTransforms()) { error in
            XCTAssertEqual(error as? TemplateError, .unknownTransform(name: "dat", file: directory.appendingPathComponent("page.mustache").path,
                                                                      line: 2, column: 15, known: TemplateSet.transformNames.sorted()))
        }
        try FileManager.default.removeItem(at: directory.appendingPathComponent("page.mustache"))
        XCTAssertNoThrow(try TemplateSet(directory: directory).checkTransforms())
    }

    func testEveryTransformTheCheckAllowsTransformsSomeValue() throws {
        // The list the check holds tags to is written out; each name in it must be one a value has, so that a
        // transform renamed or removed cannot stay allowed and print nothing.
        let site = TemplateText.Site(baseURL: "https://x.org/", allowsRawHTML: false)
        let values: [TemplateValue] = [.string("Text"), .integer(3), .list(TemplateList(.strings(["b", "a"]))), .dictionary(["k": "v"])]
        let texts = ["2024-02-20", "1234", "words"].map { TemplateText($0, site: site) }
        for name in TemplateSet.transformNames {
            let position = TemplateRenderer.ListPosition(index: 0, count: 2).transformed(name)
            XCTAssertTrue(position != nil || values.contains { $0.transformed(name) != nil } || texts.contains { $0.helper(name) != nil },
                          "'\(name)' is allowed but nothing transforms it")
        }
        XCTAssertFalse(values.contains { $0.transformed("dat") != nil } || texts.contains { $0.helper("dat") != nil })
    }

    func testAPartialOrLayoutThatIsNotThereIsAnErrorWhereItIsNamed() throws {
        let directory = try folder(["page.mustache": "<p>\n{{> pagenation }}</p>", "other.mustache": "{{<base}}{{/base}}"])
        XCTAssertThrowsError(try TemplateSet(directory: directory)) { error in
            XCTAssertEqual(error as? TemplateError, .missingPartial(name: "base", file: directory.appendingPathComponent("other.mustache").path,
                                                                    line: 1, column: 1, available: ["other", "page"]))
        }
        try "{{<page}}{{/page}}".write(to: directory.appendingPathComponent("other.mustache"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try TemplateSet(directory: directory)) { error in
            XCTAssertEqual((error as? TemplateError)?.description, directory.appendingPathComponent("page.mustache").path
                + ":2:1: no template 'pagenation.mustache' to include; the templates folder has: other, page")
        }
        // A partial in a subfolder is not read, and the error says why it is not found.
        try "{{> partials/nav }}".write(to: directory.appendingPathComponent("page.mustache"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try TemplateSet(directory: directory)) { error in
            XCTAssertTrue((error as? TemplateError)?.description.hasSuffix("the templates folder has: other, page (templates in its subfolders are not read)") == true,
                          "\(error)")
        }
    }

    func testASyntaxErrorNamesTheTemplateFileAndLine() throws {
        let directory = try folder(["broken.mustache": "line one\n{{#open}}\nno close\n"])
        XCTAssertThrowsError(try TemplateSet(directory: directory)) { error in
            guard case .syntax(let file, let line, _, _)? = error as? TemplateError else { return XCTFail("\(error)") }
            XCTAssertTrue(file.hasSuffix("broken.mustache"))
            XCTAssertGreaterThanOrEqual(line, 2)
        }
    }

    func testAMissingTemplateIsAnErrorListingTheOthers() throws {
        let templates = try TemplateSet(directory: folder(["list.mustache": "x"]))
        XCTAssertThrowsError(try templates.render("detail", context: [:])) { error in
            XCTAssertEqual(error as? TemplateError, .missingTemplate(name: "detail", available: ["list"]))
        }
    }
}

final class PaginatorTests: XCTestCase {
    func testPagesSplitRowsAndNameTheirPaths() {
        let paginator = Paginator(rowCount: 45, pageSize: 20, basePath: "/banks/")
        XCTAssertEqual(paginator.pageCount, 3)
        XCTAssertEqual(paginator.rows(onPage: 3), 40..<45)
        XCTAssertEqual(paginator.path(ofPage: 1), "/banks/")
        XCTAssertEqual(paginator.path(ofPage: 2), "/banks/page/2/")
    }

    func testAStableArchiveCountsPagesFromTheOldestAndKeepsTheNewestAtThePath() {
        let paginator = Paginator(rowCount: 45, pageSize: 20, basePath: "/news/", numbering: .stableArchive)
        XCTAssertEqual(paginator.pageCount, 3)
        XCTAssertEqual((1...3).map(paginator.rows(onPage:)), [25..<45, 5..<25, 0..<5], "rows come newest first; page 1 the oldest twenty")
        XCTAssertEqual((1...3).map(paginator.path(ofPage:)), ["/news/page/1/", "/news/page/2/", "/news/"])
        XCTAssertEqual([paginator.newestPage, paginator.oldestPage], [3, 1])
        XCTAssertEqual([paginator.olderPage(than: 3), paginator.olderPage(than: 1), paginator.newerPage(than: 2)], [2, nil, 3])
        XCTAssertEqual(paginator.window(around: 3), [3, 2, 1])
        // Five more rows: the two full pages keep their rows, and only the newest grows.
        let later = Paginator(rowCount: 50, pageSize: 20, basePath: "/news/", numbering: .stableArchive)
        XCTAssertEqual((1...2).map { later.rows(onPage: $0).map { 50 - $0 } }, (1...2).map { paginator.rows(onPage: $0).map { 45 - $0 } },
                       "counted from the oldest row, the archive pages hold the same rows")
    }

    func testPageNavigationShowsTheEndsAndTheNeighboursWithGapsBetween() {
        let paginator = Paginator(rowCount: 200, pageSize: 10, basePath: "/")
        XCTAssertEqual(paginator.window(around: 1), [1, 2, 3, nil, 20])
        XCTAssertEqual(paginator.window(around: 5), [1, 2, 3, 4, 5, 6, 7, nil, 20], "a gap of one page shows the page")
        XCTAssertEqual(paginator.window(around: 10), [1, nil, 8, 9, 10, 11, 12, nil, 20])
        XCTAssertEqual(paginator.window(around: 20), [1, nil, 18, 19, 20])
        XCTAssertEqual(Paginator(rowCount: 30, pageSize: 10, basePath: "/").window(around: 2), [1, 2, 3])
        XCTAssertEqual(Paginator(rowCount: 0, pageSize: 10, basePath: "/").window(around: 1), [1])
        XCTAssertEqual(Paginator(rowCount: 0, pageSize: 20, basePath: "/").pageCount, 1, "an empty listing still has its first page")
        XCTAssertEqual(Paginator(rowCount: 40, pageSize: 20, basePath: "/").pageCount, 2)
    }
}

final class FeedWriterTests: XCTestCase {
    func testRFC822DatesNameTheRightWeekday() {
        XCTAssertEqual(FeedWriter.rfc822("2024-05-03T14:00:00Z"), "Fri, 03 May 2024 14:00:00 +0000")
        XCTAssertEqual(FeedWriter.rfc822("2000-01-01T00:00:00Z"), "Sat, 01 Jan 2000 00:00:00 +0000")
        XCTAssertEqual(FeedWriter.rfc822("2024-02-29T23:59:59Z"), "Thu, 29 Feb 2024 23:59:59 +0000")
        XCTAssertEqual(FeedWriter.rfc822("1999-12-31T08:05:09Z"), "Fri, 31 Dec 1999 08:05:09 +0000")
    }

    func testFeedsEscapeWhatTheirFormatsGiveMeaningTo() throws {
        let content = FeedContent(title: "A & B <news>", siteTitle: "Site", link: "https://x.org/",
                                  entries: [.init(id: "https://x.org/1/", title: "Quote \"q\"\u{1}\tand\nline\u{FFFE}\u{FFFF}", link: "https://x.org/1/",
                                                  date: nil, contentHTML: "<p>a &amp; b</p>")])
        let atom = FeedWriter.document(content, format: .atom, selfURL: "https://x.org/atom.xml")
        XCTAssertTrue(atom.contains("<title>A &amp; B &lt;news&gt;</title>"))
        XCTAssertTrue(atom.contains("<title>Quote &quot;q&quot;\tand\nline</title>"), "a control character has no place in XML")
        XCTAssertTrue(atom.contains("<updated>1970-01-01T00:00:00Z</updated>"), "no dated entry: a fixed date, not now")
        XCTAssertTrue(atom.contains("<content type=\"html\">&lt;p&gt;a &amp;amp; b&lt;/p&gt;</content>"))
        let json = FeedWriter.document(content, format: .json, selfURL: "https://x.org/feed.json")
        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let items = parsed?["items"] as? [[String: Any]]
        XCTAssertEqual(items?.first?["title"] as? String, "Quote \"q\"\u{1}\tand\nline\u{FFFE}\u{FFFF}")
        let rss = FeedWriter.document(content, format: .rss, selfURL: "https://x.org/rss.xml")
        XCTAssertFalse(rss.contains("lastBuildDate"), "no dated entry: no date, rather than 1970")
        XCTAssertTrue(rss.contains("<title>Quote &quot;q&quot;\tand\nline</title>"))
        XCTAssertTrue(rss.contains("<description>A &amp;amp; B &amp;lt;news&amp;gt; · Site</description>"), "a text, in HTML")
        XCTAssertEqual(parsed?["version"] as? String, "https://jsonfeed.org/version/1.1")
    }

    /// XML text is the text with `& < > "` replaced and what XML 1.0 forbids dropped, character for
    /// character, whatever surrounds them: random strings against a plain scalar-by-scalar oracle.
    func testXMLEscapingReplacesAndDropsExactlyWhatXMLGivesMeaningToOrForbids() {
        func oracle(_ text: String) -> String {
            var out = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\"": out += "&quot;"
                case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
                case _ where scalar.value < 0x20: continue
                case "\u{FFFE}", "\u{FFFF}": continue
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
        // Neighbours of the bytes the escape looks for: U+FFFD and U+FFBE share two of U+FFFE's three bytes.
        let alphabet: [Unicode.Scalar] = ["a", " ", "&", "<", ">", "\"", "'", "\n", "\t", "\r", "\u{0}", "\u{1}", "\u{1F}",
                                          "\u{7F}", "é", "\u{FFFD}", "\u{FFFE}", "\u{FFFF}", "\u{FFBE}", "\u{EFBF}", "\u{1F600}", "\u{10FFFF}"]
        var random = SeededGenerator(seed: 38)
        for _ in 0..<2_000 {
            let text = random.text(from: alphabet, maxLength: 12)
            XCTAssertEqual(escapeXML(text), oracle(text), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        XCTAssertEqual(escapeXML("plain text, nothing to do"), "plain text, nothing to do")
        XCTAssertEqual(escapeXML("\u{FFFE}"), "")
        XCTAssertEqual(escapeXML("x\u{EF}\u{BF}"), "x\u{EF}\u{BF}", "ï¿ is two characters, not half of U+FFFE")
    }

    /// A JSON string literal escapes the quote, the backslash and control characters (and, for a `<script>`,
    /// `< > &`, U+2028 and U+2029), whatever surrounds them, and parses back to the text: random strings
    /// against a plain scalar-by-scalar oracle, in both modes.
    func testJSONStringsEscapeExactlyWhatJSONAndScriptElementsNeed() throws {
        func oracle(_ text: String, _ html: Bool) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where scalar.value < 0x20 || html && ["<", ">", "&", "\u{2028}", "\u{2029}"].contains(scalar):
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        // Neighbours of the bytes looked for: U+2027 and U+202A share two of U+2028's three bytes.
        let alphabet: [Unicode.Scalar] = ["a", " ", "\"", "\\", "/", "<", ">", "&", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é",
                                          "\u{2027}", "\u{2028}", "\u{2029}", "\u{202A}", "\u{E2}", "\u{1F600}"]
        var random = SeededGenerator(seed: 38)
        for _ in 0..<2_000 {
            let text = random.text(from: alphabet, maxLength: 12)
            for html in [false, true] {
                let literal = jsonString(text, escapingHTML: html)
                XCTAssertEqual(literal, oracle(text, html), "\(text.unicodeScalars.map { String($0.value, radix: 16) }), html \(html)")
                XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed) as? String, text)
            }
        }
    }

    /// Readers tell an edited entry by its update date: an entry's own, else its publication date, never
    /// another entry's; the feed's is the latest of them.
    func testAnEntrysUpdateDateIsItsOwn() throws {
        let content = FeedContent(title: "T", siteTitle: "S", link: "https://x.org/", entries: [
            .init(id: "https://x.org/1/", title: "Edited", link: "https://x.org/1/", date: "2024-02-21T10:00:00Z", updated: "2024-03-01T08:00:00Z"),
            .init(id: "https://x.org/2/", title: "Not", link: "https://x.org/2/", date: "2024-02-25T10:00:00Z"),
            .init(id: "https://x.org/3/", title: "Earlier", link: "https://x.org/3/", date: "2024-02-20T10:00:00Z", updated: "2024-01-01T00:00:00Z"),
        ])
        let atom = FeedWriter.document(content, format: .atom, selfURL: "https://x.org/atom.xml")
        XCTAssertTrue(atom.contains("<id>https://x.org/</id>\n<updated>2024-03-01T08:00:00Z</updated>"), atom)
        XCTAssertTrue(atom.contains("<id>https://x.org/1/</id>\n<updated>2024-03-01T08:00:00Z</updated>\n<published>2024-02-21T10:00:00Z</published>"), atom)
        XCTAssertTrue(atom.contains("<id>https://x.org/2/</id>\n<updated>2024-02-25T10:00:00Z</updated>\n<published>2024-02-25T10:00:00Z</published>"), atom)
        XCTAssertTrue(atom.contains("<id>https://x.org/3/</id>\n<updated>2024-02-20T10:00:00Z</updated>"), "an update before publication is none: \(atom)")
        let json = FeedWriter.document(content, format: .json, selfURL: "https://x.org/feed.json")
        let items = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["items"] as? [[String: Any]])
        XCTAssertEqual(items.map { $0["date_modified"] as? String }, ["2024-03-01T08:00:00Z", nil, nil])
        let rss = FeedWriter.document(content, format: .rss, selfURL: "https://x.org/rss.xml")
        XCTAssertTrue(rss.contains("<lastBuildDate>Fri, 01 Mar 2024 08:00:00 +0000</lastBuildDate>"), rss)
    }

    /// RSS readers take a description as HTML, Atom a text summary as text: `<Holdings>` must show in both.
    func testATextSummaryShowsAsTextInEveryFormat() throws {
        let content = FeedContent(title: "T", siteTitle: "S", link: "https://x.org/", entries: [
            .init(id: "https://x.org/1/", title: "One", link: "https://x.org/1/", date: nil, summary: "Sold <Holdings> & <b>more</b>",
                  contentHTML: "<p>x</p>"),
        ])
        let rss = FeedWriter.document(content, format: .rss, selfURL: "https://x.org/rss.xml")
        XCTAssertTrue(rss.contains("<description>Sold &amp;lt;Holdings&amp;gt; &amp;amp; &amp;lt;b&amp;gt;more&amp;lt;/b&amp;gt;</description>"), rss)
        XCTAssertTrue(rss.contains("<content:encoded>&lt;p&gt;x&lt;/p&gt;</content:encoded>"), rss)
        let atom = FeedWriter.document(content, format: .atom, selfURL: "https://x.org/atom.xml")
        XCTAssertTrue(atom.contains("<summary>Sold &lt;Holdings&gt; &amp; &lt;b&gt;more&lt;/b&gt;</summary>"), atom)
    }
}
