import Foundation
@testable import SiteRender
import XCTest

/// sitegen's Mustache engine on its own: the site's real templates against swift-mustache, the
/// behaviours pages rely on, where it deliberately differs, and its errors.
final class TemplateEngineTests: XCTestCase {
    private let site = TemplateText.Site(baseURL: "https://banks.example.org/", allowsRawHTML: false)

    private func templates(_ texts: [String: String]) throws -> TemplateSet {
        try TemplateSet(texts: texts.keys.sorted().map { ($0, $0 + ".mustache", texts[$0]!) })
    }

    private func reference(_ texts: [String: String]) throws -> ReferenceTemplates {
        try XCTUnwrap(ReferenceTemplates(texts.keys.sorted().map { ($0, texts[$0]!) }))
    }

    // MARK: The site's templates

    /// A bank as RecordPresenter gives it: texts as `TemplateText`, absent fields missing.
    private func record(_ number: Int, acquirer: Bool = true) -> [String: Any] {
        var record: [String: Any] = [
            "name": TemplateText("First Bank & Trust <\"\(number)\">", site: site), "city": TemplateText("O'Fallon", site: site),
            "state": TemplateText("IL", site: site), "cert": TemplateText("\(10_000 + number)", site: site),
            "closing_date": TemplateText("2024-02-\(10 + number % 18)", site: site), "fund": TemplateText("185500000", site: site),
            "key": TemplateText("\(10_000 + number)", site: site), "title": TemplateText("Bank \(number) — Ünïcode", site: site),
            "url": TemplateText("/banks/\(10_000 + number)/", site: site), "date": TemplateText("2023-11-03T10:00:00Z", site: site),
            "published": TemplateText("2023-11-03T10:00:00Z", site: site), "author": TemplateText("Ann & Bo", site: site),
            "summary": TemplateText("A **short** <b>summary</b>", site: site), "link": TemplateText("https://x.org/?a=1&b=2", site: site),
            "source_url": TemplateText("https://src.example/\(number)", site: site),
            "tags": [TemplateText("banks", site: site), TemplateText("news & views", site: site)],
        ]
        if acquirer { record["acquirer"] = TemplateText("Big \"Bank\"", site: site) }
        return record
    }

    /// Pages as the build makes them, except that a page value a helper takes (`absolute(pageURL)`) is a
    /// `TemplateText`, as a record's field is: the reference knows helpers only through it.
    private func pageContexts() -> [String: [[String: Any]]] {
        let siteValues: [String: Any] = ["title": "Failed Bank Watch", "baseURL": "https://banks.example.org/", "basePath": "/"]
        let nav: [[String: Any]] = [["title": "Banks", "url": "/"], ["title": "By state", "url": "/states/"]]
        let items = (0..<20).map { record($0, acquirer: $0 % 3 != 0) }
        func pagination(number: Int, count: Int) -> [String: Any] {
            var pagination: [String: Any] = [
                "number": number, "pageCount": count, "rowCount": count * 20, "first": "/", "last": "/page/\(count)/",
                "pages": (1...count).map { page -> [String: Any] in
                    page == 3 && count > 4 ? ["gap": true] : ["number": page, "url": "/page/\(page)/", "current": page == number]
                },
                "multiple": count > 1,
            ]
            if number > 1 { pagination["prev"] = number == 2 ? "/" : "/page/\(number - 1)/" }
            if number < count { pagination["next"] = "/page/\(number + 1)/" }
            return pagination
        }
        let feeds: [[String: Any]] = [["format": "rss", "type": "application/rss+xml", "url": "/rss.xml"]]
        var listings: [[String: Any]] = []
        for (number, count, rows) in [(1, 1, 0), (1, 5, 20), (3, 5, 20), (5, 5, 7)] {
            var context: [String: Any] = [
                "site": siteValues, "nav": nav, "pageTitle": "Banks — page \(number)", "pageURL": TemplateText(number == 1 ? "/" : "/page/\(number)/", site: site), "listing": ["name": "home", "title": "Banks & <more>"],
                "items": Array(items.prefix(rows)), "empty": rows == 0, "pagination": pagination(number: number, count: count), "feeds": feeds,
            ]
            if number == 3 {
                context["section"] = ["name": "CA", "title": "California", "indexTitle": "C", "count": 11, "url": "/states/ca/", "index": "/states/"]
            }
            listings.append(context)
        }
        let sections: [[String: Any]] = [
            ["name": "CA", "title": "California", "indexTitle": "C", "count": 11, "url": "/states/ca/"],
            ["name": "CO", "title": "Colorado", "indexTitle": "C", "count": 2, "url": "/states/co/"],
            ["name": "TX", "title": "Texas", "indexTitle": "T", "count": 5, "url": "/states/tx/"],
        ]
        let groups: [[String: Any]] = ["C", "T"].map { title in ["indexTitle": title, "sections": sections.filter { $0["indexTitle"] as! String == title }] }
        let index: [String: Any] = [
            "site": siteValues, "nav": nav, "pageTitle": "By state", "pageURL": TemplateText("/states/", site: site), "listing": ["name": "states", "title": "By state"],
            "sections": sections, "groups": groups, "sectionCount": 3, "rowCount": 18,
            "chart": BarChart(title: "By state", bars: [.init(label: "CA", value: 11, link: "/states/ca/")]).svg(),
        ]
        let details: [[String: Any]] = [
            ["site": siteValues, "nav": nav, "pageTitle": "Bank 1", "pageURL": TemplateText("/banks/1/", site: site), "record": record(1), "title": "Bank 1 & <co>",
             "body": "<p>Closed &amp; sold.</p>\n", "prev": ["title": "Bank 0", "url": "/banks/0/"], "next": ["title": "Bank 2", "url": "/banks/2/"]],
            ["site": siteValues, "nav": nav, "pageTitle": "Bank 2", "record": record(2, acquirer: false), "title": "Bank 2"],
        ]
        let other: [[String: Any]] = [["site": siteValues, "nav": nav, "pageTitle": "Page not found", "body": "<p>About</p>"]]
        let pages: [[String: Any]] = other + [[
            "site": siteValues, "nav": nav, "pageTitle": "About", "pageURL": TemplateText("/about/", site: site), "title": "About", "body": "<p>About</p>",
            "record": ["description": TemplateText("What \"this\" is & isn't", site: site)],
        ], [
            "site": siteValues, "nav": nav, "pageTitle": "Plans", "pageURL": TemplateText("/plans/", site: site), "title": "Plans", "body": "<p>Soon</p>",
            "record": ["draft": true],
        ]]
        return ["list": listings, "news": listings, "sections": [index], "detail": details, "404": other, "page": pages]
    }

