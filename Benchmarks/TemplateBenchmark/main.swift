// Release benchmark of template rendering:
//   swift run -c release TemplateBenchmark [PAGES]
// Renders Benchmarks/site's list and detail templates with contexts shaped as PageRenderer builds them
// (20 records a listing page, a detail page with its Markdown body as HTML) through swift-mustache 2.1.1,
// as sitegen used it (a strict lookup root), and through sitegen's own engine (`TemplateSet`); checks that
// both give the same bytes, then prints the time per page of each (best of 5 rounds of PAGES renders,
// default 5,000) and the ratio. Then the list page made of its items' pieces, as the mutation round's shifted pages
// are: the time of its frame alone.
import Foundation
import Mustache
import SiteRender

// How swift-mustache saw a record's text while sitegen rendered with it.
extension TemplateText: MustacheTransformable, MustacheParent {
    public func child(named: String) -> Any? { nil }
}

/// sitegen's old strict root: names that reach it unfound and are not known are recorded.
final class StrictRoot: MustacheParent {
    let values: [String: Any]
    let knownNames: Set<String>
    private(set) var unknownNames = Set<String>()

    init(values: [String: Any], knownNames: Set<String>) {
        self.values = values
        self.knownNames = knownNames
    }

    func child(named name: String) -> Any? {
        if let value = values[name] { return value }
        if !knownNames.contains(name) { unknownNames.insert(name) }
        return nil
    }
}

let pages = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 5_000 : 5_000
let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("site/Templates")
let templates = try TemplateSet(directory: directory)
let library = try MustacheLibrary(templates: Dictionary(uniqueKeysWithValues: templates.names.map { name in
    (name, try MustacheTemplate(string: String(contentsOf: directory.appendingPathComponent(name + ".mustache"), encoding: .utf8)))
}))

// The contexts, as PageRenderer and RecordPresenter make them for the benchmark corpus.
let site = TemplateText.Site(baseURL: "https://records.example.org/", allowsRawHTML: false)
func text(_ value: String) -> TemplateText { TemplateText(value, site: site) }
func record(_ number: Int) -> [String: Any] {
    [
        "title": text("Cedarville Savings Bank \(number) enters receivership"), "date": text("2019-03-\(10 + number % 18)T14:22:05Z"),
        "state": text(["CA", "TX", "NY"][number % 3]), "city": text("Cedarville"),
        "tags": [text("deposits-federal"), text("loans-local"), text("mergers-rural")],
        "source_url": text("https://source.example.org/notices/\(number)?ref=feed&lang=en"),
        "summary": text("Regulators closed the bank on Friday; deposits & branches transfer to the acquirer."),
        "key": text("cedarville-savings-bank-\(number)"), "url": text("/records/cedarville-savings-bank-\(number)/"),
    ]
}
let siteValues: [String: Any] = ["title": "Records", "baseURL": "https://records.example.org/", "basePath": "/"]
let nav: [[String: Any]] = [["title": "Records, newest first", "url": "/"], ["title": "Records by state", "url": "/states/"],
                            ["title": "Records by tag", "url": "/tags/"]]
let pagination: [String: Any] = [
    "number": 7, "pageCount": 5000, "rowCount": 100_000, "first": "/", "last": "/page/5000/", "prev": "/page/6/", "next": "/page/8/",
    "pages": [1, nil, 5, 6, 7, 8, 9, nil, 5000].map { page -> [String: Any] in
        page.map { ["number": $0, "url": "/page/\($0)/", "current": $0 == 7] } ?? ["gap": true]
    },
    "multiple": true,
]
let listContext: [String: Any] = [
    "site": siteValues, "nav": nav, "pageTitle": "Records, newest first — page 7",
    "listing": ["name": "home", "title": "Records, newest first"], "items": (0..<20).map(record), "empty": false,
    "pagination": pagination, "feeds": [["format": "rss", "type": "application/rss+xml", "url": "/rss.xml"]] as [[String: Any]],
]
let paragraph = "<p>The <em>county</em> regulator closed the branch &amp; transferred its deposits to the acquirer; "
    + "customers may use their cards as usual. See the <a href=\"https://example.org/notice\">notice</a>.</p>\n"
