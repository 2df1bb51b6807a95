import Foundation
import ResultsController
import SiteStore
import TestSupport
import XCTest

final class ControllerBehaviourTests: XCTestCase {
    static func makeItems(_ database: Database, count: Int) throws {
        try database.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, state TEXT, score INTEGER)")
        let states = ["CA", "TX", "FL", "NY", "GA"]
        try database.transaction {
            let insert = try database.makeStatement("INSERT INTO items (id, name, state, score) VALUES (?, ?, ?, ?)")
            for id in 1...count {
                try insert.execute([.integer(Int64(id)), .text("Item \(id)"), .text(states[id % 5]), .integer(Int64(id % 97))])
            }
        }
    }

    private var sectioned: FetchRequest { sectionedItems }

    func testApplyingAOneRowChangeRunsTheSameFewQueriesWhateverTheRowCount() throws {
        var counts: [Int] = []
        for rowCount in [1_000, 100_000] {
            let database = try Database(path: ":memory:")
            try Self.makeItems(database, count: rowCount)
            let controller = try ResultsController(database: database, request: sectioned)
            try controller.performFetch()
            let changeset = try database.trackingChanges {
                try database.execute("UPDATE items SET state = 'AK', score = 1000 WHERE id = 7")
            }.changeset
            let before = database.executedStatementCount
            let delta = try controller.apply(changeset)
            counts.append(database.executedStatementCount - before)
            XCTAssertEqual(delta.movedRows.map(\.id), [7])
            XCTAssertEqual(delta.insertedSections.map(\.name), ["AK"])
            XCTAssertEqual(delta.movedRows.first?.to, IndexPath(item: 0, section: 0))
        }
        XCTAssertEqual(counts[0], counts[1], "apply must not depend on the number of rows")
        XCTAssertLessThanOrEqual(counts[0], 2)
    }

    func testMovingARowAcrossSectionsReportsOneMoveAndEmptyingASectionDeletesIt() throws {
        let database = try Database(path: ":memory:")
        try database.executeScript("""
            CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, state TEXT, score INTEGER);
            INSERT INTO items VALUES (1, 'a', 'CA', 3), (2, 'b', 'CA', 2), (3, 'c', 'NY', 5), (4, 'd', 'TX', 1);
            """)
        let controller = try ResultsController(database: database, request: sectioned)
        try controller.performFetch()
        let changeset = try database.trackingChanges { try database.execute("UPDATE items SET state = 'TX' WHERE id = 3") }.changeset
        let delta = try controller.apply(changeset)
        XCTAssertEqual(delta.movedRows, [.init(id: 3, from: IndexPath(item: 0, section: 1), to: IndexPath(item: 0, section: 1))])
        XCTAssertEqual(delta.deletedSections, [.init(index: 1, name: "NY")])
        XCTAssertTrue(delta.insertedRows.isEmpty && delta.deletedRows.isEmpty && delta.updatedRows.isEmpty)
        XCTAssertEqual(controller.sections.map(\.name), ["CA", "TX"])
    }

    func testAContentChangeInPlaceIsAnUpdateAndAnUntouchedChangesetIsNothing() throws {
        let database = try Database(path: ":memory:")
        try Self.makeItems(database, count: 20)
        let controller = try ResultsController(database: database, request: sectioned)
        try controller.performFetch()
        let path = controller.indexPath(for: 5)!
        let changeset = try database.trackingChanges { try database.execute("UPDATE items SET name = 'renamed' WHERE id = 5") }.changeset
        XCTAssertEqual(try controller.apply(changeset).updatedRows, [.init(id: 5, oldIndexPath: path, newIndexPath: path)])
        let nothing = try database.trackingChanges { try database.execute("UPDATE items SET name = name WHERE id = 999") }.changeset
        XCTAssertTrue(nothing.isEmpty)
        XCTAssertTrue(try controller.apply(nothing).isEmpty)
    }

    func testRelatedRowsArePrefetchedInTheSameBatchQuery() throws {
        let database = try Database(path: ":memory:")
        try database.executeScript("""
            CREATE TABLE details (id INTEGER PRIMARY KEY, closed TEXT, acquirer TEXT);
            CREATE TABLE banks (id INTEGER PRIMARY KEY, name TEXT, details_id INTEGER);
            INSERT INTO details VALUES (1, '2024-01-05', 'Regions'), (2, '2023-03-10', NULL);
            INSERT INTO banks VALUES (1, 'Alpha', 2), (2, 'Beta', 1), (3, 'Gamma', NULL);
            """)
        let request = FetchRequest(table: "banks", sortDescriptors: [SortDescriptor(key: "details.closed", ascending: false)],
                                   relationships: [Relationship(name: "details", table: "details", foreignKey: "details_id")],
                                   prefetchedRelationships: ["details"], batchSize: 10)
        let controller = try ResultsController(database: database, request: request)
        try controller.performFetch()
        XCTAssertEqual(controller.fetchedIDs, [2, 1, 3], "newest closing first; no details sorts last")
        _ = try controller.objects(in: 0..<1)  // the first read also learns the related table's columns
        try controller.performFetch()
        let before = database.executedStatementCount
        let rows = try controller.objects(in: 0..<3)
        XCTAssertEqual(database.executedStatementCount - before, 1, "rows and their related rows come in one batch query")
        XCTAssertEqual(rows[0]["details.acquirer"], .text("Regions"))
        XCTAssertEqual(rows[2]["details.closed"], .null)

        // A change to the related row moves the bank that points at it.
        let changeset = try database.trackingChanges { try database.execute("UPDATE details SET closed = '2025-01-01' WHERE id = 2") }.changeset
        let delta = try controller.apply(changeset)
        XCTAssertEqual(delta.movedRows.map(\.id), [1])
        XCTAssertEqual(controller.fetchedIDs, [1, 2, 3])
    }

    func testUnfetchedPropertiesAreLeftOutOfRowsOnly() throws {
        let database = try Database(path: ":memory:")
        try database.executeScript("""
            CREATE TABLE details (id INTEGER PRIMARY KEY, closed TEXT, notes TEXT);
            CREATE TABLE banks (id INTEGER PRIMARY KEY, name TEXT, body TEXT, details_id INTEGER);
            INSERT INTO details VALUES (1, '2024-01-05', 'long'), (2, '2023-03-10', 'longer');
            INSERT INTO banks VALUES (1, 'Alpha', 'a long text', 2), (2, 'Beta', 'another', 1);
            """)
        let request = FetchRequest(table: "banks", sortDescriptors: [SortDescriptor(key: "body")],
                                   relationships: [Relationship(name: "details", table: "details", foreignKey: "details_id")],
                                   prefetchedRelationships: ["details"], unfetchedProperties: ["body", "details.notes"])
        let controller = try ResultsController(database: database, request: request)
        try controller.performFetch()
        XCTAssertEqual(controller.fetchedIDs, [1, 2], "a column not fetched still sorts")
        let rows = try controller.objects(in: 0..<2)
        XCTAssertEqual(rows.map { $0["name"] }, [.text("Alpha"), .text("Beta")])
        XCTAssertEqual(rows[0]["details.closed"], .text("2023-03-10"))
        XCTAssertNil(rows[0]["body"])
        XCTAssertNil(rows[0]["details.notes"])
        XCTAssertEqual(rows[0].columns, ["id", "name", "details_id", "details.id", "details.closed"])
        // A page that needs whole records (a feed's) reads them all the same, in result order.
        let whole = try controller.objectsWithAllProperties(in: 1..<2)
        XCTAssertEqual(whole.map { $0["body"] }, [.text("another")])
        XCTAssertEqual(whole[0]["details.notes"], .text("long"))
        XCTAssertEqual(try controller.objects(in: 0..<2).map { $0["body"] }, [nil, nil], "the batches are still read without them")
        XCTAssertThrowsError(try controller.objectsWithAllProperties(in: 1..<3))
    }

    func testRowsReadOnAnotherConnectionAreTheControllersOwn() throws {
        let path = temporaryDatabasePath()
        let database = try Database(path: path)
        try database.executeScript("""
            CREATE TABLE details (id INTEGER PRIMARY KEY, closed TEXT, notes TEXT);
            CREATE TABLE banks (id INTEGER PRIMARY KEY, name TEXT, body TEXT, details_id INTEGER);
            INSERT INTO details VALUES (1, '2024-01-05', 'long'), (2, '2023-03-10', 'longer');
            """)
        for id in 1...45 {
            try database.execute("INSERT INTO banks VALUES (?, ?, ?, ?)",
                                 [.integer(Int64(id)), .text("Bank \(id % 13)"), .text("body \(id)"), id % 3 == 0 ? .null : .integer(Int64(id % 2 + 1))])
        }
        let request = FetchRequest(table: "banks", sortDescriptors: [SortDescriptor(key: "name", ascending: false), SortDescriptor(key: "details.closed")],
                                   relationships: [Relationship(name: "details", table: "details", foreignKey: "details_id")],
                                   prefetchedRelationships: ["details"], batchSize: 10, unfetchedProperties: ["body"])
        let controller = try ResultsController(database: database, request: request)
        try controller.performFetch()
        let reader = try Database(path: path, readOnly: true)
        // Pages of a listing, as render workers read them: not aligned with the batches, the last one short.
        for offsets in [0..<10, 7..<19, 40..<45, 44..<45, 3..<3] {
            let reading = try controller.rowReading(in: offsets)
            XCTAssertEqual(reading.ids, Array(controller.fetchedIDs[offsets]))
            XCTAssertEqual(try reading.rows(on: reader), try controller.objects(in: offsets), "\(offsets)")
            XCTAssertEqual(try controller.rowReading(in: offsets, allProperties: true).rows(on: reader),
                           try controller.objectsWithAllProperties(in: offsets))
        }
        XCTAssertNil(try controller.rowReading(in: 0..<10).rows(on: reader)[0]["body"])
        XCTAssertThrowsError(try controller.rowReading(in: 40..<46))
        // A row gone from the store, on the reader's side of it, is an error, not a shorter page.
        let reading = try controller.rowReading(in: 0..<10)
        try database.execute("DELETE FROM banks WHERE id = ?", [.integer(reading.ids[4])])
        XCTAssertThrowsError(try reading.rows(on: reader)) { error in
            XCTAssertEqual(error as? ResultsControllerError, .rowVanished(id: reading.ids[4]))
        }
    }

    func testDeclaredSectionsHaveTheirTitlesAndOrderAndShowWhenEmpty() throws {
        let database = try Database(path: ":memory:")
        try database.executeScript("""
            CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, state TEXT, score INTEGER);
            INSERT INTO items VALUES (1, 'a', 'TX', 1), (2, 'b', 'CA', 2), (3, 'c', 'NV', 3);
            """)
        var request = FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "state"), SortDescriptor(key: "name")], sectionKey: "state")
        request.sectionOrder = [SectionDeclaration(name: "TX", displayTitle: "Texas"), SectionDeclaration(name: "WY", displayTitle: "Wyoming"),
                                SectionDeclaration(name: "CA", displayTitle: "California", indexTitle: "C")]
        request.showsEmptySections = true
        let controller = try ResultsController(database: database, request: request)
        try controller.performFetch()
        XCTAssertEqual(controller.sections.map(\.name), ["TX", "WY", "CA", "NV"], "declared order, then the rest in key order")
        XCTAssertEqual(controller.sections.map(\.displayTitle), ["Texas", "Wyoming", "California", "NV"])
        XCTAssertEqual(controller.sections.map(\.numberOfObjects), [1, 0, 1, 1])
        XCTAssertEqual(controller.sectionIndexTitles, ["T", "W", "C", "N"])
        XCTAssertEqual(controller.indexPath(for: 2), IndexPath(item: 0, section: 2))

        let changeset = try database.trackingChanges { try database.execute("UPDATE items SET state = 'WY' WHERE id = 1") }.changeset
        let delta = try controller.apply(changeset)
        XCTAssertTrue(delta.deletedSections.isEmpty && delta.insertedSections.isEmpty, "declared sections stay, even emptied")
        XCTAssertEqual(delta.movedRows, [.init(id: 1, from: IndexPath(item: 0, section: 0), to: IndexPath(item: 0, section: 1))])
    }

    func testTheDelegateAndTheDeltaStreamHearOfEachChange() async throws {
        final class Recorder: ResultsControllerDelegate {
            var events: [String] = []
            func controllerWillChangeContent(_ controller: ResultsController) { events.append("will") }
            func controller(_ controller: ResultsController, didChange delta: Delta) { events.append("change \(delta.insertedRows.count)") }
            func controllerDidChangeContent(_ controller: ResultsController) { events.append("did") }
        }
        let database = try Database(path: ":memory:")
        try Self.makeItems(database, count: 10)
        let controller = try ResultsController(database: database, request: sectioned)
        let recorder = Recorder()
        controller.delegate = recorder
        let stream = controller.deltaStream()
        try controller.performFetch()
        let changeset = try database.trackingChanges { try database.execute("INSERT INTO items VALUES (11, 'new', 'CA', 1)") }.changeset
        try controller.apply(changeset)
        XCTAssertEqual(recorder.events, ["will", "change 1", "did"])
        var iterator = stream.makeAsyncIterator()
        let delta = await iterator.next()
        XCTAssertEqual(delta?.insertedRows.map(\.id), [11])
    }

    func testSwitchingTheRequestIsReportedAsADelta() throws {
        var random = SeededGenerator(seed: 42)
        let database = try Database(path: ":memory:")
        try Self.makeItems(database, count: 60)
        let requests = [
            sectioned,
            FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "score")]),
            FetchRequest(table: "items", filter: "score > 40", sortDescriptors: [SortDescriptor(key: "state", ascending: false)], sectionKey: "state"),
            FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "name", collation: "NOCASE")]),
        ]
        let controller = try ResultsController(database: database, request: requests[0])
        try controller.performFetch()
        for _ in 0..<40 {
            let next = requests.randomElement(using: &random)!
            let old = tableLayout(controller)
            let delta = try controller.setRequest(next)
            let fresh = try ResultsController(database: database, request: next)
            try fresh.performFetch()
            let applied = try applyAsTableView(delta, to: old)
            XCTAssertEqual(applied.map(\.name), tableLayout(fresh).map(\.name))
            XCTAssertEqual(applied.map(\.ids), tableLayout(fresh).map(\.ids))
        }
    }

    func testAFetchThatLeavesItsCacheToAnotherConnectionWritesNothingItself() throws {
        let path = temporaryDatabasePath()
        let database = try Database(path: path)
        try Self.makeItems(database, count: 30)
        func cachedNames() throws -> [String] {
            guard try database.tableExists("results_controller_cache") else { return [] }
            return try database.fetchAll("SELECT name FROM results_controller_cache").compactMap { $0["name"]?.stringValue }
        }
        let controller = try ResultsController(database: database, request: sectioned, cacheName: "home")
        controller.savesCacheAfterFetch = false
        try controller.performFetch()
        XCTAssertEqual(try cachedNames(), [], "the fetch wrote no cache on its own connection")
        let write = try XCTUnwrap(controller.pendingCacheWrite(), "the fresh results are still to be saved")
        XCTAssertNil(controller.pendingCacheWrite(), "handed over once")
        let writer = try Database(path: path)
        try writer.transaction { try write(writer) }
        XCTAssertEqual(try cachedNames(), ["home"])
        // Written behind the controllers' backs: a controller restored from the saved cache does not see it.
        try database.execute("INSERT INTO items VALUES (31, 'hidden', 'AA', 1)")
        let restored = try ResultsController(database: database, request: sectioned, cacheName: "home")
        try restored.performFetch()
        XCTAssertEqual(restored.fetchedIDs, controller.fetchedIDs)
        XCTAssertNil(restored.indexPath(for: 31))
    }

    func testACachedSnapshotIsRestoredInANewConnectionWithoutRunningTheQuery() throws {
        let path = temporaryDatabasePath()
        do {
            let database = try Database(path: path)
            try Self.makeItems(database, count: 50)
            try ResultsController(database: database, request: sectioned, cacheName: "home").performFetch()
        }
        let database = try Database(path: path)
        // Written behind the controller's back (untracked): a restored snapshot does not see it, a fetch would.
        try database.execute("INSERT INTO items VALUES (51, 'hidden', 'AA', 1)")
        let restored = try ResultsController(database: database, request: sectioned, cacheName: "home")
        try restored.performFetch()
        XCTAssertNil(restored.indexPath(for: 51), "the snapshot came from the cache")
        XCTAssertEqual(restored.count, 50)

        var other = sectioned
        other.filter = "score >= 0"
        let changedRequest = try ResultsController(database: database, request: other, cacheName: "home")
        try changedRequest.performFetch()
        XCTAssertNotNil(changedRequest.indexPath(for: 51), "a changed request is not served from the cache")

        try ResultsController.deleteCache(named: "home", in: database)
        let afterDelete = try ResultsController(database: database, request: sectioned, cacheName: "home")
        try afterDelete.performFetch()
        XCTAssertNotNil(afterDelete.indexPath(for: 51))
    }

    func testARestoredSnapshotHasTheFetchedKeysTextsIncluded() throws {
        let path = temporaryDatabasePath()
        let request = FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "state"), SortDescriptor(key: "name"), SortDescriptor(key: "score")],
                                   sectionKey: "state")
        let fetched: Snapshot
        do {
            let database = try Database(path: path)
            try database.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, state TEXT, score REAL)")
            for id in 1...40 {
                // Long and non-ASCII texts (a Swift string holds up to 15 bytes inline), an empty one, NULLs.
                let name: DatabaseValue = id % 7 == 0 ? .null : id % 11 == 0 ? .text("") : .text("Ünïcode name of a rather long item \(id % 9)")
                try database.execute("INSERT INTO items VALUES (?, ?, ?, ?)",
                                     [.integer(Int64(id)), name, .text(["Kansas City area", "TX"][id % 2]), .real(Double(id) / 3)])
            }
            let controller = try ResultsController(database: database, request: request, cacheName: "names")
            try controller.performFetch()
            fetched = controller.snapshot
        }
        let database = try Database(path: path)
        // Untracked: only a fetch would see it, so equal snapshots mean the cache's were decoded.
        try database.execute("INSERT INTO items VALUES (41, 'hidden', 'TX', 1)")
        let restored = try ResultsController(database: database, request: request, cacheName: "names")
        try restored.performFetch()
        XCTAssertEqual(restored.snapshot, fetched)
        XCTAssertEqual(restored.sections.map(\.name), ["Kansas City area", "TX"])
    }

    func testRowsComeInResultOrderInSmallAndLargeBatchesAndAVanishedRowIsNamed() throws {
        let database = try Database(path: ":memory:")
        try Self.makeItems(database, count: 90)
        for batchSize in [7, 50] {
            let request = FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "score", ascending: false),
                                                                         SortDescriptor(key: "id")], batchSize: batchSize)
            let controller = try ResultsController(database: database, request: request)
            try controller.performFetch()
            let expected = try database.fetchAll("SELECT id FROM items ORDER BY score DESC, id").compactMap { $0["id"]?.int64Value }
            XCTAssertEqual(try controller.objects(in: 0..<90).map { $0["id"]?.int64Value }, expected, "batches of \(batchSize)")
        }
        let controller = try ResultsController(database: database, request: FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "id")],
                                                                                      batchSize: 50))
        try controller.performFetch()
        // Behind the controller's back: the row its results list is gone when its batch is read.
        try database.execute("DELETE FROM items WHERE id = 60")
        XCTAssertThrowsError(try controller.objects(in: 50..<51)) { error in
            XCTAssertEqual(error as? ResultsControllerError, .rowVanished(id: 60))
        }
    }

    func testASchemaChangeInvalidatesTheCache() throws {
        let path = temporaryDatabasePath()
        let database = try Database(path: path)
        try Self.makeItems(database, count: 10)
        try ResultsController(database: database, request: sectioned, cacheName: "c").performFetch()
        try database.execute("INSERT INTO items VALUES (11, 'x', 'CA', 1)")
        try database.execute("ALTER TABLE items ADD COLUMN extra TEXT")
        let controller = try ResultsController(database: database, request: sectioned, cacheName: "c")
        try controller.performFetch()
        XCTAssertNotNil(controller.indexPath(for: 11))
    }

    func testARestoredCacheCatchesUpWithATrackedChangeset() throws {
        let path = temporaryDatabasePath()
        let database = try Database(path: path)
        try Self.makeItems(database, count: 30)
        try ResultsController(database: database, request: sectioned, cacheName: "c").performFetch()
        let changeset = try database.trackingChanges {
            try database.execute("DELETE FROM items WHERE id = 3")
            try database.execute("INSERT INTO items VALUES (31, 'new', 'NY', 50)")
        }.changeset
        let controller = try ResultsController(database: Database(path: path), request: sectioned, cacheName: "c")
        let delta = try XCTUnwrap(controller.performFetch(catchingUpWith: changeset))
        XCTAssertEqual(delta.deletedRows.map(\.id), [3])
        XCTAssertEqual(delta.insertedRows.map(\.id), [31])
        let fresh = try ResultsController(database: database, request: sectioned)
        try fresh.performFetch()
        XCTAssertEqual(controller.snapshot, fresh.snapshot)
    }

    func testAnAsyncFetchReportsProgressAndFindsWhatASynchronousOneDoes() async throws {
        let database = try Database(path: ":memory:")
        try Self.makeItems(database, count: 30_000)
        let controller = try ResultsController(database: database, request: sectioned)
        let seen = Counter()
        try await controller.performFetch(progress: { seen.set($0) })
        XCTAssertEqual(seen.value, 30_000)
        let synchronous = try ResultsController(database: database, request: sectioned)
        // A build's fetch is synchronous: it reports too, every 10,000 rows, for the listing's progress line.
        var reported: [Int] = []
        synchronous.fetchProgress = { reported.append($0) }
        try synchronous.performFetch()
        XCTAssertEqual(reported, [10_000, 20_000, 30_000])
        XCTAssertEqual(controller.snapshot, synchronous.snapshot)
    }

    func testCancellingAnAsyncFetchInterruptsTheQueryAndKeepsThePreviousResults() async throws {
        let started = Counter()
        let task = Task.detached { try await fetchThenRefetch(started: started) }
        while started.value == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        try await Task.sleep(nanoseconds: 100_000_000)
        let cancelledAt = Date()
        task.cancel()
        let outcome = try await task.value
        XCTAssertTrue(outcome.cancelled, "the re-fetch ran to the end despite the cancellation")
        XCTAssertTrue(outcome.unchanged, "a cancelled fetch leaves the previous results")
        XCTAssertLessThan(Date().timeIntervalSince(cancelledAt), 1, "the interrupt stops the running query")
    }
}

