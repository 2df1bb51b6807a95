import Foundation
import SiteRender
import SiteStore
@testable import SiteBuild
import TestSupport
import XCTest

/// Shortcuts taken for speed against the general code they stand in for.
final class FastPathTests: XCTestCase {
    /// Text without marks, and punctuation that composes with nothing, is returned as it is; the rest goes
    /// through Foundation's normalization, which must agree with it on every text drawn.
    func testComposingSkipsOnlyTextThatIsComposedAlready() {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 1...999_999)
        var random = SeededGenerator(seed: seed)
        let alphabet: [Unicode.Scalar] = ["a", "E", " ", "\u{E9}", "\u{301}", "\u{308}", "\u{2019}", "\u{201C}", "\u{2014}", "\u{2026}", "\u{20AC}",
                                          "\u{2001}", "\u{212B}", "\u{1112}", "\u{1161}", "\u{11AB}", "\u{438}", "\u{306}", "\u{0BC6}", "\u{0BBE}"]
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...6, using: &random) { text.unicodeScalars.append(alphabet.randomElement(using: &random)!) }
            XCTAssertTrue(composedCanonically(text).unicodeScalars.elementsEqual(text.precomposedStringWithCanonicalMapping.unicodeScalars),
                          "seed \(seed): \(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        XCTAssertEqual(Array(composedCanonically("\u{2001}\u{212B}").unicodeScalars), ["\u{2003}", "\u{C5}"], "singletons are replaced")
    }

    func testASCIISlugsMatchTheUnicodeSlugs() {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 1...999_999)
        var random = SeededGenerator(seed: seed)
        let alphabet = Array("aZ09 -_./:{}#?%!~\t\u{7F}\u{1}Qz")
        for _ in 0..<5000 {
            let text = String((0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            XCTAssertEqual(slugify(text), unicodeSlug(text), "seed \(seed): \(text.debugDescription)")
        }
        // Texts that are slugs, or nearly (a hyphen leading, trailing or doubled, a capital): the text is its own slug only when it is one.
        let slugAlphabet = Array("az09-A")
        var slugs = 0
        for _ in 0..<5000 {
            let text = String((0..<Int.random(in: 0...8, using: &random)).map { _ in slugAlphabet.randomElement(using: &random)! })
            let slug = slugify(text)
            XCTAssertEqual(slug, unicodeSlug(text), "seed \(seed): \(text.debugDescription)")
            if slug == text { slugs += 1 }
        }
        XCTAssertGreaterThan(slugs, 500, "seed \(seed): the texts drawn should include many slugs")
        XCTAssertEqual(slugify("ashburg-community-bank-closes-16376"), "ashburg-community-bank-closes-16376")
        XCTAssertEqual(slugify("-a--b-"), "a-b")
        XCTAssertEqual(slugify(""), "untitled")
        XCTAssertEqual(slugify("--"), "untitled")
        XCTAssertEqual(slugify("Ashburg Community Bank — closes"), "ashburg-community-bank-closes")
        XCTAssertEqual(slugify("\u{212A}elvin"), "kelvin", "the Kelvin sign lower-cases to an ASCII k")
        // Latin letters with marks keep their letter; other scripts keep theirs, with their marks.
        XCTAssertEqual(slugify("café"), "cafe")
        XCTAssertEqual(slugify("Crème Brûlée à la Straße"), "creme-brulee-a-la-strasse")
        XCTAssertEqual(slugify("post two é"), "post-two-e")
        XCTAssertEqual(slugify("Łódź & Ærø"), "lodz-aero")
        XCTAssertEqual(slugify("Zu\u{308}rich"), "zurich", "a decomposed ü is the same letter")
        XCTAssertEqual(slugify("Банк 7"), "банк-7")
        XCTAssertEqual(slugify("東京"), "東京")
        XCTAssertEqual(slugify("Москва, Йошкар-Ола"), "москва-йошкар-ола")
        XCTAssertEqual(slugify("नमस्ते दुनिया"), "नमस्ते-दुनिया", "vowel signs stay with their letters")
        XCTAssertEqual(slugify("Ελλάδα"), "ελλάδα")
        XCTAssertEqual(slugify("café 東京"), "cafe-東京")
        XCTAssertEqual(slugify("!!! ¿?"), "untitled")
    }

    func testRowsOfTwoLayoutsArePresentedEachByItsOwnColumns() throws {
        let config = try SiteConfig(yaml: """
            title: T
            baseURL: https://example.org/sub/
            collections:
              banks:
                kind: csv
                sources: banks.csv
                key: cert
                fields: {cert: text, name: text, state: text, tags: list}
                detail: {path: '/banks/{state}/{key}/', title: name}
            """, file: "sitegen.yml")
        let presenter = RecordPresenter(collection: config.collection(named: "banks")!, config: config)
        // Two queries' column orders, interleaved: a layout worked out for one must not be used for the other.
        let first = ["_id", "_key", "name", "state", "tags", "acquirer.name"]
        let second = ["state", "name", "_key", "_id"]
        let rows = [
            Row(columns: first, values: [1, "10538", "First Bank", "CA", #"["a","b"]"#, "Other"]),
            Row(columns: second, values: ["New York", .null, "K 2", 2]),
            Row(columns: first, values: [3, "77", "Third", "TX", "[]", .null]),
        ]
        let contexts = presenter.contexts(rows) { _ in [:] }
        func text(_ context: TemplateRecord, _ name: String) -> String? { (context[name] as? TemplateText)?.text }
        XCTAssertEqual(contexts.map { text($0, "url") }, ["/sub/banks/ca/10538/", "/sub/banks/new-york/k-2/", "/sub/banks/tx/77/"])
        XCTAssertEqual(contexts.map { text($0, "title") }, ["First Bank", "K 2", "Third"], "the name, else the key")
        XCTAssertEqual(contexts.map { text($0, "key") }, ["10538", "K 2", "77"])
        XCTAssertEqual(contexts.map { text($0, "state") }, ["CA", "New York", "TX"])
        XCTAssertEqual((contexts[0]["tags"] as? [TemplateText])?.map(\.text), ["a", "b"])
        XCTAssertNil(contexts[2]["tags"], "an empty list is no value")
        XCTAssertEqual(contexts.map { Set($0.dictionary.keys) }, [["name", "state", "tags", "key", "title", "url"], ["state", "key", "title", "url"],
                                                                  ["name", "state", "key", "title", "url"]])
        for (row, context) in zip(rows, contexts) {
            XCTAssertEqual(presenter.detailPath(row).map(presenter.url), text(context, "url"))
            XCTAssertEqual(presenter.title(row), text(context, "title"))
        }
    }

    func testTheSitemapsPartsAreNotPagesThatWentAway() {
        // The sitemap is made after every page is planned, and listing a hundred thousand pages again is
        // skipped when none came or went: its own files, not yet planned then, must not count as gone.
        let inputs = PageInputs(settings: 1, template: 2, data: 3)
        let paths = ["index.html", "page/2/index.html", "sitemap.xml", "sitemap-1.xml", "sitemap-2.xml", "robots.txt", "feed.xml"]
        let plan = RenderPlan(paths: paths, entries: paths.map { _ in PageRecord(inputs: inputs, hash: 0) }, renderAllReason: nil)
        for path in ["index.html", "page/2/index.html"] {
            XCTAssertFalse(plan.needsRender([path], inputs: inputs, about: PageRecord(inputs: nil, hash: 0), explain: { "" }))
        }
        XCTAssertTrue(plan.pageSetChanged(), "feed.xml was not planned: a page went away")
        XCTAssertFalse(plan.needsRender(["feed.xml"], inputs: inputs, about: PageRecord(inputs: nil, hash: 0), explain: { "" }))
        XCTAssertFalse(plan.pageSetChanged())
        XCTAssertTrue(RenderPlan.isSiteFile("sitemap-12.xml"))
        XCTAssertFalse(RenderPlan.isSiteFile("news/sitemap-1.xml"))
    }

    func testTheBasePathMatchesTheURLParser() throws {
        for baseURL in ["https://records.example.org/", "https://records.example.org", "https://x.org/sub/site/",
                        "http://x.org:8080/a/b", "https://x.org/my%20site/", "https://x.org/a?b=c", "https://x.org/a#f",
                        "/relative/", "file:///srv/site/", "https://user@x.org/p/"] {
            var config = try SiteConfig(yaml: """
                title: T
                baseURL: https://example.org/
                collections:
                  notes: {kind: markdown, sources: notes/*.md}
                """, file: "sitegen.yml")
            config.baseURL = baseURL
            // Escapes kept: links are written with the path as baseURL has it.
            let path = URL(string: baseURL)?.path(percentEncoded: true) ?? "/"
            XCTAssertEqual(config.basePath, path.hasSuffix("/") ? path : path + "/", baseURL)
        }
    }

    func testAFolderStatedOnTwoThreadsGivesEveryMatchingFileOnceSortedWithItsSize() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-glob-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("md")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
        var expected: [(String, Int64)] = []
        for number in 0..<5_003 {
            let name = "r\(number).md"
            let text = String(repeating: "x", count: number % 97)
            try text.write(to: folder.appendingPathComponent(name), atomically: false, encoding: .utf8)
            expected.append(("md/" + name, Int64(text.utf8.count)))
        }
        try "not matched".write(to: folder.appendingPathComponent("notes.txt"), atomically: false, encoding: .utf8)
        try "hidden".write(to: folder.appendingPathComponent(".hidden.md"), atomically: false, encoding: .utf8)
        try "below".write(to: folder.appendingPathComponent("sub/deep.md"), atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("linked.md"),
                                                   withDestinationURL: folder.appendingPathComponent("r7.md"))
        expected.append(("md/linked.md", 7))
        let entries = SourceGlob(pattern: "md/*.md").entries(under: root)
        XCTAssertEqual(entries.map(\.path), expected.map(\.0).sorted())
        let sizes = Dictionary(uniqueKeysWithValues: expected)
        XCTAssertEqual(entries.filter { sizes[$0.path] != $0.size }.map(\.path), [])
        XCTAssertEqual(SourceGlob(pattern: "md/**/*.md").entries(under: root).count, expected.count + 1, "recursive: sub/deep.md too")
    }
}
