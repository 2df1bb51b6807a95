import SiteSources
import XCTest

final class CSVReaderTests: XCTestCase {
    func testQuotedFieldsKeepCommasQuotesAndNewlinesAndRowsKeepTheirStartingLine() throws {
        let text = "\u{FEFF}name,notes\r\n\"Farmers & Merchants, Inc.\",\"said \"\"hi\"\"\nand left\"\r\nBeta,plain\n"
        let (header, rows) = try CSVReader(file: "banks.csv").read(text)
        XCTAssertEqual(header, ["name", "notes"])
        XCTAssertEqual(rows.map(\.fields), [["Farmers & Merchants, Inc.", "said \"hi\"\nand left"], ["Beta", "plain"]])
        XCTAssertEqual(rows.map(\.line), [2, 4])
    }

    func testAnUnclosedQuoteIsReportedWhereItOpens() {
        XCTAssertThrowsError(try CSVReader(file: "banks.csv").read("a,b\n1,2\n3,\"open\n5,6\n")) { error in
            XCTAssertEqual(error as? SourceError, SourceError(file: "banks.csv", line: 3, column: 3,
                reason: "a quoted field is never closed; expected a closing quote (\")"))
        }
    }

    /// A quote left open ran on to a later quoted field, and the error named that later line, which was right:
    /// `b.csv:5:6: text after a closing quote`. The line where the field opened is the one to fix.
    func testAQuoteLeftOpenUntilALaterQuoteIsReportedWhereItOpens() {
        let text = "id,name,notes\n1,A,\"forgot to close\n2,B,plain\n3,C,plain\n4,D,\"He said \"\"hi\"\"\"\n5,E,plain\n"
        XCTAssertThrowsError(try CSVReader(file: "b.csv").read(text)) { error in
            XCTAssertEqual((error as? SourceError)?.description, "b.csv:2:5: a quoted field opens here and runs to line 5, where text follows "
                           + "the quote that closes it; is its closing quote (\") missing?")
        }
        // On one line, the text after the quote is the mistake.
        XCTAssertThrowsError(try CSVReader(file: "b.csv").read("a,b\n\"x\"y,2\n")) { error in
            XCTAssertEqual((error as? SourceError)?.description, "b.csv:2:4: text after a closing quote; expected a comma or the end of the line")
        }
    }

    func testARowWithTheWrongNumberOfFieldsNamesItsLine() {
        XCTAssertThrowsError(try CSVReader(file: "banks.csv").read("a,b\n1,2\n3\n")) { error in
            XCTAssertEqual((error as? SourceError)?.description, "banks.csv:3: 1 fields, but the header names 2")
        }
    }

    func testAQuoteInsideAnUnquotedFieldIsAnError() {
        XCTAssertThrowsError(try CSVReader(file: "x.csv").read("a\nab\"c\n")) { error in
            XCTAssertEqual((error as? SourceError)?.line, 2)
        }
    }

    func testABareCREndsARowAsExcelForMacWritesThem() throws {
        let (header, rows) = try CSVReader(file: "a.csv").read("id,name\r1,A\r2,B\r")
        XCTAssertEqual(header, ["id", "name"])
        XCTAssertEqual(rows.map(\.fields), [["1", "A"], ["2", "B"]])
        XCTAssertEqual(rows.map(\.line), [2, 3])
    }

    func testLFCRLFAndBareCREachCountAsOneLineAndAQuotedCRStaysInTheValue() throws {
        let (_, rows) = try CSVReader(file: "a.csv").read("a,b\n1,2\r\n3,4\r\"x\ry\",\"p\r\nq\"\r5,6")
        XCTAssertEqual(rows.map(\.fields), [["1", "2"], ["3", "4"], ["x\ry", "p\r\nq"], ["5", "6"]])
        XCTAssertEqual(rows.map(\.line), [2, 3, 4, 7])
        XCTAssertThrowsError(try CSVReader(file: "a.csv").read("a,b\r1,2\r\r3\r")) { error in
            XCTAssertEqual((error as? SourceError)?.description, "a.csv:4: 1 fields, but the header names 2")
        }
        XCTAssertThrowsError(try CSVReader(file: "a.csv").read("a,b\r\"x\ry\",2\r3,\"open\r")) { error in
            XCTAssertEqual(error as? SourceError, SourceError(file: "a.csv", line: 4, column: 3,
                reason: "a quoted field is never closed; expected a closing quote (\")"))
        }
    }

