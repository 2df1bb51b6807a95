import ResultsController
import SiteStore
import TestSupport
import XCTest

/// The oracle of deltas: after any changeset, the controller equals a fresh fetch, and the delta applied to
/// the old layout, the way a table view applies it, gives the new layout.
final class DeltaPropertyTests: XCTestCase {
    private let sectionValues = ["Alabama", "alaska", "Colorado", "Delaware", "florida", "Georgia", "hawaii"]

    func testAppliedDeltasTurnTheOldResultsIntoAFreshFetch() throws {
        let baseSeed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 0...UInt64.max >> 1)
        let cases = Int(ProcessInfo.processInfo.environment["SITEGEN_CASES"] ?? "") ?? 1_000
        for index in 0..<cases {
            let seed = baseSeed &+ UInt64(index)
            do {
                try runCase(seed: seed, rowCount: index % 50 == 0 ? 400 : 40, maxChanges: index % 50 == 0 ? 150 : 12)
            } catch {
                XCTFail("seed \(seed) (SITEGEN_SEED=\(seed) SITEGEN_CASES=1 reproduces it): \(error)")
                return
            }
        }
    }

    func testAChangesetOfTenThousandRowsAppliesExactly() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 0...UInt64.max >> 1)
        do {
            try runCase(seed: seed, rowCount: 20_000, maxChanges: 10_000, exactChanges: true)
        } catch {
            XCTFail("seed \(seed): \(error)")
        }
    }

        private func runCase(seed: UInt64, rowCount: Int, maxChanges: Int, exactChanges: Bool = false) throws {
        var random = SeededGenerator(seed: seed)
        let database = try Database(path: ":memory:")
        try database.executeScript("""
            CREATE TABLE details (id INTEGER PRIMARY KEY, x INTEGER, y TEXT, code TEXT UNIQUE);
            CREATE TABLE items (id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL, s TEXT, v INTEGER NOT NULL DEFAULT 0, detail_id INTEGER,
                                detail_code TEXT);
            CREATE INDEX items_detail ON items (detail_id);
            """)
        let detailCount = max(3, rowCount / 4)
        try database.transaction {
            for id in 1...detailCount {
                try database.execute("INSERT INTO details (id, x, y, code) VALUES (?, ?, ?, 'd' || ?)",
                                     [.integer(Int64(id)), randomSmall(&random), randomText(&random), .integer(Int64(id))])
            }
            for id in 1...rowCount {
                try database.execute("INSERT INTO items (id, a, b, c, s, v, detail_id, detail_code) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, 'd' || ?6)",
                                     [.integer(Int64(id)), randomSmall(&random), randomText(&random), randomReal(&random),
                                      randomSection(&random), .integer(Int64.random(in: 1...Int64(detailCount), using: &random))])
            }
        }
        let request = randomRequest(&random)
        let controller = try ResultsController(database: database, request: request)
        try controller.performFetch()
        let oldLayout = tableLayout(controller)

        var touched = Set<Int64>()
        let changeCount = exactChanges ? maxChanges : Int.random(in: 1...maxChanges, using: &random)
        var nextID = Int64(rowCount + 1)
        var nextDetail = Int64(detailCount + 1)
        let changeset = try database.trackingChanges {
            for _ in 0..<changeCount {
                let id = Int64.random(in: 1...Int64(rowCount), using: &random)
                switch Int.random(in: 0..<12, using: &random) {
                case 0:
                    try database.execute("INSERT INTO items (id, a, b, c, s, v, detail_id, detail_code) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, 'd' || ?6)",
                                         [.integer(nextID), randomSmall(&random), randomText(&random), randomReal(&random),
                                          randomSection(&random), .integer(Int64.random(in: 1...Int64(detailCount), using: &random))])
                    touched.insert(nextID)
                    nextID += 1
                case 1:
                    try database.execute("DELETE FROM items WHERE id = ?", [.integer(id)])
                    touched.insert(id)
                case 2:
                    // Delete and re-insert the same key in one changeset.
                    try database.execute("DELETE FROM items WHERE id = ?", [.integer(id)])
                    try database.execute("INSERT INTO items (id, a, b, c, s, v, detail_id, detail_code) VALUES (?, ?, ?, ?, ?, 0, 1, 'd1')",
                                         [.integer(id), randomSmall(&random), randomText(&random), randomReal(&random), randomSection(&random)])
                    touched.insert(id)
                case 3:
                    try database.execute("UPDATE items SET s = ?, v = v + 1 WHERE id = ?", [randomSection(&random), .integer(id)])
                    touched.insert(id)
                case 4:
                    try database.execute("UPDATE items SET a = ?, v = v + 1 WHERE id = ?", [randomSmall(&random), .integer(id)])
                    touched.insert(id)
                case 5:
                    // Content only: sorts and section stay.
                    try database.execute("UPDATE items SET v = v + 1 WHERE id = ?", [.integer(id)])
                    touched.insert(id)
                case 6:
                    // A related row changes: the rows pointing at it may move.
                    let detail = Int64.random(in: 1...Int64(detailCount), using: &random)
                    try database.execute("UPDATE details SET x = ?, y = ? WHERE id = ?", [randomSmall(&random), randomText(&random), .integer(detail)])
                    touched.formUnion(try database.fetchAll("SELECT id FROM items WHERE detail_id = ?", [.integer(detail)]).compactMap { $0["id"]?.int64Value })
                case 7:
                    // Empty a section into another.
                    let from = randomSection(&random), to = randomSection(&random)
                    touched.formUnion(try database.fetchAll("SELECT id FROM items WHERE s IS ?", [from]).compactMap { $0["id"]?.int64Value })
                    try database.execute("UPDATE items SET s = ?, v = v + 1 WHERE s IS ?", [to, from])
                case 8:
                    try database.execute("UPDATE items SET b = ?, c = ?, v = v + 1 WHERE id = ?", [randomText(&random), randomReal(&random), .integer(id)])
                    touched.insert(id)
                case 10, 11:
                    // A related row is deleted (its key, for a relationship by key, can no longer be read), and
                    // half the time its key comes back on a new row: the rows naming it may move or leave.
                    let detail = Int64.random(in: 1...Int64(detailCount), using: &random)
                    touched.formUnion(try database.fetchAll("SELECT id FROM items WHERE detail_id = ?", [.integer(detail)]).compactMap { $0["id"]?.int64Value })
                    try database.execute("DELETE FROM details WHERE id = ?", [.integer(detail)])
                    if Bool.random(using: &random) {
                        try database.execute("INSERT OR IGNORE INTO details (id, x, y, code) VALUES (?, ?, ?, 'd' || ?)",
                                             [.integer(nextDetail), randomSmall(&random), randomText(&random), .integer(detail)])
                        nextDetail += 1
                    }
                default:
                    // A new section in the middle of the order.
                    try database.execute("UPDATE items SET s = 'Connecticut', v = v + 1 WHERE id = ?", [.integer(id)])
                    touched.insert(id)
                }
            }
        }.changeset

        // Half the time rows were looked up by id before the change: the index that makes is kept up to date.
        let indexedByID = Bool.random(using: &random)
        if indexedByID { _ = controller.indexPath(for: 1) }
        let delta = try controller.apply(changeset)
        let fresh = try ResultsController(database: database, request: request)
        try fresh.performFetch()
        let newLayout = tableLayout(fresh)
        for id in touched.union(1...Int64(rowCount)) where controller.indexPath(for: id) != fresh.indexPath(for: id) {
            throw Failure(description: "row \(id) is found at \(String(describing: controller.indexPath(for: id))), a fresh fetch lists it at "
                          + "\(String(describing: fresh.indexPath(for: id))) (looked up by id before the change: \(indexedByID))")
        }

        guard controller.snapshot == fresh.snapshot else {
            throw Failure(description: "the controller's snapshot differs from a fresh fetch\n request: \(request)\n got: \(tableLayout(controller))\n want: \(newLayout)")
        }
        let applied = try applyAsTableView(delta, to: oldLayout)
        guard applied.map(\.name) == newLayout.map(\.name), applied.map(\.ids) == newLayout.map(\.ids) else {
            throw Failure(description: "the delta does not turn the old layout into the new\n request: \(request)\n old: \(oldLayout)\n delta: \(delta)\n applied: \(applied)\n want: \(newLayout)")
        }
        for id in delta.movedRows.map(\.id) + delta.updatedRows.map(\.id) where !touched.contains(id) {
            throw Failure(description: "row \(id) is reported moved or updated but nothing changed it\n delta: \(delta)")
        }
        for update in delta.updatedRows {
            guard oldLayout[update.oldIndexPath.section].ids[update.oldIndexPath.item] == update.id,
                newLayout[update.newIndexPath.section].ids[update.newIndexPath.item] == update.id
            else { throw Failure(description: "update of \(update.id) names wrong index paths: \(update)") }
        }
    }

    private func randomRequest(_ random: inout SeededGenerator) -> FetchRequest {
        let filters: [String?] = [nil, nil, "items.a % 3 <> 0", "items.c IS NOT NULL", "details.x > 2", "items.s <> 'hawaii'"]
        let keys = ["a", "b", "c", "details.x", "details.y", "s"]
        var descriptors: [FetchRequest.SortDescriptor] = []
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let key = keys.randomElement(using: &random)!
            let collation = (key == "b" || key == "s" || key == "details.y") && Bool.random(using: &random) ? "NOCASE" : nil
            let nulls: FetchRequest.SortDescriptor.NullPlacement? = Bool.random(using: &random) ? nil : (Bool.random(using: &random) ? .first : .last)
            descriptors.append(SortDescriptor(key: key, ascending: Bool.random(using: &random), collation: collation, nulls: nulls))
        }
        // By rowid, or by a key of the related table's own (as sitegen's relationships between collections are).
        let relationship = Bool.random(using: &random) ? Relationship(name: "details", table: "details", foreignKey: "detail_id")
            : Relationship(name: "details", table: "details", foreignKey: "detail_code", targetKey: "code")
        var request = FetchRequest(table: "items", filter: filters.randomElement(using: &random)!, sortDescriptors: descriptors,
                                   relationships: [relationship])
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            break
        case 1:
            request.sortDescriptors.insert(SortDescriptor(key: "s", ascending: Bool.random(using: &random)), at: 0)
            request.sectionKey = "s"
        case 2:
            request.sortDescriptors.insert(SortDescriptor(key: "s"), at: 0)
            request.sectionKey = "s"
            request.sectionOrder = [SectionDeclaration(name: "Georgia", displayTitle: "The Peach State"),
                                    SectionDeclaration(name: "Alabama"), SectionDeclaration(name: "Wyoming")]
            request.showsEmptySections = Bool.random(using: &random)
        default:
            request.sortDescriptors.insert(SortDescriptor(key: "details.x", ascending: false), at: 0)
            request.sectionKey = "details.x"
        }
        if Bool.random(using: &random) { request.versionColumn = "v" }
        if Int.random(in: 0..<6, using: &random) == 0 {
            // A window: rows slide in and out of it as others change.
            request.limit = Int.random(in: 0...25, using: &random)
            request.offset = Int.random(in: 0...8, using: &random)
        }
        return request
    }

    private func randomSmall(_ random: inout SeededGenerator) -> DatabaseValue {
        Int.random(in: 0..<12, using: &random) == 0 ? .null : .integer(Int64.random(in: 0...6, using: &random))
    }

    private func randomReal(_ random: inout SeededGenerator) -> DatabaseValue {
        Int.random(in: 0..<8, using: &random) == 0 ? .null : .real(Double(Int.random(in: 0...20, using: &random)) / 4)
    }

    private func randomText(_ random: inout SeededGenerator) -> DatabaseValue {
        let words = ["apple", "Apple", "banana", "Banana ", "cherry", "é", "E", "zeta", ""]
        return Int.random(in: 0..<10, using: &random) == 0 ? .null : .text(words.randomElement(using: &random)!)
    }

    private func randomSection(_ random: inout SeededGenerator) -> DatabaseValue {
        Int.random(in: 0..<15, using: &random) == 0 ? .null : .text(sectionValues.randomElement(using: &random)!)
    }
}
