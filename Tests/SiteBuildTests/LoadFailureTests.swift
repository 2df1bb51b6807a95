import Foundation
@testable import SiteBuild
import SiteStore
import XCTest

/// A load that the store itself fails (a full disk) ends with the store's error and the store as it was.
final class LoadFailureTests: XCTestCase {
    private var site: URL!

    override func setUpWithError() throws {
        site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: site.appendingPathComponent("data"), withIntermediateDirectories: true)
        try """
            title: Test
            collections:
              people:
                kind: ndjson
                sources: data/*.ndjson
                key: id
                fields: {id: text, name: text}
            """.write(to: site.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: site)
    }

    private func writeFiles(_ range: Range<Int>, padding: Int) throws {
        let name = String(repeating: "n", count: padding)
        for number in range {
            try "{\"id\": \"p\(number)\", \"name\": \"\(name)\"}\n"
                .write(to: site.appendingPathComponent(String(format: "data/people-%04d.ndjson", number)), atomically: true, encoding: .utf8)
        }
    }

    func testAStoreThatFillsUpMidBatchFailsTheLoadWithItsErrorAndKeepsWhatItHad() throws {
        try writeFiles(0..<50, padding: 10)
        let config = try SiteConfig(contentsOf: site.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        _ = try CollectionLoader(root: site, config: config, store: store).load()
        XCTAssertEqual(try store.rowCount(of: "people"), 50)

        // Room for a few more pages only: the next load fills the store in its first batch of files.
        let pages = try store.database.fetchValue("PRAGMA page_count")?.int64Value ?? 0
        _ = try store.database.fetchValue("PRAGMA max_page_count = \(pages + 8)")
        try writeFiles(50..<400, padding: 2_000)
        XCTAssertThrowsError(try CollectionLoader(root: site, config: config, store: store).load()) { error in
            XCTAssertEqual((error as? SQLiteError).map { $0.code & 0xff }, 13, "SQLITE_FULL, not another error: \(error)")
        }
        XCTAssertEqual(try store.rowCount(of: "people"), 50, "the failed load's transaction is rolled back whole")

        // With room again, the same load goes through.
        _ = try store.database.fetchValue("PRAGMA max_page_count = 1000000")
        let outcome = try CollectionLoader(root: site, config: config, store: store).load()
        XCTAssertEqual(outcome.problems.count, 0)
        XCTAssertEqual(try store.rowCount(of: "people"), 400)
    }
}