    func testACRLFSplitAcrossChunksIsOneLineEnd() throws {
        let text = "a,b\r\n1,\"x\r\ny\"\r\n2,z\r3,w\n"
        let whole = try CSVReader(file: "a.csv").read(text)
        XCTAssertEqual(whole.rows.map(\.fields), [["1", "x\r\ny"], ["2", "z"], ["3", "w"]])
        XCTAssertEqual(whole.rows.map(\.line), [2, 4, 5])
        let bytes = Array(text.utf8)
        for cut in 0...bytes.count {
            var reader = CSVReader(file: "a.csv")
            var rows: [CSVReader.Row] = []
            for piece in [Array(bytes[..<cut]), Array(bytes[cut...])] {
                try piece.withUnsafeBytes { buffer in try reader.feed(buffer) { rows.append($0) } }
            }
            try reader.finish { rows.append($0) }
            XCTAssertEqual(rows.first?.fields, ["a", "b"], "cut at \(cut)")
            XCTAssertEqual(Array(rows.dropFirst()), whole.rows, "cut at \(cut)")
        }
    }

    func testAFileFailsAtItsFirstBadRowAndReportsTheNextOnesWithIt() throws {
        let fields: [(name: String, type: FieldType)] = [("id", .integer), ("name", .text), ("closed", .date)]
        let source = CSVSource(url: URL(fileURLWithPath: "/nonexistent/a.csv"), displayName: "a.csv", key: "id", fields: fields)
        let text = "id,name,closed\n1,A,2024-01-01\n2,B\n3,C,2024-13-45\n4,D,2024-01-02\n1.5,E,2024-01-03\n1,F,2024-01-04\n"
        XCTAssertThrowsError(try source.read(Data(text.utf8))) { error in
            XCTAssertEqual((error as? SourceError)?.all.map(\.description), [
                "a.csv:3: 2 fields, but the header names 3",
                "a.csv:4: column 'closed': expected a date (YYYY-MM-DD, MM/DD/YYYY or DD-Mon-YY), found '2024-13-45'",
                "a.csv:6: column 'id': expected an integer, found '1.5'",
                "a.csv:7: duplicate key '1' in column 'id'; line 2 has it too",
            ])
        }
        // An unclosed quote ends the read: it is the last problem listed.
        XCTAssertThrowsError(try source.read(Data("id,name,closed\n2,B\n3,\"C,2024-01-01\n".utf8))) { error in
            XCTAssertEqual((error as? SourceError)?.all.count, 2)
        }
        let many = "id,name,closed\n" + (1...30).map { "\($0),N,never\n" }.joined()
        XCTAssertThrowsError(try source.read(Data(many.utf8))) { error in
            let all = (error as? SourceError)?.all ?? []
            XCTAssertEqual(all.count, 1 + SourceError.moreLimit, "a few, not every row")
            // The rest are counted: ten rows listed of thirty said nothing of the twenty others.
            XCTAssertEqual(all.last?.description, "a.csv:11: column 'closed': expected a date (YYYY-MM-DD, MM/DD/YYYY or DD-Mon-YY), found 'never' "
                + "(and 20 more problems after this line, not listed; fix these and build again to see them)")
            XCTAssertEqual((error as? SourceError)?.count, 30)
        }
        // The error that ends a read is listed past the limit too.
        XCTAssertThrowsError(try source.read(Data((many + "31,\"N,never\n").utf8))) { error in
            let all = (error as? SourceError)?.all ?? []
            XCTAssertEqual(all.count, 1 + SourceError.moreLimit + 1)
            XCTAssertEqual(all.last?.reason, "a quoted field is never closed; expected a closing quote (\")")
        }
    }

    func testCSVSourceReadsAFileWithBareCRLineEnds() throws {
        let fields: [(name: String, type: FieldType)] = [("id", .integer), ("name", .text), ("note", .text)]
        let source = CSVSource(url: URL(fileURLWithPath: "/nonexistent/a.csv"), displayName: "a.csv", key: "id", fields: fields)
        let result = try source.read(Data("id,name,note\r1,A,\r2,B,\r".utf8))
        XCTAssertEqual(result.records.map(\.key), ["1", "2"])
        XCTAssertEqual(result.records.map(\.line), [2, 3])
        XCTAssertEqual(result.records[1].fields["name"], .text("B"))
    }

    func testCSVSourceTypesColumnsAndRejectsAValueOfTheWrongType() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("banks.csv")
        let fields: [(name: String, type: FieldType)] = [("cert", .integer), ("closed", .date), ("name", .text)]
        try "cert,name,closed,extra\n10538,Alpha,1-May-23,x\n10539,Beta,2023-06-02,y\n".write(to: url, atomically: true, encoding: .utf8)
        let result = try CSVSource(url: url, displayName: "banks.csv", key: "cert", fields: fields).read()
        XCTAssertEqual(result.records.map(\.key), ["10538", "10539"])
        XCTAssertEqual(result.records[0].fields["closed"], .text("2023-05-01"))
        XCTAssertEqual(result.records[0].fields["cert"], .integer(10538))
        XCTAssertEqual(result.warnings.map(\.reason), ["columns not declared as fields are ignored: extra"])
        // Excel pads a header with empty names, and exports may repeat a column no field reads: ignored.
        try "cert,name,closed,Notes,Notes,,\n10538,Alpha,1-May-23,x,y,,\n".write(to: url, atomically: true, encoding: .utf8)
        let padded = try CSVSource(url: url, displayName: "banks.csv", key: "cert", fields: fields).read()
        XCTAssertEqual(padded.records.map(\.key), ["10538"])
        XCTAssertEqual(padded.warnings.map(\.reason), ["columns not declared as fields are ignored: Notes, (unnamed)"])
        try "cert,name,closed,name\n10538,Alpha,1-May-23,Beta\n".write(to: url, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try CSVSource(url: url, displayName: "banks.csv", key: "cert", fields: fields).read()) { error in
            XCTAssertEqual((error as? SourceError)?.description, "banks.csv:1: the header names column 'name' twice")
        }

