import Foundation
@testable import ResultsController
import SiteStore
import TestSupport
import XCTest

/// The controller places changed rows with its own comparison of encoded keys; SQLite's ORDER BY is the
/// oracle it must agree with, on values of every storage class mixed in one column.
final class RowOrderingTests: XCTestCase {
    // Around 2^53, where a double skips integers, and 2^63, where the integers end.
    private static let integers: [Int64] = [.min, -9_007_199_254_740_993, -1, 0, 1, 2, 3, 9_007_199_254_740_993,
                                            9_210_000_000_000_000_001, .max]
    private static let reals: [Double] = [-.infinity, -9_223_372_036_854_775_808.0, -1e300, -0.5, 0, 0.5, 1, 2.5,
                                          9_007_199_254_740_992, 9.21e18, 9_223_372_036_854_775_808.0, 1e300, .infinity]
    private static let texts = ["", " ", "a", "A", "a ", "a  ", "ab", "aB", "b", "B ", "é", "É", "zz",
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

    /// A table `items` (id, v, w) with no declared types, so that each value keeps the storage class it was
    /// inserted with: 400 rows of `v` drawn by `firstValue` and `w` at random, and texts with a NUL inside.
    private func itemsTable(_ random: inout SeededGenerator, firstValue: (inout SeededGenerator) -> DatabaseValue) throws -> Database {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, v, w)")
        try database.transaction {
            let insert = try database.makeStatement("INSERT INTO items (id, v, w) VALUES (?, ?, ?)")
            for id in 1...400 { try insert.execute([.integer(Int64(id)), firstValue(&random), randomValue(&random)]) }
            // Texts with a NUL inside (bound texts end at one): NOCASE stops comparing there, BINARY does not.
            let withNUL = ["x'7a0061'", "x'7a0062'", "x'5a0062'", "x'7a00'", "x'7a'", "x'7a01'", "x'7a0061' || 'a'"]
            for (offset, text) in withNUL.enumerated() {
                try database.execute("INSERT INTO items (id, v, w) VALUES (?, CAST(\(text) AS TEXT), CAST(\(withNUL.reversed()[offset]) AS TEXT))",
                                     [.integer(Int64(401 + offset))])
            }
        }
        return database
    }

    /// Two sort descriptors, on `v` then `w`, of random direction, collation and NULL placement.
    private func randomDescriptors(_ random: inout SeededGenerator) -> [FetchRequest.SortDescriptor] {
        ["v", "w"].map { key in
            SortDescriptor(key: key, ascending: Bool.random(using: &random),
                           collation: [nil, "NOCASE", "RTRIM", "BINARY"].randomElement(using: &random)!,
                           nulls: [nil, .first, .last].randomElement(using: &random)!)
        }
    }

