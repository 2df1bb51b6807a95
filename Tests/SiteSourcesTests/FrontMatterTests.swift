import Foundation
import SiteSources
import XCTest

final class FrontMatterTests: XCTestCase {
    func testFrontMatterFieldsAndBodyAreSeparated() throws {
        let document = try FrontMatterDocument(parsing: "---\ntitle: About\ntags: [a, b]\ndraft: ~\n---\n# Hello\n", file: "about.md")
        XCTAssertEqual(document.fields["title"], .text("About"))
        XCTAssertEqual(document.fields["tags"], .list(["a", "b"]))
        XCTAssertEqual(document.fields["draft"], .null)
        XCTAssertEqual(document.body, "# Hello\n")
        XCTAssertEqual(document.bodyLine, 6)
    }

    /// A 50 MB Markdown page took 0.9 to 3 GB to build (issue 42): a file past `maxPageBytes` is an error naming
    /// it, found from its size before a byte of it is read.
    func testAMarkdownFilePastTheLimitIsAnErrorNamingIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-big-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let big = folder.appendingPathComponent("big.md")
        let text = "---\ntitle: Big\n---\n" + String(repeating: "word ", count: MarkdownSource.maxPageBytes / 5)
        try text.write(to: big, atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try MarkdownSource(url: big, displayName: "pages/big.md", fields: [("title", .text)]).read()) { error in
            XCTAssertEqual("\(error)", "pages/big.md: is 8,388,624 bytes, more than the 8 MiB a Markdown page may have "
                           + "(maxPageBytes); split it into several pages")
        }
        let fits = "---\ntitle: Fits\n---\n" + String(repeating: "word ", count: MarkdownSource.maxPageBytes / 5 - 10)
        try fits.write(to: big, atomically: false, encoding: .utf8)
        XCTAssertEqual(try MarkdownSource(url: big, displayName: "pages/big.md", fields: [("title", .text)]).read().records.count, 1)
    }

    func testANullItemOfAListIsNoItem() throws {
        let block = try FrontMatterDocument(parsing: "---\ntags:\n  - ~\n  - null\n  -\n  - real\n  - \"~\"\n---\n", file: "a.md")
        XCTAssertEqual(block.fields["tags"], .list(["real", "~"]), "a quoted ~ is text")
        let flow = try FrontMatterDocument(parsing: "---\ntags: [~, real, null]\n---\n", file: "a.md")
        XCTAssertEqual(flow.fields["tags"], .list(["real"]))
    }

    func testABlockScalarKeepsItsLastNewlineWhereverItIs() throws {
        for text in ["---\ntitle: T\nsummary: |\n  a\n  b\n---\nbody\n", "---\nsummary: |\n  a\n  b\ntitle: T\n---\nbody\n",
                     "---\r\ntitle: T\r\nsummary: |\r\n  a\r\n  b\r\n---\r\nbody\r\n"] {
            XCTAssertEqual(try FrontMatterDocument(parsing: text, file: "a.md").fields["summary"], .text("a\nb\n"), text)
        }
        XCTAssertEqual(try FrontMatterDocument(parsing: "---\ntitle: T\nsummary: >-\n  a\n  b\n---\n", file: "a.md").fields["summary"], .text("a b"))
    }

    func testAMarkdownRecordIsKeyedByItsFileNameWithoutExtensionAsFoundationHasIt() throws {
        let names = ["a.md", "a.b.md", "x.tar.gz", ".md", ".hidden.md", "..md", "...md", "..a.md", "a.", "a..md", "a.md.",
                     "noext", "a b.md", "a.m d", "a.MD", "é.md", "ça.va.mä", ". .md", " .md", "-.md", "a.-", "..", "x..", "..x"]
        for name in names {
            let path = "/site/posts/" + name
            let expected = URL(fileURLWithPath: path, isDirectory: false).deletingPathExtension().lastPathComponent
            let text = Data("---\ntitle: T\n---\nbody\n".utf8)
            for source in [MarkdownSource(path: path, displayName: name, fields: [("title", .text)]),
                           MarkdownSource(url: URL(fileURLWithPath: path), displayName: name, fields: [("title", .text)])]
            {
                XCTAssertEqual(try source.read(text).records.map(\.key), [expected], name)
            }
        }
    }

    func testAnIndexFileIsKeyedByItsFolderAsAHugoPageBundleIs() throws {
        let text = Data("---\ntitle: T\n---\nbody\n".utf8)
        for (path, key) in [("/site/posts/hello/index.md", "hello"), ("/site/posts/world/index.markdown", "world"),
                            ("/site/posts/_index.md", "_index"), ("/site/posts/indexes.md", "indexes"), ("index.md", "index")] {
            let record = try MarkdownSource(path: path, displayName: path, fields: [("title", .text)]).read(text).records.first
            XCTAssertEqual(record?.key, key, path)
        }
    }

    /// A Latin-1 or UTF-16 Markdown file was "not UTF-8 text", with no line or byte to look for, as a CSV
    /// field's error has.
    func testAMarkdownFileThatIsNotUTF8IsReportedAtItsLineAndByte() {
        let source = MarkdownSource(path: "/site/posts/a.md", displayName: "posts/a.md", fields: [("title", .text)])
        let latin1 = Data("---\ntitle: T\n---\nLe caf".utf8) + Data([0xE9]) + Data(" est bon\n".utf8)
        XCTAssertThrowsError(try source.read(latin1)) {
            XCTAssertEqual("\($0)", "posts/a.md:4: is not UTF-8 text (byte 0xE9 after 'Le caf'); save the file as UTF-8")
        }
        let utf16 = Data([0xFF, 0xFE]) + "---\ntitle: T\n---\n".data(using: .utf16LittleEndian)!
        XCTAssertThrowsError(try source.read(utf16)) {
            XCTAssertEqual("\($0)", "posts/a.md:1: is UTF-16 text, not UTF-8; save the file as UTF-8")
        }
    }

    func testAFileWithoutFrontMatterIsAllBody() throws {
        let document = try FrontMatterDocument(parsing: "# Just text\n", file: "a.md")
        XCTAssertTrue(document.fields.isEmpty)
        XCTAssertEqual(document.body, "# Just text\n")
    }

    /// A Hugo post's TOML or JSON front matter was published as the page's first paragraph, without a word.
    func testTOMLAndJSONFrontMatterAreErrorsThatSayToWriteYAML() throws {
        for (text, format) in [("+++\ntitle = \"T\"\n+++\nBody\n", "TOML ('+++')"), ("+++\r\ntitle = \"T\"\r\n+++\r\nBody\r\n", "TOML ('+++')"), ("\u{FEFF}{\n  \"title\": \"T\"\n}\nBody\n", "JSON"),
                               ("{\"title\": \"T\"}\nBody\n", "JSON")] {
            XCTAssertThrowsError(try FrontMatterDocument(parsing: text, file: "a.md")) {
                XCTAssertEqual("\($0)", "a.md:1: front matter in \(format) is not read; write it as YAML between '---' lines (`hugo convert toYAML` converts a Hugo site's)")
            }
        }
        // Text that only starts like them is a body.
        for text in ["+++ not a fence\n", "{{< shortcode >}}\n", "{% include x %}\n", "{not json}\n"] {
            XCTAssertEqual(try FrontMatterDocument(parsing: text, file: "a.md").body, text)
        }
    }

    func testInvalidYAMLIsReportedAtItsLineInTheFile() {
        XCTAssertThrowsError(try FrontMatterDocument(parsing: "---\ntitle: ok\nbad: [unclosed\n---\nbody\n", file: "a.md")) { error in
            let error = error as? SourceError
            XCTAssertEqual(error?.file, "a.md")
            XCTAssertEqual(error?.line, 4, "the YAML error is on the line of the closing ']' that never comes, counted in the file")
            XCTAssertTrue(error?.reason.hasPrefix("invalid YAML front matter") == true)
        }
    }

    func testUnclosedFrontMatterIsAnError() {
        XCTAssertThrowsError(try FrontMatterDocument(parsing: "---\ntitle: x\n", file: "a.md")) { error in
            XCTAssertEqual((error as? SourceError)?.line, 1)
        }
    }

    func testAValueOfTheWrongTypeAndUndeclaredKeysAreReportedOnTheirOwnLines() throws {
        let fields: [(name: String, type: FieldType)] = [("title", .text), ("tags", .list), ("draft", .bool), ("date", .date)]
        // The simple shape (read without Yams) and one Yams reads (a block list), each with a blank line.
        for tags in ["tags: [a]", "tags:\n  - a\n  - b"] {
            let text = "---\ntitle: Post\n\(tags)\ndraft: false\n\n\"date\": nope\n---\nBody\n"
            let line = text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("\"date\"") }! + 1
            XCTAssertThrowsError(try MarkdownSource(path: "/p/post.md", displayName: "posts/post.md", fields: fields).read(Data(text.utf8))) { error in
                XCTAssertEqual((error as? SourceError)?.description,
                               "posts/post.md:\(line): front matter 'date': expected a date (YYYY-MM-DD, MM/DD/YYYY or DD-Mon-YY), found 'nope'")
            }
            let undeclared = "---\ntitle: Post\n\(tags)\nzeta: 1\nalpha: 2\n---\nBody\n"
            let read = try MarkdownSource(path: "/p/post.md", displayName: "posts/post.md", fields: fields).read(Data(undeclared.utf8))
            let zeta = undeclared.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("zeta") }! + 1
            XCTAssertEqual(read.warnings.map(\.description),
                           ["posts/post.md:\(zeta): front matter keys not declared as fields are ignored: alpha, zeta"])
        }
    }

    func testADraftOrAnUnpublishedFileIsNoRecord() throws {
        let fields: [(name: String, type: FieldType)] = [("title", .text), ("published", .date)]
        func records(_ frontMatter: String) throws -> [String] {
            try MarkdownSource(path: "/p/post.md", displayName: "p/post.md", fields: fields)
                .read(Data("---\ntitle: Post\n\(frontMatter)\n---\nBody\n".utf8)).records.map(\.key)
        }
        XCTAssertEqual(try records("draft: true"), [], "Hugo's convention")
        XCTAssertEqual(try records("published: false"), [], "Jekyll's")
        XCTAssertEqual(try records("draft: false"), ["post"])
        XCTAssertEqual(try records("published: 2024-01-02"), ["post"], "a date field of that name publishes")
        let warnings = try MarkdownSource(path: "/p/post.md", displayName: "p/post.md", fields: [("title", .text)])
            .read(Data("---\ntitle: Post\ndraft: false\n---\n".utf8)).warnings
        XCTAssertEqual(warnings, [], "the conventions need no declaring")
    }

    func testWithDraftsIncludedADraftIsARecordWhoseDraftFieldIsTrue() throws {
        let fields: [(name: String, type: FieldType)] = [("title", .text), ("draft", .bool)]
        func draft(_ frontMatter: String) throws -> [FieldValue?] {
            var source = MarkdownSource(path: "/p/post.md", displayName: "p/post.md", fields: fields)
            source.includesDrafts = true
            return try source.read(Data("---\ntitle: Post\n\(frontMatter)\n---\nBody\n".utf8)).records.map { $0.fields["draft"] }
        }
        XCTAssertEqual(try draft("draft: true"), [.bool(true)], "Hugo's convention")
        XCTAssertEqual(try draft("published: false"), [.bool(true)], "Jekyll's")
        XCTAssertEqual(try draft("draft: false"), [.bool(false)])
        XCTAssertEqual(try draft("tags: [a]"), [.bool(false)], "no word of it: no draft")
    }

    func testADuplicateKeyIsAnError() {
        XCTAssertThrowsError(try FrontMatterDocument(parsing: "---\ntitle: a\ntitle: b\n---\n", file: "a.md")) { error in
            XCTAssertEqual((error as? SourceError)?.line, 3)
        }
    }
}
