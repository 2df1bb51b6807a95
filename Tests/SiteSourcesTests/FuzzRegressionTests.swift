import Foundation
import SiteSources
import XCTest

/// Inputs the fuzzer (scripts/fuzz) once crashed a reader with: each must now be read or refused, not crash.
final class FuzzRegressionTests: XCTestCase {
    func testInputsThatOnceCrashedAReaderAreReadOrRefused() throws {
        let folder = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/fuzz-regressions", withExtension: nil))
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
        XCTAssertGreaterThanOrEqual(files.count, 2)
        for file in files {
            let data = try Data(contentsOf: file)
            // Reaching the end of each call is the test; what they return depends on the input.
            _ = try? FeedParser(file: file.lastPathComponent).parse(data)
            // And as a file, which a feed is parsed from as it is read when its encoding allows.
            _ = try? FeedSource(url: file, displayName: file.lastPathComponent).read()
            _ = try? CSVReader(file: file.lastPathComponent).read(String(decoding: data, as: UTF8.self))
            _ = try? FrontMatterDocument(parsing: String(decoding: data, as: UTF8.self), file: file.lastPathComponent)
            var parser = JSONParser(bytes: Array(data))
            _ = try? parser.parseDocument()
        }
    }

    func testADocumentInAnUnsupportedEncodingIsReadAsWindows1252WithAWarning() throws {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/fuzz-regressions/feed-unsupported-encoding-860", withExtension: "xml"))
        let document = try FeedParser(file: "860.xml").parse(Data(contentsOf: url))
        XCTAssertEqual(document.warnings.map(\.reason), ["the encoding '860' is not supported; read as Windows-1252"])
    }
}
