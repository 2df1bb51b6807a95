@testable import SiteSources
import TestSupport
import XCTest

/// The front matter fast path against Yams, its oracle: whatever the fast path accepts, Yams must read the
/// same fields from; whatever it declines goes to Yams, so the two never disagree on a file.
final class FrontMatterFastPathTests: XCTestCase {
    /// Pieces that values are made of: the plain shapes the fast path takes, and YAML's traps around them.
    private static let fragments = [
        "word", "Two words", "2003-11-16T21:11:37Z", "https://example.org/a?b=c#d", "x:y", "a: b", "a :b", "end:",
        "a #comment", "a#b", "It's", "say \"hi\"", "back\\slash", "-5", "- item", "?q", ":x", "&anchor", "*alias",
        "!tag", "!!str 1", "|", ">", "%", "@at", "`tick", "{a: b}", "[a, b]", "[]", "[ ]", "[a, [b]]", "[a,, b]",
        "[\"q\", b]", "['q', b]", "[a:b]", "[a, b,]", "[a b, c-d]", "[a, b] # c", "\"quoted\"", "\"\"", "''",
        "'single'", "'it''s'", "\"esc\\n\"", "\"open", "'open", "~", "null", "Null", "NULL", "nULL", "true", "yes",
        "no", "0x1F", "1e3", ".inf", "é café", "日本", "😀", "\u{85}x", "x\u{FEFF}", "\u{7F}", "\u{1}", "a\tb", "\u{A0}",
        "", " ", "  padded  ", "<<", "a,b", "a]b", "a}b", "a{b",
    ]
    private static let keys = ["title", "date", "tags", "state", "a-b", "_x", "9lives", "with space", "\"quoted\"",
                               "null", "y", "Title", "key:x"]

    private static func line(_ random: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<20, using: &random) {
        case 0: return ""
        case 1: return "# a comment"
        case 2: return "  indented: x"
        case 3: return "- item"
        case 4: return "   "
        case 5: return "\t"
        default:
            let key = keys.randomElement(using: &random)!
            var value = fragments.randomElement(using: &random)!
            if Int.random(in: 0..<4, using: &random) == 0 { value += fragments.randomElement(using: &random)! }
            let separator = [": ", ":", ":  ", " : ", ":\t"].randomElement(using: &random)!
            let end = ["", "", "", " ", "\r"].randomElement(using: &random)!
            return key + separator + value + end
        }
    }

    func testTheFastPathReadsWhatYamsReads() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 1...999_999)
        var random = SeededGenerator(seed: seed)
        var accepted = 0, declined = 0
        for _ in 0..<4000 {
            let lines = (0..<Int.random(in: 0...6, using: &random)).map { _ in Self.line(&random) }
            let yaml = lines.joined(separator: "\n")
            guard let fast = FrontMatterDocument.simpleFields(Array(yaml.utf8)[...]) else {
                declined += 1
                continue
            }
            accepted += 1
            do {
                let slow = try FrontMatterDocument.yamlFields(yaml, file: "t.md")
                XCTAssertEqual(fast, slow, "seed \(seed): fast path and Yams differ on:\n\(yaml)")
            } catch {
                XCTFail("seed \(seed): the fast path accepted YAML that Yams rejects (\(error)):\n\(yaml)")
            }
        }
        // Both sides must be exercised, or the comparison proves nothing.
        XCTAssertGreaterThan(accepted, 400, "seed \(seed)")
        XCTAssertGreaterThan(declined, 400, "seed \(seed)")
    }

    func testTheCorpusShapeTakesTheFastPath() throws {
        let yaml = """
        title: "Ashburg Community Bank closes"
        date: 2003-11-16T21:11:37Z
        state: GA
        tags: [mortgages-urban, property-state]
        source_url: https://records.example.org/item/16376
        summary: "Union shareholder rate, reserve: online."
        """
        let fields = try XCTUnwrap(FrontMatterDocument.simpleFields(Array(yaml.utf8)[...]))
        XCTAssertEqual(fields["title"], .text("Ashburg Community Bank closes"))
        XCTAssertEqual(fields["date"], .text("2003-11-16T21:11:37Z"))
        XCTAssertEqual(fields["tags"], .list(["mortgages-urban", "property-state"]))
        XCTAssertEqual(fields["summary"], .text("Union shareholder rate, reserve: online."))
    }

    func testCRLFFilesHaveFrontMatter() throws {
        let document = try FrontMatterDocument(parsing: "---\r\ntitle: About\r\ntags: [a, b]\r\n---\r\nBody\r\n", file: "a.md")
        XCTAssertEqual(document.fields["title"], .text("About"))
        XCTAssertEqual(document.fields["tags"], .list(["a", "b"]))
        XCTAssertEqual(document.body, "Body\r\n")
        XCTAssertEqual(document.bodyLine, 5)
    }

    func testABodyWithoutATrailingNewlineAndAnEmptyFrontMatter() throws {
        let empty = try FrontMatterDocument(parsing: "---\n---\nText", file: "a.md")
        XCTAssertTrue(empty.fields.isEmpty)
        XCTAssertEqual(empty.body, "Text")
        XCTAssertEqual(empty.bodyLine, 3)
        let noBody = try FrontMatterDocument(parsing: "\u{FEFF}---\ntitle: x\n---", file: "a.md")
        XCTAssertEqual(noBody.fields["title"], .text("x"))
        XCTAssertEqual(noBody.body, "")
    }
}
