import Foundation
@testable import ResultsController
import SiteStore
import TestSupport
import XCTest

/// The controller places changed rows with its own comparison of encoded keys; SQLite's ORDER BY is the
/// oracle it must agree with, on values of every storage class mixed in one column.
final class RowOrderingTests: XCTestCase {
    private static let integers: [Int64] = [.min, -9_007_199_254_740_993, -1, 0, 1, 2, 3, 9_007_199_254_740_993, .max]
    private static let reals: [Double] = [-.infinity, -1e300, -0.5, 0, 0.5, 1, 2.5, 9_007_199_254_740_992, 1e300, .infinity]
    private static let texts = ["", " ", "a", "A", "a ", "a  ", "ab", "aB", "b", "B ", "é", "É", "z\u{0}a", "z\u{0}b", "zz",
                                "a long text of more than fifteen bytes", "A LONG TEXT of more than fifteen bytes  "]

    private func randomValue(_ random: inout SeededGenerator) -> DatabaseValue {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return .null
        case 1, 2: return .integer(Self.integers.randomElement(using: &random)!)
        case 3: return .integer(Int64.random(in: -5...5, using: &random))
        case 4, 5: return .real(Self.reals.randomElement(using: &random)!)
        case 6, 7, 8: return .text(Self.texts.randomElement(using: &random)!)
        default: return .blob((0..<Int.random(in: 0...3, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) })
        }
    }

    func testEncodedKeysSortAsSQLiteOrdersMixedValuesUnderEveryCollationDirectionAndNullPlacement() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 0...UInt64.max >> 1)
        var random = SeededGenerator(seed: seed)
        let database = try Database(path: ":memory:")
        // No declared types: each value keeps the storage class it was inserted with.
        try database.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, v, w)")
        try database.transaction {
            let insert = try database.makeStatement("INSERT INTO items (id, v, w) VALUES (?, ?, ?)")
            for id in 1...400 { try insert.execute([.integer(Int64(id)), randomValue(&random), randomValue(&random)]) }
        }
        for round in 0..<40 {
            let descriptors = ["v", "w"].map { key in
                SortDescriptor(key: key, ascending: Bool.random(using: &random),
                               collation: [nil, "NOCASE", "RTRIM", "BINARY"].randomElement(using: &random)!,
                               nulls: [nil, .first, .last].randomElement(using: &random)!)
            }
            let controller = try ResultsController(database: database, request: FetchRequest(table: "items", sortDescriptors: descriptors))
            // The keys as a fetch encodes them, in SQLite's order; shuffled and sorted again by the comparison.
            let entries = try controller.fetchEntries(progress: nil)
            let ordering = controller.compiled.ordering
            let sorted = entries.shuffled(using: &random).sorted { ordering.precedes($0.key, $0.id, $1.key, $1.id) }
            if let first = entries.indices.first(where: { sorted[$0].id != entries[$0].id }) {
                return XCTFail("seed \(seed), round \(round), \(descriptors): at \(first), SQLite lists \(entries[first].key.values), "
                               + "the comparison \(sorted[first].key.values)")
            }
        }
    }

    func testAKeyDecodesToTheValuesItWasMadeOf() {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            let values = (0..<Int.random(in: 0...5, using: &random)).map { _ in randomValue(&random) }
            let key = SortKey(values)
            XCTAssertEqual(key.values, values)
            XCTAssertEqual(key, SortKey(values), "equal values, equal keys")
            for index in values.indices {
                XCTAssertEqual(key.value(at: index), values[index])
                XCTAssertEqual(key.prefix(index + 1).values, Array(values.prefix(index + 1)))
            }
        }
    }

    func testACutOrOverlongSnapshotIsRefusedAndTheRowsFetched() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rc-\(UUID().uuidString).sqlite").path
        addTeardownBlock { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database = try Database(path: path)
        try database.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, score REAL)")
        for id in 1...30 {
            try database.execute("INSERT INTO items VALUES (?, ?, ?)", [.integer(Int64(id)), .text("item number \(id % 4)"), .real(Double(id % 3))])
        }
        let request = FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "name"), SortDescriptor(key: "score")])
        let fetched = try ResultsController(database: database, request: request, cacheName: "items")
        try fetched.performFetch()
        let saved = try XCTUnwrap(database.fetchAll("SELECT snapshot FROM results_controller_cache").first?["snapshot"])
        guard case .blob(let bytes) = saved else { return XCTFail("the snapshot is a blob") }
        // Untracked, so a controller that lists row 31 fetched rather than restored.
        try database.execute("INSERT INTO items VALUES (31, 'hidden', 1)")
        // Cut anywhere, or with bytes after its end: refused (and fetched), never read past its end.
        let damages = (0..<bytes.count).map { Array(bytes.prefix($0)) } + [bytes + [0], bytes + bytes]
        for damaged in damages {
            try database.execute("UPDATE results_controller_cache SET snapshot = ?", [.blob(damaged)])
            let restored = try ResultsController(database: database, request: request, cacheName: "items")
            try restored.performFetch()
            XCTAssertNotNil(restored.indexPath(for: 31), "a damaged snapshot (\(damaged.count) bytes of \(bytes.count)) was trusted")
        }
    }
}
