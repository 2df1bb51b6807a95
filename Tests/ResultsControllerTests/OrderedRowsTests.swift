@testable import ResultsController
import SiteStore
import TestSupport
import XCTest

/// `OrderedRows` against the simplest oracle: a sorted array, through enough inserts and removals that
/// chunks split, empty and disappear.
final class OrderedRowsTests: XCTestCase {
    func testRandomInsertsAndRemovalsKeepTheOrderOfASortedArray() throws {
        let seed = UInt64.random(in: 0...UInt64.max >> 1)
        var random = SeededGenerator(seed: seed)
        let ordering = RowOrdering(descriptors: [FetchRequest.SortDescriptor(key: "k", ascending: false)])
        func precedes(_ a: OrderedRows.Entry, _ b: OrderedRows.Entry) -> Bool { ordering.precedes(a.key, a.id, b.key, b.id) }
        func entry(_ id: Int64) -> OrderedRows.Entry {
            OrderedRows.Entry(id: id, key: SortKey([.integer(Int64.random(in: 0...50, using: &random))]), version: 0)
        }
        var oracle = (1...3_000).map { entry(Int64($0)) }.sorted(by: precedes)
        var rows = OrderedRows(ordering: ordering, sortedEntries: oracle)
        var nextID: Int64 = 3_001
        for round in 0..<60 {
            // Batches of removals from the back and of insertions, as apply makes them.
            let removeCount = Int.random(in: 0...min(300, oracle.count), using: &random)
            let offsets = Array(Set((0..<removeCount).map { _ in Int.random(in: 0..<oracle.count, using: &random) })).sorted(by: >)
            try rows.remove(descendingOffsets: offsets)
            for offset in offsets { oracle.remove(at: offset) }
            let inserted = (0..<Int.random(in: 0...400, using: &random)).map { _ -> OrderedRows.Entry in
                defer { nextID += 1 }
                return entry(nextID)
            }
            try rows.insert(contentsOf: inserted)
            oracle = (oracle + inserted).sorted(by: precedes)
            rows.checkInvariants()
            XCTAssertEqual(rows.ids, oracle.map(\.id), "seed \(seed), round \(round)")
            for probe in oracle.indices where probe % 97 == 0 {
                XCTAssertEqual(try rows.offset(ofKey: oracle[probe].key, id: oracle[probe].id), probe, "seed \(seed)")
            }
            if rows.ids != oracle.map(\.id) { return }
        }
        // Empty it entirely, then start again.
        try rows.remove(descendingOffsets: Array((0..<oracle.count).reversed()))
        XCTAssertEqual(rows.count, 0)
        try rows.insert(contentsOf: [entry(1)])
        XCTAssertEqual(rows.ids, [1])
    }
}

extension OrderedRows {
    /// Every id, in order, of rows that are all decoded (fetched rows are).
    var ids: [Int64] { chunks.flatMap { $0.map(\.id) } }
}
