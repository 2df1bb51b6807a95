import Foundation
@testable import SiteSources
import TestSupport
import XCTest

/// Record files are read a chunk at a time: whatever the chunk boundaries, the hash, the lines and the
/// rows must be what reading the whole file gives.
final class StreamingTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Splits `bytes` at random places (seeded), as chunked reads would.
    private func randomPieces(_ bytes: [UInt8], seed: UInt64) -> [[UInt8]] {
        var generator = SeededGenerator(seed: seed)
        var pieces: [[UInt8]] = []
        var start = 0
        while start < bytes.count {
            let length = Int(generator.next() % 40)
            let end = min(bytes.count, start + length)
            pieces.append(Array(bytes[start..<end]))
            start = end
        }
        return pieces
    }

    func testTheContentHashDoesNotDependOnHowTheBytesAreSplit() {
        let bytes = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) }
        var whole = ContentHash()
        whole.combine(bytes: Data(bytes))
        for seed in 1...50 as ClosedRange<UInt64> {
            var pieced = ContentHash()
            for piece in randomPieces(bytes, seed: seed) { piece.withUnsafeBytes { pieced.combine(bytes: $0) } }
            XCTAssertEqual(pieced.value, whole.value, "seed \(seed)")
        }
        var shorter = ContentHash()
        shorter.combine(bytes: Data(bytes.dropLast()))
        XCTAssertNotEqual(shorter.value, whole.value)
        var changed = bytes
        changed[500] ^= 1
        var other = ContentHash()
        other.combine(bytes: Data(changed))
        XCTAssertNotEqual(other.value, whole.value, "one flipped bit changes the hash")
        XCTAssertNotEqual(ContentHash.of("ab") , { var h = ContentHash(); h.combine("a"); h.combine("b"); return h.signed }())
    }

    func testLinesSpanningChunksComeWholeWithTheirNumbersAndTheLastNeedsNoNewline() throws {
        let long = String(repeating: "x", count: SourceInput.chunkSize * 2 + 17)
        let text = "first\n\(long)\n\nlast"
        let url = folder.appendingPathComponent("lines.txt")
        try text.write(to: url, atomically: true, encoding: .utf8)
        var input = try SourceInput(contentsOf: url, displayName: "lines.txt")
        var lines: [(String, Int)] = []
        input.forEachLine { line, number in lines.append((String(decoding: line, as: UTF8.self), number)) }
        XCTAssertEqual(lines.map(\.0), ["first", long, "", "last"])
        XCTAssertEqual(lines.map(\.1), [1, 2, 3, 4])
        XCTAssertEqual(input.bytesRead, Int64(text.utf8.count))
        var whole = ContentHash()
        whole.combine(bytes: Data(text.utf8))
        XCTAssertEqual(input.hash.value, whole.value, "the streamed hash is the whole file's")
    }

    func testCSVFedInPiecesOfAnySizeGivesTheRowsOfTheWholeText() throws {
        let text = "\u{FEFF}name,notes\r\n\"Farmers & Merchants, Inc.\",\"said \"\"hi\"\"\nand left\"\r\nBeta,plain\n\"\",\"\"\"\"\nZ,\"é\"\n"
        let expected = try CSVReader(file: "a.csv").read(text)
        XCTAssertEqual(expected.rows.count, 4)
        for seed in 1...200 as ClosedRange<UInt64> {
            var reader = CSVReader(file: "a.csv")
            var rows: [CSVReader.Row] = []
            for piece in randomPieces(Array(text.utf8), seed: seed) {
                try piece.withUnsafeBytes { buffer in try reader.feed(buffer) { rows.append($0) } }
            }
            try reader.finish { rows.append($0) }
            XCTAssertEqual(CSVReader.columnNames(rows[0]), expected.header, "seed \(seed)")
            XCTAssertEqual(Array(rows.dropFirst()), expected.rows, "seed \(seed)")
        }
    }

    func testACSVFieldThatIsNotUTF8IsAnErrorAtItsLine() {
        var bytes = Array("a,b\n1,2\n3,".utf8)
        bytes += [0xC3, 0x28, 0x0A]
        XCTAssertThrowsError(try CSVSource(url: folder.appendingPathComponent("x.csv"), displayName: "x.csv", key: "a",
                                           fields: [("a", .integer), ("b", .text)]).read(Data(bytes))) { error in
            XCTAssertEqual((error as? SourceError)?.description, "x.csv:3: field 2 is not UTF-8 text (byte 0xC3); save the file as UTF-8")
        }
        // Latin-1: the field and the byte are named, with the text before it.
        bytes = Array("a,b\n1,\"Caf".utf8) + [0xE9, 0x20] + Array("Bleu\"\n".utf8)
        XCTAssertThrowsError(try CSVSource(url: folder.appendingPathComponent("x.csv"), displayName: "x.csv", key: "a",
                                           fields: [("a", .integer), ("b", .text)]).read(Data(bytes))) { error in
            XCTAssertEqual((error as? SourceError)?.description, "x.csv:2: field 2 is not UTF-8 text (byte 0xE9 after 'Caf'); save the file as UTF-8")
        }
        // In a quoted field over several lines: the byte's own line, and only its line's text before it.
        bytes = Array("a,b\n1,\"first | line\nCaf".utf8) + [0xE9] + Array("\nlast\"\n2,x\n".utf8)
        XCTAssertThrowsError(try CSVSource(url: folder.appendingPathComponent("x.csv"), displayName: "x.csv", key: "a",
                                           fields: [("a", .integer), ("b", .text)]).read(Data(bytes))) { error in
            XCTAssertEqual((error as? SourceError)?.description, "x.csv:3: field 2 is not UTF-8 text (byte 0xE9 after 'Caf'); save the file as UTF-8")
        }
        // A file saved as UTF-16 (Excel's "Unicode text") is named as that.
        bytes = [0xFF, 0xFE] + Array("a,b\n1,x\n".data(using: .utf16LittleEndian)!)
        XCTAssertThrowsError(try CSVSource(url: folder.appendingPathComponent("x.csv"), displayName: "x.csv", key: "a",
                                           fields: [("a", .integer), ("b", .text)]).read(Data(bytes))) { error in
            XCTAssertEqual((error as? SourceError)?.description, "x.csv:1: is UTF-16 text, not UTF-8; save the file as UTF-8")
        }
    }

    /// UTF-16 without a byte order mark, and JSON, NDJSON or a JSON Feed in UTF-16 with or without one, were
    /// reported as a bad first character or a header of spaced-out letters (`n a m e`).
    func testUTF16InEveryFormatIsNamedAsThat() throws {
        let expected = "is UTF-16 text, not UTF-8; save the file as UTF-8"
        func utf16(_ text: String, bigEndian: Bool = false, mark: Bool = false) -> Data {
            let body = text.data(using: bigEndian ? .utf16BigEndian : .utf16LittleEndian)!
            return mark ? Data(bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) + body : body
        }
        let csv = CSVSource(url: folder.appendingPathComponent("x.csv"), displayName: "x.csv", key: "name", fields: [("name", .text), ("city", .text)])
        let ndjson = JSONRecordSource(url: folder.appendingPathComponent("x.ndjson"), displayName: "x.ndjson", layout: .lines, key: "id", fields: [("id", .integer)])
        let json = JSONRecordSource(url: folder.appendingPathComponent("x.json"), displayName: "x.json", layout: .array, key: "id", fields: [("id", .integer)])
        let cases: [(String, () throws -> Void)] = [
            ("x.csv", { _ = try csv.read(utf16("name,city\nA,B\n")) }),
            ("x.csv", { _ = try csv.read(utf16("name,city\nA,B\n", bigEndian: true)) }),
            ("x.ndjson", { _ = try ndjson.read(utf16("{\"id\": 1}\n", bigEndian: true)) }),
            ("x.json", { _ = try json.read(utf16("[{\"id\": 1}]", mark: true)) }),
            ("f.json", { _ = try FeedParser(file: "f.json").parse(utf16(#"{"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": []}"#, mark: true)) }),
        ]
        for (file, read) in cases {
            XCTAssertThrowsError(try read(), file) { XCTAssertEqual(($0 as? SourceError)?.description, "\(file):1: \(expected)") }
        }
        // UTF-8 that merely holds a NUL is not taken for UTF-16, nor is a UTF-16 XML feed refused: XML may be UTF-16.
        XCTAssertEqual(try csv.read(Data("name,city\nA\u{0}x,B\n".utf8)).records.count, 1)
        let rss = #"<?xml version="1.0" encoding="UTF-16"?><rss version="2.0"><channel><title>T</title><item><guid>g</guid><title>A</title></item></channel></rss>"#
        XCTAssertEqual(try FeedParser(file: "f.xml").parse(utf16(rss, mark: true)).items.count, 1)
    }

    /// The parts of `text` as `JSONStreamReader` hands them over when fed in `pieces`, or the error.
    private func parts(_ text: String, layout: JSONStreamReader.Layout, pieces: [[UInt8]]) -> Result<[String], SourceError> {
        var reader = JSONStreamReader(layout: layout)
        var parts: [String] = []
        func handle(_ part: JSONStreamReader.Part) {
            switch part {
            case .element(let value, let line): parts.append("\(line):\(value.serialized(pretty: false))")
            case .member(let name, let value): parts.append("\(name)=\(value.serialized(pretty: false))")
            }
        }
        let located = { (error: JSONParser.SyntaxError) in SourceError(file: "f", line: error.line, column: error.column, reason: error.reason) }
        return Result { () throws(SourceError) in
            for piece in pieces {
                try withTypedBytes(of: piece) { (bytes: UnsafeRawBufferPointer) throws(SourceError) in try reader.feed(bytes, emit: handle, error: located) }
            }
            try reader.finish(emit: handle, error: located)
            return parts
        }
    }

    func testJSONArraysAndFeedsSplitIntoTheSameValuesWhateverTheChunks() throws {
        let array = "\u{FEFF}[\n  {\"id\": \"a\", \"n\": [1, {\"x\": \"]}\\\"\"}]},\n  \"s\\\"]\", 12.5e1 ,true,null,\n  []\n]\n"
        let feed = "{\"items\": [ {\"id\": \"1\"},\n{\"id\": \"2\"} ], \"title\": \"T\", \"version\": \"https://jsonfeed.org/version/1.1\"}"
        for (text, layout, expected) in [
            (array, JSONStreamReader.Layout.array,
             [#"2:{"id":"a","n":[1,{"x":"]}\""}]}"#, #"3:"s\"]""#, "3:125.0", "3:true", "3:null", "4:[]"]),
            (feed, .object(streamedMember: "items"),
             [#"1:{"id":"1"}"#, #"2:{"id":"2"}"#, #"title="T""#, #"version="https://jsonfeed.org/version/1.1""#]),
        ] {
            for seed in 1...100 as ClosedRange<UInt64> {
                XCTAssertEqual(try parts(text, layout: layout, pieces: randomPieces(Array(text.utf8), seed: seed)).get(), expected, "seed \(seed)")
            }
        }
    }

    func testJSONStructureErrorsNameTheirLineAndColumn() {
        func error(_ text: String, _ layout: JSONStreamReader.Layout = .array) -> String? {
            guard case .failure(let error) = parts(text, layout: layout, pieces: [Array(text.utf8)]) else { return nil }
            return error.description
        }
        XCTAssertEqual(error("[\n {\"id\": 1},\n {\"id\": 2,}\n]"), "f:3:11: unexpected character '}'; expected a quoted member name")
        XCTAssertEqual(error("[{\"id\": 1} {\"id\": 2}]"), "f:1:12: unexpected character '{'; expected ',' or ']' in the array")
        XCTAssertEqual(error("[1,]"), "f:1:4: unexpected character ']'; expected a value")
        XCTAssertEqual(error("[1]\nx"), "f:2:1: unexpected text after the array")
        XCTAssertEqual(error("[1, 2"), "f:1:6: the text ends; expected ',' or ']' in the array")
        XCTAssertEqual(error("{\"id\": 1}"), "f:1:1: unexpected character '{'; expected '[': the file must hold an array of objects")
        XCTAssertEqual(error("{\"items\": {}}", .object(streamedMember: "items")), "f:1:11: unexpected character '{'; expected '[': items is an array")
        XCTAssertNil(error("[]"))
    }

    func testNDJSONLargerThanAChunkIsReadRecordByRecord() throws {
        let url = folder.appendingPathComponent("big.ndjson")
        let body = String(repeating: "lorem ipsum ", count: 100)
        var text = ""
        for index in 0..<3_000 { text += "{\"id\": \"r\(index)\", \"body\": \"\(body)\\n\(index)\"}\n" }
        XCTAssertGreaterThan(text.utf8.count, SourceInput.chunkSize * 3)
        try text.write(to: url, atomically: true, encoding: .utf8)
        let source = JSONRecordSource(url: url, displayName: "big.ndjson", layout: .lines, key: "id", fields: [("id", .text), ("body", .text)])
        var input = try SourceInput(contentsOf: url, displayName: "big.ndjson")
        var count = 0
        _ = try source.read(&input) { record in
            XCTAssertEqual(record.line, count + 1)
            XCTAssertEqual(record.fields["body"], .text(body + "\n\(count)"))
            count += 1
        }
        XCTAssertEqual(count, 3_000)
    }
}
