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

    func testAFileWithoutFrontMatterIsAllBody() throws {
        let document = try FrontMatterDocument(parsing: "# Just text\n", file: "a.md")
        XCTAssertTrue(document.fields.isEmpty)
        XCTAssertEqual(document.body, "# Just text\n")
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

    func testADuplicateKeyIsAnError() {
        XCTAssertThrowsError(try FrontMatterDocument(parsing: "---\ntitle: a\ntitle: b\n---\n", file: "a.md")) { error in
            XCTAssertEqual((error as? SourceError)?.line, 3)
        }
    }
}