    /// What SiteConfig.templateNames lets a page lack, with the example's and the benchmark's fields.
    private let knownNames: Set<String> = [
        "site", "title", "baseURL", "basePath", "nav", "url", "pageTitle", "pageURL", "listing", "name", "items", "empty",
        "pagination", "number", "pageCount", "rowCount", "first", "last", "prev", "next", "multiple", "pages",
        "current", "gap", "feeds", "format", "type", "section", "count", "index", "indexTitle", "sections",
        "groups", "sectionCount", "chart", "record", "body", "key", "city", "state", "acquirer", "cert", "closing_date", "fund",
        "published", "author", "link", "summary", "date", "source_url", "tags", "description", "draft",
    ]

    func testEveryTemplateOfTheExampleAndTheBenchmarkRendersAsSwiftMustacheRendersIt() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let contexts = pageContexts()
        for folder in ["Templates", "Benchmarks/site/Templates"] {
            let directory = root.appendingPathComponent(folder)
            let templates = try TemplateSet(directory: directory)
            let texts = try Dictionary(uniqueKeysWithValues: templates.names.map {
                ($0, try String(contentsOf: directory.appendingPathComponent($0 + ".mustache"), encoding: .utf8))
            })
            let reference = try reference(texts)
            var rendered = 0
            for name in templates.names {
                for context in contexts[name] ?? [] {
                    let expected = reference.render(name, context: context)
                    XCTAssertEqual(try templates.render(name, context: context), expected, "\(folder)/\(name)")
                    let strict = reference.renderStrictly(name, context: context, knownNames: knownNames)
                    XCTAssertEqual(strict.unknownNames, [], "\(folder)/\(name)")
                    XCTAssertEqual(try templates.render(name, context: context, knownNames: knownNames), expected, "\(folder)/\(name)")
                    XCTAssertTrue(expected.contains("</html>") && expected.contains("Failed Bank Watch"), expected)
                    rendered += 1
                }
            }
            XCTAssertGreaterThanOrEqual(rendered, 8, folder)
        }
    }

    // MARK: Behaviours pages rely on

    func testListsGiveTheirPositionAndTransformsChain() throws {
        let texts = [
            "main": "{{#items}}{{index()}}{{#first()}}^{{/first()}}{{name}}{{^last()}}, {{/last()}}{{/items}}|{{count(items)}}|"
                + "{{#reversed(items)}}{{name}}{{/reversed(items)}}|{{uppercased(reversed(word))}}|{{plusone(n)}}|{{#sorted(tags)}}{{.}} {{/sorted(tags)}}",
        ]
        let context: [String: Any] = ["items": [["name": "a"], ["name": "b"], ["name": "c"]], "word": "abc", "n": 41, "tags": ["z", "b", "m"]]
        let output = try templates(texts).render("main", context: context)
        XCTAssertEqual(output, "0^a, 1b, 2c|3|cba|CBA|42|b m z ")
        XCTAssertEqual(output, try reference(texts).render("main", context: context))
    }

    /// A NUL or another control character in a CSV field reached the HTML, where it is a parse error (a
    /// browser shows U+FFFD): escaped output drops them, as feeds do, keeping tabs and line breaks; `{{{ }}}`
    /// prints the value as it is. Where swift-mustache keeps them, sitegen deliberately differs.
    func testEscapedValuesLeaveOutControlCharactersButTabsAndLineBreaks() throws {
        let texts = ["main": "{{a}}|{{b}}|{{{a}}}"]
        let context: [String: Any] = ["a": "x\u{0}y\u{1}\u{1F}z\u{0B}", "b": "<\t\n\r\u{7}>"]
        XCTAssertEqual(try templates(texts).render("main", context: context), "xyz|&lt;\t\n\r&gt;|x\u{0}y\u{1}\u{1F}z\u{0B}")
    }

    /// A record's `link: javascript:alert(1)` went into `<a href="{{link}}">` as it was: one click ran it.
    /// Printed as an attribute's address, a value with another scheme than http(s), mailto, tel or ftp is
    /// replaced, as Go's html/template (Hugo's) replaces it; elsewhere, and through `{{{ }}}`, it prints.
    func testAScriptAddressIsNotPrintedIntoAnAttributeThatLinks() throws {
        let texts = ["main": #"<a href="{{u}}">{{u}}</a><img alt="" src='{{u}}'><a  HREF = {{u}}>|<a title="{{u}}">|<a href="{{{u}}}">|<a href="/x/{{u}}">"#]
        let set = try templates(texts)
        func page(_ value: String) throws -> String { try set.render("main", context: ["u": value]) }
        let blocked = "about:invalid#sitegen-unsafe-url"
        for attack in ["javascript:alert(1)", " JaVaScRiPt:alert(1)", "\u{1}java\tscript:alert(1)", "data:text/html,<script>x</script>", "vbscript:x"] {
            let escaped = attack.replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
                .replacingOccurrences(of: "\u{1}", with: "")
            XCTAssertEqual(try page(attack), #"<a href="\#(blocked)">\#(escaped)</a><img alt="" src='\#(blocked)'><a  HREF = \#(blocked)>|"#
                           + #"<a title="\#(escaped)">|<a href="\#(attack)">|<a href="/x/\#(escaped)">"#, attack)
        }
        for fine in ["https://example.org/a?b=1&c=2", "/banks/1/", "mailto:a@example.org", "tel:+15551234", "page.html#top", "a b:c"] {
            let escaped = fine.replacingOccurrences(of: "&", with: "&amp;")
            XCTAssertTrue(try page(fine).hasPrefix(#"<a href="\#(escaped)">"#), fine)
        }
    }

    /// The check looked only at the template's text right before the tag: `href="{{#a}}{{u}}{{/a}}"`,
    /// `href="{{base}}{{u}}"` with an empty `base`, and a partial printing the address after `href="`
    /// printed a `javascript:` address as it was. What the page has printed so far decides now.
    func testAScriptAddressIsNotPrintedWhereASectionPartialOrEmptyValueStartsTheAttribute() throws {
        let texts = ["main": #"<a href="{{#a}}{{u}}{{/a}}">|<a href="{{base}}{{u}}">|<a href="{{>link}}">|<a href=" {{u}}">|<a href="{{base}}/{{u}}">|{{time}}"#,
                     "link": "{{u}}"]
        let set = try templates(texts)
        let blocked = "about:invalid#sitegen-unsafe-url"
        let context: [String: Any] = ["u": "javascript:alert(1)", "a": true, "base": "", "time": "2019-03-10T14:22:05Z"]
        XCTAssertEqual(try set.render("main", context: context),
                       #"<a href="\#(blocked)">|<a href="\#(blocked)">|<a href="\#(blocked)">|<a href=" \#(blocked)">|<a href="/javascript:alert(1)">|2019-03-10T14:22:05Z"#)
        var printed = context
        printed["base"] = "https://example.org/"
        XCTAssertEqual(try set.render("main", context: printed).split(separator: "|")[1], #"<a href="https://example.org/javascript:alert(1)">"#)
        XCTAssertTrue(TemplateRenderer.isSafeURL(.string("2019-03-10T14:22:05Z")), "a scheme starts with a letter")
        XCTAssertFalse(TemplateRenderer.isSafeURL(.string("HTTPSX:alert(1)")))
        XCTAssertTrue(TemplateRenderer.isSafeURL(.string("HTTPS://example.org/")))
    }

    /// `sorted` of a record's list field printed nothing: only lists built as strings or integers were sorted.
    func testSortedSortsEveryListOfTextsOrNumbers() throws {
        let set = try templates(["main": "{{#sorted(words)}}{{.}} {{/sorted(words)}}|{{#sorted(numbers)}}{{.}} {{/sorted(numbers)}}|"
                                    + "{{#items}}{{#sorted(tags)}}{{.}} {{/sorted(tags)}}{{/items}}"])
        let site = TemplateText.Site(baseURL: "/", allowsRawHTML: false)
        let record = TemplateRecord(names: ["tags"], values: [["z", "b", "m"].map { TemplateText($0, site: site) }])
        let context: [String: Any] = ["words": ["z", "b", "m"], "numbers": [3, 1, 2], "items": [record]]
        XCTAssertEqual(try set.render("main", context: context), "b m z |1 2 3 |b m z ")
    }

    func testAStandalonePartialIndentsItsLaterLinesAsSwiftMustacheDoes() throws {
        // swift-mustache indents the lines a partial's own nodes start, not every line: the second item of a
        // list section inside the partial stays where it is.
        let texts = ["main": "<ul>\n  {{> item}}\n</ul>\n", "item": "<li>first</li>\n{{#items}}<li>{{.}}</li>\n{{/items}}<li>last</li>\n"]
        let context: [String: Any] = ["items": ["a", "b"]]
        let output = try templates(texts).render("main", context: context)
        XCTAssertEqual(output, "<ul>\n  <li>first</li>\n  <li>a</li>\n<li>b</li>\n  <li>last</li>\n</ul>\n")
        XCTAssertEqual(output, try reference(texts).render("main", context: context))
    }

    func testALayoutsBlocksTakeTheOutermostPagesOverrides() throws {
        let texts = [
            "base": "<title>{{$title}}Site{{/title}}</title>\n<main>\n  {{$content}}\n  nothing\n  {{/content}}\n</main>\n",
            "section": "{{<base}}{{$title}}Section{{/title}}{{$content}}section body{{/content}}{{/base}}",
            "page": "{{<section}}\n{{$content}}\n<p>{{text}}</p>\n<p>two</p>\n{{/content}}\n{{/section}}\n",
        ]
        let context: [String: Any] = ["text": "x & y"]
        let output = try templates(texts).render("page", context: context)
        XCTAssertEqual(output, "<title>Section</title>\n<main>\n  <p>x &amp; y</p>\n  <p>two</p>\n</main>\n")
        XCTAssertEqual(output, try reference(texts).render("page", context: context))
    }

    func testSitegensHelpersApplyToEveryKindOfValueAndJSONStaysInsideItsScript() throws {
        // `json`, `xml` and `absolute` printed nothing for a page's own values, a number, a boolean or a list,
        // and `json` let `</script>` end the element.
        let texts = [
            "page": "<script type=\"application/ld+json\">{{#record}}{\"headline\": {{{json(headline)}}}, \"count\": {{{json(count)}}}, "
                + "\"ratio\": {{{json(ratio)}}}, \"active\": {{{json(active)}}}, \"tags\": {{{json(tags)}}}{{/record}}, "
                + "\"site\": {{{json(site.title)}}}, \"name\": {{{json(title)}}}}</script>\n"
                + "[{{{json(missing)}}}]|{{{xml(site.title)}}}|{{absolute(path)}}|{{#record}}{{number(count)}}|{{xml(active)}}{{/record}}|{{uppercased(site.title)}}",
        ]
        let text = { TemplateText($0, site: self.site) }
        let context: [String: Any] = [
            "site": ["title": "Ann & <Bo>", "baseURL": "https://x.org/sub/"], "title": "Line\u{2028}end", "path": "/sub/a/",
            "record": ["headline": text("</script><script>alert(1)</script>"), "count": 1_234_567, "ratio": 0.5, "active": true,
                       "tags": [text("a"), text("b & c")]] as [String: Any],
        ]
        let output = try templates(texts).render("page", context: context, knownNames: ["missing"])
        let lines = output.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0], #"<script type="application/ld+json">{"headline": "\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e", "#
                       + #""count": 1234567, "ratio": 0.5, "active": true, "tags": ["a","b \u0026 c"], "site": "Ann \u0026 \u003cBo\u003e", "#
                       + #""name": "Line\u2028end"}</script>"#)
        let json = lines[0].dropFirst(#"<script type="application/ld+json">"#.count).dropLast("</script>".count)
        let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual(parsed["headline"] as? String, "</script><script>alert(1)</script>")
        XCTAssertEqual(parsed["count"] as? Int, 1_234_567)
        XCTAssertEqual(parsed["tags"] as? [String], ["a", "b & c"])
        XCTAssertEqual(parsed["name"] as? String, "Line\u{2028}end")
        XCTAssertEqual(lines[1], "[]|Ann &amp; &lt;Bo&gt;|https://x.org/sub/a/|1,234,567|true|ANN &amp; &lt;BO&gt;",
                       "json() of a missing value prints nothing, as documented")
        let elsewhere = TemplateText.Site(baseURL: "https://y.org/", allowsRawHTML: false)
        XCTAssertEqual(try templates(["page": "{{absolute(path)}}"]).render("page", context: context, site: elsewhere), "https://y.org/sub/a/",
                       "the site given wins over the context's")
    }

    // MARK: Where sitegen differs from swift-mustache

    func testHTMLCharactersFollowedByACombiningMarkAreEscapedToo() throws {
        // swift-mustache compares whole Characters, and `"` with a combining acute accent is one Character
        // that is not `"`: it went out as it was, closing an attribute value early.
        let texts = ["main": "<a title=\"{{t}}\">"]
        let context: [String: Any] = ["t": "x\"\u{301} onmouseover=alert(1) <\u{301}"]
        XCTAssertEqual(try templates(texts).render("main", context: context), "<a title=\"x&quot;\u{301} onmouseover=alert(1) &lt;\u{301}\">")
        XCTAssertEqual(try reference(texts).render("main", context: context), "<a title=\"x\"\u{301} onmouseover=alert(1) <\u{301}\">")
    }

    func testAStrictRendersPageContextPrintsAsADictionary() throws {
        let texts = ["main": "{{.}}"]
        let context: [String: Any] = ["a": 1]
        XCTAssertEqual(try templates(texts).render("main", context: context, knownNames: []), "[&quot;a&quot;: 1]",
                       "the old strict root printed its class name, SiteRender.StrictRoot")
        XCTAssertEqual(try templates(texts).render("main", context: context), try reference(texts).render("main", context: context))
    }

    // MARK: Errors

    private func syntaxError(_ text: String) -> (line: Int, column: Int, reason: String)? {
        do {
            _ = try templates(["t": text])
            return nil
        } catch {
            guard case .syntax(_, let line, let column, let reason) = error as? TemplateError else { return nil }
            return (line, column, reason)
        }
    }

    func testSyntaxErrorsNameTheTagAtFault() throws {
        let unclosed = try XCTUnwrap(syntaxError("one\r\ntwo\n  {{#items}}\n{{name}}\n"))
        XCTAssertEqual([unclosed.line, unclosed.column], [3, 3], "the section that is never closed")
        XCTAssertEqual(unclosed.reason, "{{#items}} is never closed; expected {{/items}}")
        let mismatched = try XCTUnwrap(syntaxError("{{#a}}\n{{#b}}x{{/a}}{{/b}}"))
        XCTAssertEqual([mismatched.line, mismatched.column], [2, 8])
        XCTAssertEqual(mismatched.reason, "{{/a}} does not close the open section {{#b}} (line 2, column 1); expected {{/b}} first")
        // The open tag quoted as the template has it, so that a search finds it: a block, a layout, an inverted section.
        XCTAssertEqual(syntaxError("{{<base}}{{$content}}x{{/base}}")?.reason,
                       "{{/base}} does not close the open section {{$content}} (line 1, column 10); expected {{/content}} first")
        XCTAssertEqual(syntaxError("{{<base}}x")?.reason, "{{<base}} is never closed; expected {{/base}}")
        XCTAssertEqual(syntaxError("{{^reversed(a)}}x")?.reason, "{{^reversed(a)}} is never closed; expected {{/reversed(a)}}")
        let stray = try XCTUnwrap(syntaxError("x\n{{/reversed(a)}}"))
        XCTAssertEqual([stray.line, stray.column, ], [2, 1])
        XCTAssertEqual(stray.reason, "{{/reversed(a)}} closes no open section")
        XCTAssertEqual(syntaxError("ab {{name")?.reason, "the template ends inside a tag")
        XCTAssertEqual(syntaxError("ab {{name x}}")?.reason, "expected }} to close the tag")
        XCTAssertEqual(syntaxError("{{<base}}{{name}}{{/base}}")?.column, 10)
        XCTAssertNotNil(syntaxError("{{! never closed"))
        XCTAssertNotNil(syntaxError("{{=<% %>}}"))
        XCTAssertNotNil(syntaxError("{{$block(x)}}{{/block(x)}}"))
        XCTAssertNotNil(syntaxError("a {"), "swift-mustache rejects a template that ends with the first character of a delimiter")
        XCTAssertNil(syntaxError("a {{"), "but reads a whole delimiter at the end as nothing")
        for text in ["one\r\ntwo\n  {{#items}}\n{{name}}\n", "{{#a}}\n{{#b}}x{{/a}}{{/b}}", "ab {{name", "{{<base}}{{name}}{{/base}}",
                     "{{! never closed", "{{=<% %>}}", "{{$block(x)}}{{/block(x)}}", "a {"] {
            XCTAssertNil(ReferenceTemplates([("t", text)]), "swift-mustache rejects \(text.debugDescription) too")
        }
    }

    private func loadingError(_ texts: [String: String]) -> TemplateError? {
        do {
            _ = try templates(texts)
            return nil
        } catch {
            return error as? TemplateError
        }
    }

    func testATemplateThatAlwaysIncludesItselfIsAnErrorWhenTheTemplatesLoad() throws {
        // These overflowed the stack on the first page rendered.
        XCTAssertEqual(loadingError(["page": "{{<page}}{{/page}}\n"]),
                       .endlessInclusion(name: "page", through: ["page"], file: "page.mustache", line: 1, column: 1))
        XCTAssertEqual(loadingError(["page": "<p>\n  {{> page}}\n</p>"]),
                       .endlessInclusion(name: "page", through: ["page"], file: "page.mustache", line: 2, column: 3))
        let mutual = try XCTUnwrap(loadingError(["a": "<p>{{title}}</p>\n{{> b}}", "b": "{{$x}}{{/x}}{{>a}}", "page": "{{>a}}"]))
        XCTAssertEqual(mutual, .endlessInclusion(name: "a", through: ["b", "a"], file: "a.mustache", line: 2, column: 1))
        XCTAssertEqual(mutual.description, "a.mustache:2:1: template 'a' includes itself (through 'b') outside any section, so it would "
                       + "never end; include another template, or put the tag inside a section that the data ends")
        XCTAssertNil(loadingError(["node": "{{name}}{{#children}}({{>node}}){{/children}}", "page": "{{$b}}{{>page}}{{/b}}"]),
                     "inside a section or a block, the data or an override may end it")
    }

    func testATemplateIncludingItselfRendersAsDeepAsItsDataGoesAndIsAnErrorPastTheLimit() throws {
        let templates = try templates(["node": "{{name}}{{#children}}({{>node}}){{/children}}", "page": "<p>\n{{#on}}.{{>page}}{{/on}}"])
        // A leaf needs its empty list: without it, `children` is looked up in the node around it.
        func tree(_ depth: Int) -> [String: Any] {
            let leaf: [String: Any] = ["name": "x", "children": [Any]()]
            return depth == 0 ? leaf : ["name": "n\(depth)", "children": [tree(depth - 1), leaf]]
        }
        XCTAssertEqual(try templates.render("node", context: tree(2)), "n2(n1(x)(x))(x)")
        XCTAssertTrue(try templates.render("node", context: tree(TemplateRenderer.nestingLimit), knownNames: []).hasPrefix("n100(n99("))
        // Past the limit, on a thread with a quarter of a render worker's stack (`RenderQueue`): an error, not an overflow.
        nonisolated(unsafe) let deep = tree(TemplateRenderer.nestingLimit + 1)
        let done = expectation(description: "rendered")
        nonisolated(unsafe) var result: Result<String, TemplateError>?
        let thread = Thread {
            result = Result { () throws(TemplateError) in try templates.render("node", context: deep, knownNames: []) }
            done.fulfill()
        }
        thread.stackSize = 1 << 20
        thread.start()
        wait(for: [done], timeout: 60)
        guard case .failure(.nestedTooDeep(let name, _, _, _, _))? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(name, "node")
        XCTAssertThrowsError(try templates.render("node", context: tree(TemplateRenderer.nestingLimit + 1), knownNames: [])) { error in
            XCTAssertEqual(error as? TemplateError, .nestedTooDeep(name: "node", limit: 100, file: "node.mustache", line: 1, column: 23))
        }
        // `on` is found in the page's context at every level, so nothing ends this one.
        XCTAssertThrowsError(try templates.render("page", context: ["on": true])) { error in
            XCTAssertEqual((error as? TemplateError)?.description, "page.mustache:2:9: including 'page' here nests templates more than 100 deep; "
                           + "a template that includes itself must be inside a section that the page's data ends")
        }
    }

    func testABlockThePageOverridesButItsLayoutLacksIsAnErrorAtTheBlock() throws {
        // The layout's default was published in place of the page's content.
        let base = "<main>{{$content}}{{/content}}</main>\n"
        let misspelt = try XCTUnwrap(loadingError(["base": base, "page": "{{<base}}{{$contents}}<h1>{{title}}</h1>{{{body}}}{{/contents}}{{/base}}\n"]))
        XCTAssertEqual(misspelt, .unknownBlock(name: "contents", layout: "base", file: "page.mustache", line: 1, column: 10, available: ["content"]))
        XCTAssertEqual(misspelt.description, "page.mustache:1:10: block 'contents' is not in layout 'base', so the layout's default would show "
                       + "instead; its blocks are: content")
        // Blocks declared by the layout's partials, by the layout it extends, or inside overrides are all the page's to fill.
        let layered = [
            "base": "<head>{{> head}}</head>\n<main>{{$content}}{{/content}}</main>\n", "head": "<title>{{$title}}Site{{/title}}</title>",
            "section": "{{<base}}{{$content}}<div>{{$inner}}{{/inner}}</div>{{/content}}{{/base}}",
            "page": "{{<section}}\n  {{$title}}T{{/title}}\n  {{$inner}}I{{/inner}}\n{{/section}}",
            "other": "{{<base}}{{$content}}{{$mine}}M{{/mine}}{{/content}}{{$mine}}N{{/mine}}{{/base}}",
        ]
        XCTAssertEqual(try templates(layered).render("page", context: [:]), "<head><title>T</title></head>\n<main><div>I</div></main>\n")
        XCTAssertEqual(try templates(layered).render("other", context: [:]), "<head><title>Site</title></head>\n<main>N</main>\n")
        var nested = layered
        nested["page"] = "{{<section}}\n  {{$title}}T{{/title}}\n  {{$inner}}I{{#x}}{{<section}}{{$titel}}{{/titel}}{{/section}}{{/x}}{{/inner}}\n{{/section}}"
        XCTAssertEqual(loadingError(nested), .unknownBlock(name: "titel", layout: "section", file: "page.mustache", line: 3, column: 32,
                                                            available: ["content", "inner", "title"]))
        // A layout that includes a template its data names may reach any template: a block must be declared by
        // one of them. With such a partial the check was off, and a misspelt block published empty pages.
        let chosen = ["base": "<main>{{$content}}{{/content}}</main>{{>*footer}}", "foot": "<p>{{$note}}n{{/note}}</p>",
                      "page": "{{<base}}{{$contents}}x{{/contents}}{{/base}}", "fine": "{{<base}}{{$note}}N{{/note}}{{/base}}"]
        XCTAssertEqual(loadingError(chosen), .unknownBlock(name: "contents", layout: "base", file: "page.mustache", line: 1, column: 10,
                                                            available: ["content", "note"]))
        var fine = chosen
        fine["page"] = "{{<base}}{{$content}}x{{/content}}{{/base}}"
        XCTAssertEqual(try templates(fine).render("fine", context: ["footer": "foot"]), "<main></main><p>N</p>")
    }

    /// The override of `content` holding a `content` block of its own rendered itself without end, and the
    /// stack overflow took the build (and `watch`) down.
    func testABlockInsideItsOwnOverrideRendersItsOwnDefault() throws {
        let set = try templates(["base": "<main>{{$content}}x{{/content}}</main>",
                                 "page": "{{<base}}{{$content}}[{{$content}}y{{/content}}]{{/content}}{{/base}}"])
        XCTAssertEqual(try set.render("page", context: [:]), "<main>[y]</main>")
    }

    /// `{{>*kind}}` names its template in the data: it is not a missing template called `*kind`, and a page
    /// using it depends on every template, which an incremental build must re-render it for.
    func testADynamicPartialLoadsRendersTheTemplateItsDataNamesAndDependsOnEveryTemplate() throws {
        let set = try templates(["page": "<{{>*kind}}>", "card": "C{{title}}", "row": "R{{title}}", "other": "O"])
        XCTAssertEqual(try set.render("page", context: ["kind": "card", "title": "t"]), "<Ct>")
        XCTAssertEqual(try set.render("page", context: ["kind": "row", "title": "t"]), "<Rt>")
        XCTAssertEqual(set.sources(usedBy: "page").map(\.name), ["card", "other", "page", "row"])
        XCTAssertEqual(try templates(["page": "<{{>card}}>", "card": "C", "row": "R"]).sources(usedBy: "page").map(\.name), ["card", "page"])
    }

    /// A record's field is text, not a string: `{{>*kind}}` in a list's rows rendered nothing.
    func testADynamicPartialNamedByARecordsFieldRendersThatTemplate() throws {
        let set = try templates(["list": "{{#items}}[{{kind}}] {{>*kind}};{{/items}}", "card": "<div class=\"card\">{{name}}</div>",
                                 "wide": "<div class=\"wide\">{{name}}</div>"])
        let site = TemplateText.Site(baseURL: "/", allowsRawHTML: false)
        func rows(_ kinds: [String]) -> [TemplateRecord] {
            kinds.map { TemplateRecord(names: ["kind", "name"], values: [TemplateText($0, site: site), TemplateText("n", site: site)]) }
        }
        XCTAssertEqual(try set.render("list", context: ["items": rows(["card", "wide", ""])], knownNames: []),
                       "[card] <div class=\"card\">n</div>;[wide] <div class=\"wide\">n</div>;[] ;", "an empty value chooses no template")
        // A misspelt choice (`layout: pots`) printed nothing; it is an error at the tag, as a plain partial's is.
        XCTAssertThrowsError(try set.render("list", context: ["items": rows(["card", "crad"])], knownNames: [])) {
            XCTAssertEqual("\($0)", "list.mustache:1:22: no template 'crad.mustache' to include, which 'kind' names; the templates folder has: card, list, wide")
            XCTAssertEqual("\(($0 as? TemplateError)!.onPage("posts/b/index.html"))", "list.mustache:1:22: no template 'crad.mustache' to include, "
                           + "which 'kind' names on the page /posts/b/; the templates folder has: card, list, wide")
        }
    }

    /// A record whose `site` field was empty printed the page's `site` (a dictionary) in its place, and
    /// `{{#site}}` did not hide it: the record has the field, empty, as a JSON object has a null member.
    func testARecordsEmptyFieldHidesThePagesValueOfTheSameName() throws {
        let set = try templates(["list": "{{#items}}<p>{{name}}{{#site}} at {{site}}{{/site}}{{^site}} (no site){{/site}}</p>{{/items}}{{site.title}}",
                                 "strict": "{{#items}}{{site}}|{{/items}}"])
        let site = TemplateText.Site(baseURL: "/", allowsRawHTML: false)
        let rows = [TemplateRecord(names: ["name", "site"], values: [TemplateText("Acme", site: site), TemplateText("Plant A", site: site)]),
                    TemplateRecord(names: ["name", "site"], values: [TemplateText("Bay Deli", site: site), nil])]
        let context: [String: Any] = ["items": rows, "site": ["title": "Inspections", "baseURL": "https://example.org/"]]
        XCTAssertEqual(try set.render("list", context: context, knownNames: ["site", "name"]),
                       "<p>Acme at Plant A</p><p>Bay Deli (no site)</p>Inspections")
        XCTAssertEqual(try set.render("strict", context: ["items": rows], knownNames: []), "Plant A||", "a record's empty field is no unknown name")
    }

    /// Swift prints a dictionary in the order of the process's hash seed: `{{.}}` of a record, and a
    /// dictionary's `enumerated`, changed a page's bytes from one build to the next.
    func testDictionariesAndRecordsPrintAndEnumerateInTheSameOrderEveryTime() throws {
        let set = try templates(["dot": "{{#items}}{{{.}}}|{{/items}}{{{.}}}",
                                 "pairs": "{{#enumerated(record)}}{{key}}={{value}},{{/enumerated(record)}}/{{#enumerated(meta)}}{{key}},{{/enumerated(meta)}}",
                                 "list": "{{{rows}}}|{{{reversed(rows)}}}"])
        let site = TemplateText.Site(baseURL: "/", allowsRawHTML: false)
        let names = ["zeta", "alpha", "mid", "url"]
        let record = TemplateRecord(names: names, values: [TemplateText("z", site: site), TemplateText("a", site: site), nil,
                                                           TemplateText("/r/", site: site)])
        let meta: [String: Any] = Dictionary(uniqueKeysWithValues: (0..<40).map { ("k\($0)", $0) })
        XCTAssertEqual(try set.render("dot", context: ["items": [record]], knownNames: []),
                       #"["alpha": a, "url": /r/, "zeta": z]|["items": [["alpha": a, "url": /r/, "zeta": z]]]"#)
        let keys = (0..<40).map { "k\($0)" }.sorted()
        XCTAssertEqual(try set.render("pairs", context: ["record": record, "meta": meta], knownNames: []),
                       "zeta=z,alpha=a,url=/r/,/" + keys.map { $0 + "," }.joined(), "a record's fields as declared, a dictionary's keys in order")
        let rows: [[String: Any]] = [["b": 1, "a": "x", "c": ["z": 1, "y": 2]], ["d": 2]]
        XCTAssertEqual(try set.render("list", context: ["rows": rows], knownNames: []), #"[["a": "x", "b": 1, "c": ["y": 2, "z": 1]], ["d": 2]]|"#
            + #"ReversedCollection<Array<Dictionary<String, Any>>>(_base: [["a": "x", "b": 1, "c": ["y": 2, "z": 1]], ["d": 2]])"#)
    }

    func testAnUnknownNameInAPartialIsReportedWhereThePartialUsesIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "{{#items}}\r\n  {{> row}}\r\n{{/items}}".write(to: directory.appendingPathComponent("page.mustache"), atomically: true, encoding: .utf8)
        try "<li>\r\n{{name}} {{uppercased(cyty)}}</li>".write(to: directory.appendingPathComponent("row.mustache"), atomically: true, encoding: .utf8)
        let templates = try TemplateSet(directory: directory)
        XCTAssertThrowsError(try templates.render("page", context: ["items": [["name": "A"]]], knownNames: [])) { error in
            XCTAssertEqual(error as? TemplateError, .unknownVariable(name: "cyty", file: directory.appendingPathComponent("row.mustache").path,
                                                                    line: 2, column: 10))
        }
        XCTAssertEqual(templates.sources(usedBy: "page").map(\.name), ["page", "row"])
    }

    /// The names a template's tags look up are the fields its pages can show; the layout's `<body>`, a
    /// style sheet's `summary{…}` and other literal text are not among them.
    func testTagNamesAreWhatTheTagsLookUpNotTheLiteralText() throws {
        let templates = try TemplateSet(texts: [
            ("base", "base.mustache", "<html><style>summary{color:red}</style><body>{{$content}}{{default}}{{/content}}</body></html>"),
            ("list", "list.mustache", "{{<base}}{{$content}}{{#items}}{{> row}}{{/items}}{{^empty}}{{pagination.number}}{{/empty}}{{/content}}{{/base}}"),
            ("row", "row.mustache", "<tr><td>{{title}}</td><td>{{{excerpt(notes)}}}</td></tr> body city"),
            ("tags", "tags.mustache", "{{#tags}}{{.}}{{/tags}}"),
        ])
        XCTAssertEqual(templates.tagNames(usedBy: "list"),
                       ["default", "items", "empty", "pagination", "number", "title", "excerpt", "notes"])
        XCTAssertEqual(templates.tagNames(usedBy: "row"), ["title", "excerpt", "notes"])
        XCTAssertEqual(templates.sources(usedBy: "list").map(\.name), ["base", "list", "row"])
    }
}
