import Foundation
import ResultsController
import SiteStore
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

    private var sectioned: FetchRequest {
        FetchRequest(table: "items", sortDescriptors: [SortDescriptor(key: "state"), SortDescriptor(key: "score", ascending: false)],
                     sectionKey: "state")
    }

    private func temporaryDatabasePath() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rc-\(UUID().uuidString).sqlite").path
        addTeardownBlock { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        return path
    }

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
        let stream = controller.deltas
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
        try synchronous.performFetch()
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
