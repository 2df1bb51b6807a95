import Foundation
import SiteSources
import XCTest

final class JSONTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8))
        return try parser.parseDocument()
    }

    func testValuesEscapesAndNumbersParse() throws {
        let value = try parse(#"{"a": [1, -2.5e1, true, null], "b": "caf\u00e9 \ud83d\ude00 \"q\"\n", "c": {}}"#)
        XCTAssertEqual(value["a"], .array([.number(1, integer: 1), .number(-25, integer: nil), .bool(true), .null]))
        XCTAssertEqual(value["b"]?.string, "café 😀 \"q\"\n")
        XCTAssertEqual(value["a"]?.array?.first?.scalarText, "1")
    }

    func testSyntaxErrorsNameTheLineAndColumn() {
        XCTAssertThrowsError(try parse("{\n  \"a\": 1,\n  \"b\": tru\n}")) { error in
            let error = error as? JSONParser.SyntaxError
            XCTAssertEqual(error?.line, 3)
            XCTAssertEqual(error?.column, 8)
        }
        for bad in ["[1,]", "{\"a\" 1}", "\"open", "01", "[1] x", "\"\\x\"", "\"\\ud800\"", String(repeating: "[", count: 600)] {
            XCTAssertThrowsError(try parse(bad), bad)
        }
    }

    func testAJSONFeedKeepsGoodItemsAndWarnsAboutBadOnes() throws {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/feeds/jsonfeed-1.1", withExtension: "json"))
        let feed = try FeedParser(file: "feed.json").parse(Data(contentsOf: url))
        XCTAssertEqual(feed.kind, .json11)
        XCTAssertEqual(feed.title, "Bank Failure News")
        XCTAssertEqual(feed.items.map(\.id), ["tag:news.example.org,2024-02-20:17443", "2"])
        let first = feed.items[0]
        XCTAssertEqual(first.published.map(FeedDate.rfc3339), "2024-02-20T22:30:00Z")
        XCTAssertEqual(first.author, "Newsroom Staff")
        XCTAssertEqual(first.categories, ["CA", "closings"])
        XCTAssertEqual(first.line, 7)
        XCTAssertNil(feed.items[1].published, "a missing date is no date, not now")
        XCTAssertEqual(feed.items[1].content, "<p>No date, a numeric id.</p>\n<p>Second &lt;paragraph&gt;.</p>")
        XCTAssertEqual(feed.warnings.map(\.line), [21, 22])
    }

    func testNDJSONAndJSONArraysBecomeTypedRecordsWithTheirLines() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fields: [(name: String, type: FieldType)] = [("id", .text), ("count", .integer), ("when", .date), ("open", .bool)]
        let ndjson = folder.appendingPathComponent("r.ndjson")
        try "{\"id\": \"a\", \"count\": 3, \"when\": \"2024-01-02\", \"open\": true, \"extra\": [1]}\n\n{\"id\": \"b\", \"count\": null}\n"
            .write(to: ndjson, atomically: true, encoding: .utf8)
        let lines = try JSONRecordSource(url: ndjson, displayName: "r.ndjson", layout: .lines, key: "id", fields: fields).read()
        XCTAssertEqual(lines.records.map(\.key), ["a", "b"])
        XCTAssertEqual(lines.records.map(\.line), [1, 3])
        XCTAssertEqual(lines.records[0].fields["count"], .integer(3))
        XCTAssertEqual(lines.records[0].fields["open"], .bool(true))
        XCTAssertEqual(lines.records[1].fields["count"], .null)
        XCTAssertEqual(try FieldType.integer.value(from: "42.0"), .integer(42), "pandas writes whole numbers so when a column has gaps")
        XCTAssertEqual(try FieldType.integer.value(from: "1,234.00"), .integer(1234))
        XCTAssertThrowsError(try FieldType.integer.value(from: "42.5"))
        try "{\"id\": \"a\", \"count\": 42.0}\n".write(to: ndjson, atomically: true, encoding: .utf8)
        XCTAssertEqual(try JSONRecordSource(url: ndjson, displayName: "r.ndjson", layout: .lines, key: "id", fields: fields).read()
            .records.first?.fields["count"], .integer(42))

        try "{\"id\": \"a\"}\n{\"id\": \"b\", \"count\": \"many\"}\n".write(to: ndjson, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try JSONRecordSource(url: ndjson, displayName: "r.ndjson", layout: .lines, key: "id", fields: fields).read()) { error in
            XCTAssertEqual((error as? SourceError)?.description, "r.ndjson:2: field 'count': expected an integer, found 'many'")
        }
        // A whole number past Int64 was quoted back as '1.2345678901234567e+19', which the file does not have.
        try "{\"id\": \"b\", \"count\": 12345678901234567890}\n".write(to: ndjson, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try JSONRecordSource(url: ndjson, displayName: "r.ndjson", layout: .lines, key: "id", fields: fields).read()) { error in
            XCTAssertEqual((error as? SourceError)?.description, "r.ndjson:1: field 'count': expected an integer, found a whole number above "
                + "the 64-bit range (-9223372036854775808 to 9223372036854775807)")
        }
        // A bad line does not hide the next ones: each is its own document.
        try "{\"id\": \"a\",}\n{\"id\": \"b\", \"count\": \"many\"}\n{\"id\": \"c\"}\n{\"count\": 1}\n".write(to: ndjson, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try JSONRecordSource(url: ndjson, displayName: "r.ndjson", layout: .lines, key: "id", fields: fields).read()) { error in
            XCTAssertEqual((error as? SourceError)?.all.map { $0.line ?? 0 }, [1, 2, 4], "\(error)")
        }
        try "{\"id\": \"a\", \"extra\": 1, \"extra\": 2}\n{\"id\": \"b\", \"count\": 1, \"count\": 2}\n".write(to: ndjson, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try JSONRecordSource(url: ndjson, displayName: "r.ndjson", layout: .lines, key: "id", fields: fields).read(),
                             "a repeated member that is not a field is ignored as the member is; a field's is an error") { error in
            XCTAssertEqual((error as? SourceError)?.description, "r.ndjson:2: field 'count' appears twice in one object; which one is meant is unclear")
        }
        try "{\"id\": \"a\"}\n{\"id\": \"b\",}\n".write(to: ndjson, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try JSONRecordSource(url: ndjson, displayName: "r.ndjson", layout: .lines, key: "id", fields: fields).read()) { error in
            XCTAssertEqual((error as? SourceError)?.line, 2)
        }

        let array = folder.appendingPathComponent("r.json")
        try "[\n  {\"id\": \"x\"},\n  {\"id\": \"y\"},\n  {\"id\": \"x\"}\n]".write(to: array, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try JSONRecordSource(url: array, displayName: "r.json", layout: .array, key: "id", fields: fields).read()) { error in
            XCTAssertEqual((error as? SourceError)?.description, "r.json:4: duplicate key 'x' in field 'id'; line 2 has it too")
        }
    }
}