struct Outcome: Sendable {
    var cancelled: Bool
    var unchanged: Bool
}

/// Fetches a slow request once, then again asynchronously until cancelled; says whether the results survived.
private func fetchThenRefetch(started: Counter) async throws -> Outcome {
    let database = try Database(path: ":memory:")
    try ControllerBehaviourTests.makeItems(database, count: 3_000)
    // Quadratic: the sort cannot start before every row's subquery ran, so only an interrupt stops it early.
    let slow = FetchRequest(table: "items", filter: "(SELECT count(*) FROM items AS other WHERE other.name <= items.name) >= 0",
                            sortDescriptors: [SortDescriptor(key: "state")], sectionKey: "state")
    let controller = try ResultsController(database: database, request: slow)
    try controller.performFetch()
    let before = controller.snapshot
    started.set(1)
    do {
        try await controller.performFetch(progress: { _ in })
        return Outcome(cancelled: false, unchanged: controller.snapshot == before)
    } catch is CancellationError {
        return Outcome(cancelled: true, unchanged: controller.snapshot == before)
    }
}

/// A thread-safe box for the last progress value.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = 0
    var value: Int { lock.lock(); defer { lock.unlock() }; return stored }
    func set(_ value: Int) { lock.lock(); stored = value; lock.unlock() }
}
