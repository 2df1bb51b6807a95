@testable import SiteRender
import XCTest

/// A list page made of its items' pieces (`ItemFragments`) prints the bytes the page rendered whole prints,
/// and a template whose items depend on more than the item is not made of pieces.
final class ItemFragmentsTests: XCTestCase {
    private let varying: Set<String> = ["pageTitle", "pageURL", "items", "empty", "pagination", "section", "feeds"]
    private let known: Set<String> = ["site", "pageTitle", "items", "empty", "pagination", "title", "url", "city", "tags", "note"]

    private func templates(_ list: String, partials: [String: String] = [:]) throws -> TemplateSet {
        let base = "<html><title>{{pageTitle}}</title><body>{{$content}}{{/content}}</body></html>\n"
        return try TemplateSet(texts: [("base", "base.mustache", base), ("list", "list.mustache", list)]
            + partials.map { ($0.key, $0.key + ".mustache", $0.value) })
    }

    private func item(_ number: Int) -> TemplateRecord {
        TemplateRecord(names: ["title", "url", "city", "tags", "note"],
                       values: ["Bank <\(number)>", "/banks/\(number)/", number % 3 == 0 ? nil : "Town \(number)",
                                number % 2 == 0 ? ["a", "b & c"] : nil, number % 5 == 0 ? "javascript:alert(\(number))" : nil])
    }

    private func page(_ numbers: [Int], _ items: [TemplateRecord]? = nil) -> [String: Any] {
        ["site": ["title": "S"], "pageTitle": "Page of \(numbers.first ?? 0)", "items": items ?? numbers.map(item), "empty": numbers.isEmpty,
         "pagination": ["number": numbers.first ?? 0]]
    }

    private let list = """
        {{<base}}{{$content}}
        <p>{{pagination.number}}</p>
        <ul>
        {{#items}}
        <li><a href="{{url}}">{{title}}</a>{{#city}} in {{city}}{{/city}}{{#tags}} #{{.}}{{/tags}} <a href={{note}}>n</a> {{site.title}}</li>
        {{/items}}
        </ul>
        {{/content}}{{/base}}
        """

    func testPiecesRenderedOnOnePageMakeTheSameBytesOnTheNext() throws {
        let templates = try templates(list)
        XCTAssertTrue(templates.rendersItemsAlone("list", section: "items", varying: varying))
        // Page 1 holds rows 10…1; one row is added at the top, so page 1 becomes 11…2 and 1 moves on.
        let first = Array((1...10).reversed())
        let fragments = ItemFragments(section: "items", cached: Array(repeating: nil, count: first.count))
        let whole = try templates.render("list", context: page(first), knownNames: known)
        XCTAssertEqual(try templates.render("list", context: page(first), knownNames: known, fragments: fragments), whole)
        XCTAssertTrue(fragments.applied)
        XCTAssertEqual(fragments.rendered.count, 10)
        var pieces: [Int: String] = [:]
        for (place, text) in fragments.rendered { pieces[first[place]] = text }

        let next = Array((2...11).reversed())
        let cached = next.map { pieces[$0] }
        XCTAssertEqual(cached.compactMap { $0 }.count, 9)
        let placeholder = TemplateRecord(names: [], values: [])
        let items = zip(next, cached).map { $1 == nil ? item($0) : placeholder }
        let shifted = ItemFragments(section: "items", cached: cached)
        let made = try templates.render("list", context: page(next, items), knownNames: known, fragments: shifted)
        XCTAssertTrue(shifted.applied)
        XCTAssertEqual(shifted.rendered.keys.sorted(), [0], "only the new row is rendered")
        XCTAssertEqual(made, try templates.render("list", context: page(next), knownNames: known))
        XCTAssertTrue(made.contains("about:invalid#sitegen-unsafe-url"), "a piece keeps the unsafe address replaced")
    }

    func testItemsThatNameMoreThanThemselvesAreRenderedWhole() throws {
        let refused = [
            "a position": "{{#items}}\n<li>{{index()}} {{title}}</li>\n{{/items}}",
            "a page value": "{{#items}}\n<li>{{title}} of {{pagination.number}}</li>\n{{/items}}",
            "a page value inside a nested section": "{{#items}}\n<li>{{#tags}}{{pageTitle}}{{/tags}}</li>\n{{/items}}",
            "a start that may continue an attribute": "{{#items}}{{url}}\" x=\"{{title}}{{/items}}",
            "two item sections": "{{#items}}\n<li>{{title}}</li>\n{{/items}}{{#items}}\n<b>{{url}}</b>\n{{/items}}",
            "the items printed": "{{#items}}\n<li>{{title}}</li>\n{{/items}}{{items}}",
            "a template its data names": "{{#items}}\n<li>{{>*kind}}</li>\n{{/items}}",
            "a partial naming a page value": "{{#items}}\n<li>{{>row}}</li>\n{{/items}}",
        ]
        for (reason, body) in refused {
            let templates = try templates(body, partials: ["row": "{{title}} {{pageURL}}"])
            XCTAssertFalse(templates.rendersItemsAlone("list", section: "items", varying: varying), reason)
        }
        let allowed = try templates("{{^items}}<p>none</p>{{/items}}{{#items}}\n<li>{{>row}}</li>\n{{/items}}", partials: ["row": "{{title}} {{site.title}}"])
        XCTAssertTrue(allowed.rendersItemsAlone("list", section: "items", varying: varying), "an inverted section and a partial of the item's own names")
    }

    func testASectionNestedInAPageValueIsRenderedWholeAndSaysSo() throws {
        // `{{#items}}` inside `{{#pagination}}`: the item's names would be looked up in the pagination too.
        let templates = try templates("{{#pagination}}{{#items}}\n<li>{{title}}</li>\n{{/items}}{{/pagination}}")
        XCTAssertTrue(templates.rendersItemsAlone("list", section: "items", varying: varying))
        let fragments = ItemFragments(section: "items", cached: [nil, nil])
        let text = try templates.render("list", context: page([1, 2]), knownNames: known, fragments: fragments)
        XCTAssertFalse(fragments.applied, "not at the page's own scope")
        XCTAssertEqual(text, try templates.render("list", context: page([1, 2]), knownNames: known))
    }
}