let detailContext: [String: Any] = [
    "site": siteValues, "nav": nav, "pageTitle": "Cedarville Savings Bank 7 enters receivership", "record": record(7),
    "title": "Cedarville Savings Bank 7 enters receivership", "body": String(repeating: paragraph, count: 8),
    "prev": ["title": "River Trust 6 fails", "url": "/records/river-trust-6/"], "next": ["title": "Oak Bank 8 merges", "url": "/records/oak-bank-8/"],
]
let knownNames: Set<String> = [
    "site", "title", "baseURL", "basePath", "nav", "url", "pageTitle", "listing", "name", "items", "empty",
    "pagination", "number", "pageCount", "rowCount", "first", "last", "prev", "next", "multiple", "pages",
    "current", "gap", "feeds", "format", "type", "section", "count", "index", "indexTitle", "sections",
    "groups", "sectionCount", "chart", "record", "body", "key", "date", "state", "city", "tags", "source_url", "summary",
]

func renderWithSwiftMustache(_ name: String, _ context: [String: Any]) -> String {
    let root = StrictRoot(values: context, knownNames: knownNames)
    let output = library.render(root, withTemplate: name)!
    precondition(root.unknownNames.isEmpty, "unknown names \(root.unknownNames)")
    return output
}

func renderWithSitegen(_ name: String, _ context: [String: Any]) -> String {
    try! templates.render(name, context: context, knownNames: knownNames)
}

/// The best time per page, in microseconds, of 5 rounds of `pages` renders.
func timePerPage(_ render: (String, [String: Any]) -> String, _ name: String, _ context: [String: Any]) -> Double {
    var best = Double.infinity
    var bytes = 0
    for _ in 0..<5 {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<pages { bytes &+= render(name, context).utf8.count }
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000 / Double(pages))
    }
    precondition(bytes > 0)
    return best
}

func column(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
func microseconds(_ value: Double) -> String { String(format: "%.1f", value) }

print("template   bytes  swift-mustache  sitegen   ratio   (µs per page, best of 5 rounds of \(pages) pages)")
// SITEGEN_ENGINE=sitegen (or swift-mustache) times one engine alone, for a profiler; =pieces the page from pieces alone.
let engines = ProcessInfo.processInfo.environment["SITEGEN_ENGINE"]
for (name, context) in engines == "pieces" ? [] : [("list", listContext), ("detail", detailContext)] {
    let expected = renderWithSwiftMustache(name, context)
    guard renderWithSitegen(name, context) == expected else { fatalError("\(name): the engines' outputs differ") }
    let old = engines == "sitegen" ? .nan : timePerPage(renderWithSwiftMustache, name, context)
    let new = engines == "swift-mustache" ? .nan : timePerPage(renderWithSitegen, name, context)
    print(name.padding(toLength: 8, withPad: " ", startingAt: 0) + column("\(expected.utf8.count)", 7) + column(microseconds(old), 16)
          + column(microseconds(new), 9) + column(microseconds(old / new), 8) + "×")
}

// A list page made of its items' pieces (as a shifted page of the mutation round is): the frame alone is rendered.
if engines != "swift-mustache" {
    let rendering = ItemFragments(section: "items", cached: Array(repeating: nil, count: 20))
    let whole = try! templates.render("list", context: listContext, knownNames: knownNames, fragments: rendering)
    let pieces = (0..<20).map { rendering.rendered[$0]! }
    var context = listContext
    context["items"] = Array(repeating: TemplateRecord(names: [], values: []), count: 20)
    let fromPieces = { (_: String, _: [String: Any]) -> String in
        try! templates.render("list", context: context, knownNames: knownNames, fragments: ItemFragments(section: "items", cached: pieces))
    }
    guard fromPieces("list", context) == whole else { fatalError("list: the page from pieces differs") }
    print("list from pieces".padding(toLength: 24, withPad: " ", startingAt: 0) + column(microseconds(timePerPage(fromPieces, "list", context)), 9))
}