    func testEncodedKeysSortAsSQLiteOrdersMixedValuesUnderEveryCollationDirectionAndNullPlacement() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 0...UInt64.max >> 1)
        var random = SeededGenerator(seed: seed)
        let database = try itemsTable(&random) { randomValue(&$0) }
        for round in 0..<40 {
            let descriptors = randomDescriptors(&random)
            let controller = try ResultsController(database: database, request: FetchRequest(table: "items", sortDescriptors: descriptors))
            // The keys as a fetch encodes them, in SQLite's order; shuffled and sorted again by the comparison.
            let entries = Array(try controller.fetchRows(progress: nil).chunks.joined())
            let ordering = controller.compiled.ordering
            let sorted = entries.shuffled(using: &random).sorted { ordering.precedes($0.key, $0.id, $1.key, $1.id) }
            if let first = entries.indices.first(where: { sorted[$0].id != entries[$0].id }) {
                return XCTFail("seed \(seed), round \(round), \(descriptors): at \(first), SQLite lists \(entries[first].key.values), "
                               + "the comparison \(sorted[first].key.values)")
            }
        }
    }

    /// Order bytes never sort a row before one SQLite lists ahead of it, under every collation, direction
    /// and NULL placement, with texts cut and numbers beyond a double's integers; and they tell apart the
    /// keys they hold whole.
    func testOrderBytesNeverContradictSQLitesOrderAndTellApartWholeKeys() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 0...UInt64.max >> 1)
        var random = SeededGenerator(seed: seed)
        let long = String(repeating: "x", count: RowOrdering.keptValueBytes)
        let longTexts = [long, long + "a", long + "B", long + "b ", String(long.dropLast()) + "Y", long.uppercased() + "a"]
        let database = try itemsTable(&random) { random in
            Int.random(in: 0..<5, using: &random) == 0 ? .text(longTexts.randomElement(using: &random)!) : randomValue(&random)
        }
        for round in 0..<40 {
            let descriptors = randomDescriptors(&random)
            let controller = try ResultsController(database: database, request: FetchRequest(table: "items", sortDescriptors: descriptors))
            let entries = Array(try controller.fetchRows(progress: nil).chunks.joined())
            let ordering = controller.compiled.ordering
            let bytes = entries.map { ordering.orderBytes(of: $0.key) }
            for index in entries.indices.dropFirst() where bytes[index - 1].lexicographicallyPrecedes(bytes[index]) == false
                && bytes[index - 1] != bytes[index] {
                return XCTFail("seed \(seed), round \(round), \(descriptors): SQLite lists \(entries[index - 1].key.values) before "
                               + "\(entries[index].key.values), whose order bytes are smaller")
            }
            // Short texts, blobs and small numbers are held whole: keys that differ have bytes that differ.
            for index in entries.indices.dropFirst() where ordering.compare(entries[index - 1].key, entries[index].key) != 0 {
                let values = entries[index - 1].key.values + entries[index].key.values
                let whole = values.allSatisfy { value in
                    switch value {
                    case .text(let text): return text.utf8.count < RowOrdering.keptValueBytes && !text.utf8.contains(0)
                    case .real(let number): return abs(number) < 9e15
                    case .integer(let number): return number.magnitude < 9_000_000_000_000_000
                    default: return true
                    }
                }
                if whole {
                    XCTAssertNotEqual(bytes[index - 1], bytes[index], "seed \(seed), \(descriptors): \(values)")
                }
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
        for id in 1...1_500 {
            try database.execute("INSERT INTO items VALUES (?, ?, ?)", [.integer(Int64(id)), .text("item number \(id % 4)"), .real(Double(id % 3))])
        }
        let request = FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "name"), SortDescriptor(key: "score")])
        try ResultsController(database: database, request: request, cacheName: "items").performFetch()
        let header = try XCTUnwrap(database.fetchAll("SELECT snapshot FROM results_controller_cache").first?["snapshot"])
        let chunks = try database.fetchAll("SELECT chunk, entries FROM results_controller_chunks ORDER BY chunk")
        XCTAssertEqual(chunks.count, 3, "1,500 rows in chunks of 512")
        guard case .blob(let headerBytes) = header, case .blob(let chunkBytes)? = chunks.first?["entries"],
            let chunk = chunks.first?["chunk"]
        else { return XCTFail("the header and the chunks are blobs") }
        // Untracked, so a controller that lists row 1,501 fetched rather than restored.
        try database.execute("INSERT INTO items VALUES (1501, 'hidden', 1)")
        func restoresFromCache() throws -> Bool {
            let restored = try ResultsController(database: database, request: request, cacheName: "items")
            // A refused snapshot is not replaced: each case damages the one saved above.
            restored.savesCacheAfterFetch = false
            try restored.performFetch()
            // Chunks are read at first use: reading every row reads the damaged one.
            return !restored.fetchedIDs.contains(1501)
        }
        XCTAssertTrue(try restoresFromCache(), "the cache as saved is used")
        // Cut anywhere, or with bytes after its end: refused (and fetched), never read past its end.
        for damaged in (0..<headerBytes.count).map({ Array(headerBytes.prefix($0)) }) + [headerBytes + [0], headerBytes + headerBytes] {
            try database.execute("UPDATE results_controller_cache SET snapshot = ?", [.blob(damaged)])
            try database.execute("UPDATE results_controller_chunks SET entries = ? WHERE chunk = ?", [.blob(chunkBytes), chunk])
            XCTAssertFalse(try restoresFromCache(), "a damaged header (\(damaged.count) bytes of \(headerBytes.count)) was trusted")
        }
        for cut in stride(from: 0, to: chunkBytes.count, by: 97).map({ Array(chunkBytes.prefix($0)) }) + [chunkBytes + [0]] {
            try database.execute("UPDATE results_controller_cache SET snapshot = ?", [.blob(headerBytes)])
            try database.execute("UPDATE results_controller_chunks SET entries = ? WHERE chunk = ?", [.blob(cut), chunk])
            XCTAssertFalse(try restoresFromCache(), "a damaged chunk (\(cut.count) bytes of \(chunkBytes.count)) was trusted")
        }
        try database.execute("UPDATE results_controller_cache SET snapshot = ?", [.blob(headerBytes)])
        try database.execute("DELETE FROM results_controller_chunks WHERE chunk = ?", [chunk])
        XCTAssertFalse(try restoresFromCache(), "a missing chunk is noticed")
    }

    func testAfterAChangeOnlyTheChunksItTouchedAreWrittenAgain() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rc-\(UUID().uuidString).sqlite").path
        addTeardownBlock { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let database = try Database(path: path)
        try database.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, v INTEGER NOT NULL DEFAULT 0)")
        for id in 1...5_000 { try database.execute("INSERT INTO items (id, name) VALUES (?, ?)", [.integer(Int64(id)), .text(String(format: "item %05d", id))]) }
        let request = FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "name")], versionColumn: "v")
        try ResultsController(database: database, request: request, cacheName: "items").performFetch()
        func storedChunks() throws -> [Int64: DatabaseValue] {
            try database.fetchAll("SELECT chunk, entries FROM results_controller_chunks").reduce(into: [:]) { $0[$1["chunk"]!.int64Value!] = $1["entries"] }
        }
        let before = try storedChunks()
        XCTAssertEqual(before.count, 10)
        let changeset = try database.trackingChanges {
            try database.execute("INSERT INTO items (id, name) VALUES (5001, 'item 02500a')")
            try database.execute("DELETE FROM items WHERE id = 10")
            // A new version in place: the row keeps its place, its chunk changes.
            try database.execute("UPDATE items SET v = 1 WHERE id = 4000")
        }.changeset
        let controller = try ResultsController(database: database, request: request, cacheName: "items")
        try controller.performFetch(catchingUpWith: changeset)
        try controller.persistCache()
        let after = try storedChunks()
        XCTAssertEqual(after.count, 10)
        XCTAssertEqual(Set(before.keys).subtracting(after.keys).count, 3, "the three changed chunks are replaced")
        for (chunk, entries) in after where before[chunk] != nil { XCTAssertEqual(before[chunk], entries) }
        let restored = try ResultsController(database: database, request: request, cacheName: "items")
        try restored.performFetch()
        let fresh = try ResultsController(database: database, request: request)
        try fresh.performFetch()
        XCTAssertEqual(restored.snapshot, fresh.snapshot, "what the chunks hold is what a fetch lists")

        // A save whose write never ran (it failed), then another change: the next save writes the chunks
        // the store lacks as well as the ones changed since.
        let changed = try database.trackingChanges { try database.execute("INSERT INTO items (id, name) VALUES (5003, 'item 04000a')") }.changeset
        try controller.apply(changed)
        XCTAssertNotNil(controller.pendingCacheWrite(), "a write, dropped")
        let again = try database.trackingChanges { try database.execute("DELETE FROM items WHERE id = 3000") }.changeset
        try controller.apply(again)
        try controller.persistCache()
        // Untracked, so only a controller that fetched lists it.
        try database.execute("INSERT INTO items (id, name) VALUES (5004, 'hidden')")
        let afterLostWrite = try ResultsController(database: database, request: request, cacheName: "items")
        try afterLostWrite.performFetch()
        XCTAssertNil(afterLostWrite.indexPath(for: 5004), "restored from the cache, not fetched")
        try database.execute("DELETE FROM items WHERE id = 5004")
        let current = try ResultsController(database: database, request: request)
        try current.performFetch()
        XCTAssertEqual(afterLostWrite.snapshot, current.snapshot)
    }
}
