import Foundation
@testable import ResultsController
import SiteStore
import TestSupport
import XCTest

/// What a client of NSFetchedResultsController counts on and this controller could get wrong without a
/// word: changesets given out of turn, a damaged cache, tables and section keys it cannot serve, rows
/// whose shown related values changed, and streams of deltas nobody reads any more.
final class ControllerContractTests: XCTestCase {
    private var sectioned: FetchRequest { sectionedItems }

    private func freshLayout(_ database: Database, _ request: FetchRequest) throws -> TableLayout {
        let fresh = try ResultsController(database: database, request: request)
        try fresh.performFetch()
        return tableLayout(fresh)
    }

    func testAChangesetThatSkipsAnotherIsCaughtUpAndTheCacheItLeavesIsRight() throws {
        let path = temporaryDatabasePath()
        let database = try Database(path: path)
        try ControllerBehaviourTests.makeItems(database, count: 40)
        let controller = try ResultsController(database: database, request: sectioned, cacheName: "c")
        try controller.performFetch()
        let before = tableLayout(controller)
        // The first changeset never reaches the controller.
        _ = try database.trackingChanges {
            try database.execute("UPDATE items SET state = 'AK' WHERE id IN (3, 8)")
            try database.execute("DELETE FROM items WHERE id = 5")
        }
        let second = try database.trackingChanges { try database.execute("INSERT INTO items VALUES (41, 'new', 'TX', 99)") }.changeset
        let delta = try controller.apply(second)
        let expected = try freshLayout(database, sectioned)
        XCTAssertEqual(try applyAsTableView(delta, to: before).map(\.ids), expected.map(\.ids))
        XCTAssertEqual(tableLayout(controller).map(\.ids), expected.map(\.ids))
        XCTAssertEqual(Set(delta.updatedRows.map(\.id)).count, 37, "without versions, every row that stayed may have changed")
        try controller.persistCache()

        let restored = try ResultsController(database: Database(path: path), request: sectioned, cacheName: "c")
        try restored.performFetch()
        XCTAssertEqual(tableLayout(restored).map(\.ids), expected.map(\.ids))
        // The same changeset again: nothing moves, and without versions every row may have changed.
        let again = try controller.apply(second)
        XCTAssertTrue(again.insertedRows.isEmpty && again.deletedRows.isEmpty && again.movedRows.isEmpty, "\(again)")
        XCTAssertEqual(again.updatedRows.count, controller.count)
        XCTAssertEqual(tableLayout(controller).map(\.ids), expected.map(\.ids))
    }

    func testACacheWhoseBytesStillDecodeButAreOutOfOrderIsFetchedAgain() throws {
        let path = temporaryDatabasePath()
        let database = try Database(path: path)
        try ControllerBehaviourTests.makeItems(database, count: 30)
        try ResultsController(database: database, request: sectioned, cacheName: "c").performFetch()
        // One byte of a state in the chunk: 'CA' becomes 'ZA' wherever it is first, which still decodes.
        let chunks = try database.fetchAll("SELECT rowid, entries FROM results_controller_chunks")
        XCTAssertFalse(chunks.isEmpty)
        for chunk in chunks {
            guard case .blob(var bytes) = chunk.values[1],
                let at = bytes.indices.dropLast().first(where: { bytes[$0] == UInt8(ascii: "C") && bytes[$0 + 1] == UInt8(ascii: "A") })
            else { continue }
            bytes[at] = UInt8(ascii: "Z")
            try database.execute("UPDATE results_controller_chunks SET entries = ? WHERE rowid = ?", [.blob(bytes), chunk.values[0]])
            break
        }
        let controller = try ResultsController(database: Database(path: path), request: sectioned, cacheName: "c")
        try controller.performFetch()
        XCTAssertEqual(tableLayout(controller).map(\.ids), try freshLayout(database, sectioned).map(\.ids))
        let changeset = try database.trackingChanges { try database.execute("UPDATE items SET state = 'AK' WHERE id = 7") }.changeset
        XCTAssertEqual(try controller.apply(changeset).movedRows.map(\.id), [7])
    }

