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