        try "cert,name,closed\n10538,Alpha,2023-05-01\nabc,Beta,2023-06-02\n".write(to: url, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try CSVSource(url: url, displayName: "banks.csv", key: "cert", fields: fields).read()) { error in
            XCTAssertEqual((error as? SourceError)?.description, "banks.csv:3: column 'cert': expected an integer, found 'abc'")
        }

        try "cert,name,closed\n1,A,2023-05-01\n1,B,2023-06-02\n".write(to: url, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try CSVSource(url: url, displayName: "banks.csv", key: "cert", fields: fields).read()) { error in
            XCTAssertEqual((error as? SourceError)?.description, "banks.csv:3: duplicate key '1' in column 'cert'; line 2 has it too")
        }
    }

    func testAHeaderSeparatedBySemicolonsOrTabsGetsAHintWhenADeclaredColumnIsMissing() {
        let fields: [(name: String, type: FieldType)] = [("id", .integer), ("name", .text)]
        let source = CSVSource(url: URL(fileURLWithPath: "/nonexistent/a.csv"), displayName: "a.csv", key: "id", fields: fields)
        XCTAssertThrowsError(try source.read(Data("id;name;price\n1;A;2,5\n".utf8))) { error in
            XCTAssertEqual((error as? SourceError)?.description, "a.csv:1: no column 'id' in the header; it has: id;name;price"
                + " (the header looks separated by ';'; sitegen reads comma-separated values)")
        }
        XCTAssertThrowsError(try source.read(Data("id\tname\n1\tA\n".utf8))) { error in
            XCTAssertEqual((error as? SourceError)?.reason, "no column 'id' in the header; it has: id\tname"
                + " (the header looks separated by tabs; sitegen reads comma-separated values)")
        }
        XCTAssertThrowsError(try source.read(Data("key,name\n1,A\n".utf8))) { error in
            XCTAssertEqual((error as? SourceError)?.reason, "no column 'id' in the header; it has: key, name")
        }
    }

    func testOnlyATwoDigitYearIsGivenACentury() throws {
        let dates: [(String, String)] = [
            ("0001-01-01", "0001-01-01"), ("0099-12-31", "0099-12-31"), ("1/2/0050", "0050-01-02"), ("1-May-0023", "0023-05-01"),
            ("1-May-23", "2023-05-01"), ("5/1/99", "1999-05-01"), ("2023-05-01", "2023-05-01"),
            // POSIX's and Python's century: 69 and after are the 1900s.
            ("1-May-68", "2068-05-01"), ("1-May-69", "1969-05-01"), ("12/31/70", "1970-12-31"),
        ]
        for (text, iso) in dates { XCTAssertEqual(CalendarDate(parsing: text)?.iso8601, iso, text) }
    }

    func testNumbersMayGroupTheirDigitsByThousandsButACommaElsewhereIsAnError() throws {
        let grouped: [(String, FieldValue)] = [
            ("1,234", .integer(1234)), ("-12,345,678", .integer(-12_345_678)), ("+999", .integer(999)), ("42", .integer(42)),
        ]
        for (text, value) in grouped { XCTAssertEqual(try FieldType.integer.value(from: text), value, text) }
        let reals: [(String, FieldValue)] = [("1,234.5", .real(1234.5)), ("-1,000,000.25", .real(-1_000_000.25)), ("0.5", .real(0.5))]
        for (text, value) in reals { XCTAssertEqual(try FieldType.real.value(from: text), value, text) }
        // A decimal comma, a stray or misplaced one: each would silently be another number without its commas.
        for text in ["1,5", "1.234,56", ",5", "1,2,3", "1234,567", "12,34", "1,,234", "1,234,", "-,123"] {
            XCTAssertThrowsError(try FieldType.real.value(from: text), text)
            XCTAssertThrowsError(try FieldType.integer.value(from: text), text)
        }
        do {
            _ = try FieldType.real.value(from: "1,5")
        } catch {
            XCTAssertEqual(error.expected, "a number (a comma only between groups of three digits, as in 1,234.5)")
            XCTAssertEqual(error.found, "1,5")
        }
    }
}