    func testATableWhoseRowsChangesetsCannotNameIsRefusedAtItsFirstChangesetWithTheFix() throws {
        let database = try Database(path: ":memory:")
        try database.executeScript("""
            CREATE TABLE pages (slug TEXT PRIMARY KEY, title TEXT);
            CREATE TABLE loose (title TEXT);
            CREATE TABLE authors (name TEXT PRIMARY KEY);
            CREATE TABLE posts (id INTEGER PRIMARY KEY, legacy INTEGER UNIQUE, author TEXT);
            INSERT INTO pages VALUES ('a', 'A'); INSERT INTO loose VALUES ('A');
            INSERT INTO authors VALUES ('ann'); INSERT INTO posts VALUES (1, 10, 'ann');
            """)
        let requests = [
            ("no INTEGER PRIMARY KEY", FetchRequest(table: "pages", sortDescriptors: [SortDescriptor(key: "title")])),
            ("no INTEGER PRIMARY KEY", FetchRequest(table: "loose", sortDescriptors: [SortDescriptor(key: "title")])),
            ("no INTEGER PRIMARY KEY", FetchRequest(table: "posts", sortDescriptors: [SortDescriptor(key: "id")],
                                                    relationships: [Relationship(name: "author", table: "authors", foreignKey: "author", targetKey: "name")])),
            ("is not the primary key", FetchRequest(table: "posts", idColumn: "legacy", sortDescriptors: [SortDescriptor(key: "id")])),
        ]
        for (reason, request) in requests {
            // Listed, as before: only changesets cannot name its rows.
            let controller = try ResultsController(database: database, request: request)
            try controller.performFetch()
            XCTAssertEqual(controller.count, 1)
            let changeset = try database.trackingChanges { try database.execute("UPDATE posts SET author = 'ann' WHERE id = 1") }.changeset
            XCTAssertThrowsError(try controller.apply(changeset), request.table) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(error)")
            }
        }
        let fine = try ResultsController(database: database, request: FetchRequest(table: "posts", sortDescriptors: [SortDescriptor(key: "id")]))
        try fine.performFetch()
        let changeset = try database.trackingChanges { try database.execute("INSERT INTO posts VALUES (2, 20, 'ann')") }.changeset
        XCTAssertEqual(try fine.apply(changeset).insertedRows.map(\.id), [2])
    }

    func testASectionKeyUnderACaseInsensitiveCollationIsRefused() throws {
        let database = try Database(path: ":memory:")
        try database.executeScript("""
            CREATE TABLE rows (id INTEGER PRIMARY KEY, sec TEXT, folded TEXT COLLATE NOCASE);
            INSERT INTO rows VALUES (1, 'b', 'b'), (2, 'B', 'B'), (3, 'b', 'b'), (4, 'a', 'a');
            """)
        let explicit = FetchRequest(table: "rows", sortDescriptors: [SortDescriptor(key: "sec", collation: "NOCASE")], sectionKey: "sec")
        let declared = FetchRequest(table: "rows", sortDescriptors: [SortDescriptor(key: "folded")], sectionKey: "folded")
        for request in [explicit, declared] {
            XCTAssertThrowsError(try ResultsController(database: database, request: request)) { error in
                XCTAssertTrue("\(error)".contains("collation NOCASE"), "\(error)")
            }
        }
        // Sorting rows within sections case-insensitively is fine, and so is a binary section key.
        let fine = FetchRequest(table: "rows", sortDescriptors: [SortDescriptor(key: "sec", collation: "BINARY"), SortDescriptor(key: "folded")],
                                sectionKey: "sec")
        let controller = try ResultsController(database: database, request: fine)
        try controller.performFetch()
        XCTAssertEqual(controller.sections.map(\.name), ["B", "a", "b"])
        XCTAssertEqual(controller.section(forSectionIndexTitle: "B", at: 0), 0)
        XCTAssertNil(controller.section(forSectionIndexTitle: "Z", at: 0))
        // Switching to such a request is refused too, and the controller keeps its results.
        XCTAssertThrowsError(try controller.setRequest(declared))
        XCTAssertEqual(controller.sections.map(\.name), ["B", "a", "b"])
    }

    /// A sort key whose column declares NOCASE is ordered by SQLite under it: the controller compares rows
    /// under it too, so that a row it places agrees with the query, and its cache stays usable.
    func testASortKeysDeclaredCollationIsTheControllersToo() throws {
        let path = temporaryDatabasePath()
        let database = try Database(path: path)
        try database.executeScript("""
            CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE);
            INSERT INTO names VALUES (1, 'b'), (2, 'C'), (3, 'a'), (4, 'D');
            """)
        let request = FetchRequest(table: "names", sortDescriptors: [SortDescriptor(key: "name")])
        let controller = try ResultsController(database: database, request: request, cacheName: "n")
        try controller.performFetch()
        XCTAssertEqual(controller.fetchedIDs, [3, 1, 2, 4])
        let changeset = try database.trackingChanges { try database.execute("INSERT INTO names VALUES (5, 'B')") }.changeset
        try controller.apply(changeset)
        XCTAssertEqual(controller.fetchedIDs, try freshLayout(database, request).flatMap(\.ids))
        try controller.persistCache()
        // Written behind the cache's back: a restored snapshot does not have it, a fetch would.
        try database.execute("INSERT INTO names VALUES (6, 'e')")
        let restored = try ResultsController(database: database, request: request, cacheName: "n")
        try restored.performFetch()
        XCTAssertEqual(restored.fetchedIDs, controller.fetchedIDs, "restored from the cache, in the order it was saved in")
        XCTAssertThrowsError(try ResultsController(database: database, request: FetchRequest(
            table: "names", sortDescriptors: [SortDescriptor(key: "name", collation: "unicode")])))
    }

    func testAChangeToAPrefetchedRelatedRowIsAnUpdateOfTheRowsThatShowIt() throws {
        let database = try Database(path: ":memory:")
        try database.executeScript("""
            CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT, author_id INTEGER);
            INSERT INTO authors VALUES (1, 'Ann'), (2, 'Ben');
            INSERT INTO posts VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 1);
            """)
        let author = Relationship(name: "author", table: "authors", foreignKey: "author_id")
        for prefetched in [true, false] {
            let request = FetchRequest(table: "posts", sortDescriptors: [SortDescriptor(key: "title")], relationships: [author],
                                       prefetchedRelationships: prefetched ? ["author"] : [])
            let controller = try ResultsController(database: database, request: request)
            try controller.performFetch()
            let changeset = try database.trackingChanges { try database.execute("UPDATE authors SET name = name || '!' WHERE id = 1") }.changeset
            let delta = try controller.apply(changeset)
            XCTAssertEqual(delta.updatedRows.map(\.id).sorted(), prefetched ? [1, 3] : [], "prefetched: \(prefetched)")
            XCTAssertTrue(delta.movedRows.isEmpty && delta.insertedRows.isEmpty && delta.deletedRows.isEmpty)
            if prefetched { XCTAssertEqual(try controller.object(at: IndexPath(item: 0, section: 0))["author.name"], .text("Ann!")) }
        }
    }

    func testADeltaStreamWhoseLoopEndedNoLongerHoldsDeltas() async throws {
        let database = try Database(path: ":memory:")
        try ControllerBehaviourTests.makeItems(database, count: 10)
        let controller = try ResultsController(database: database, request: sectioned)
        try controller.performFetch()
        let stream = controller.deltaStream()
        let reader = Task {
            var seen = 0
            for await _ in stream { seen += 1 }
            return seen
        }
        reader.cancel()
        _ = await reader.value
        var next = 100
        func insert() throws -> Delta {
            next += 1
            let changeset = try database.trackingChanges { try database.execute("INSERT INTO items VALUES (\(next), 'n', 'CA', 1)") }.changeset
            return try controller.apply(changeset)
        }
        XCTAssertEqual(try insert().insertedRows.count, 1)
        XCTAssertEqual(controller.deltaListenerCount, 0, "the cancelled stream's continuation went with its loop")
        let live = controller.deltaStream()
        XCTAssertEqual(controller.deltaListenerCount, 1)
        _ = try insert()
        var iterator = live.makeAsyncIterator()
        let delta = await iterator.next()
        XCTAssertEqual(delta?.insertedRows.map(\.id), [102])
    }
}
