import ResultsController
import SiteStore
import XCTest

final class ResultsControllerTests: XCTestCase {
    /// A table of `count` rows: state cycles through five values, score repeats so that sort keys tie.
    private func makeDatabase(count: Int) throws -> Database {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE banks (id INTEGER PRIMARY KEY, name TEXT, state TEXT, score INTEGER)")
        let states = ["CA", "TX", "FL", "NY", "GA"]
        try database.transaction {
            let insert = try database.makeStatement("INSERT INTO banks (id, name, state, score) VALUES (?, ?, ?, ?)")
            for id in 1...count {
                try insert.execute([.integer(Int64(id)), .text("Bank \(id)"), .text(states[id % 5]), .integer(Int64(id % 7))])
            }
        }
        return database
    }

    func testFetchOrdersBySortKeysAndBreaksTiesByID() throws {
        let database = try makeDatabase(count: 50)
        let request = FetchRequest(table: "banks", sortDescriptors: [SortDescriptor(key: "score", ascending: false)])
        let controller = try ResultsController(database: database, request: request)
        try controller.performFetch()
        let expected = (1...50).map { Int64($0) }.sorted { ($0 % 7, -$0) > ($1 % 7, -$1) }
        XCTAssertEqual(controller.fetchedIDs, expected)
        XCTAssertEqual(controller.sections.count, 1)
    }

    func testSectionsFollowTheSectionKeyAndIndexPathsRoundTrip() throws {
        let database = try makeDatabase(count: 23)
        let request = FetchRequest(table: "banks", filter: "score <> ?", arguments: [0],
                                   sortDescriptors: [SortDescriptor(key: "state"), SortDescriptor(key: "name")],
                                   sectionKey: "state", batchSize: 4)
        let controller = try ResultsController(database: database, request: request)
        try controller.performFetch()
        XCTAssertEqual(controller.sections.map(\.name), ["CA", "FL", "GA", "NY", "TX"])
        XCTAssertEqual(controller.sections.map(\.numberOfObjects).reduce(0, +), 20, "the filter drops ids 7, 14, 21")
        XCTAssertEqual(controller.sectionIndexTitles, ["C", "F", "G", "N", "T"])
        for id in controller.fetchedIDs {
            let path = try XCTUnwrap(controller.indexPath(for: id))
            let row = try controller.object(at: path)
            XCTAssertEqual(row["id"], .integer(id))
            XCTAssertEqual(row["state"]?.stringValue, controller.sections[path.section].name)
        }
        XCTAssertNil(controller.indexPath(for: 7))
        XCTAssertThrowsError(try controller.object(at: IndexPath(item: 99, section: 0)))
    }

    func testReadingEveryRowRunsOneIDQueryAndOneQueryPerBatch() throws {
        let database = try makeDatabase(count: 10_000)
        let request = FetchRequest(table: "banks", sortDescriptors: [SortDescriptor(key: "name")], batchSize: 20)
        let controller = try ResultsController(database: database, request: request)
        let before = database.executedStatementCount
        try controller.performFetch()
        var seen = 0
        for section in controller.sections {
            for item in 0..<section.numberOfObjects {
                _ = try controller.object(at: IndexPath(item: item, section: 0))
                seen += 1
            }
        }
        XCTAssertEqual(seen, 10_000)
        XCTAssertEqual(database.executedStatementCount - before, 1 + 500)
    }

    func testASectionKeyThatIsNotTheFirstSortKeyIsRejected() throws {
        let database = try makeDatabase(count: 3)
        let request = FetchRequest(table: "banks", sortDescriptors: [SortDescriptor(key: "name")], sectionKey: "state")
        XCTAssertThrowsError(try ResultsController(database: database, request: request)) { error in
            guard case .invalidRequest = error as? ResultsControllerError else { return XCTFail("\(error)") }
        }
    }

    func testNullsSortFirstAscendingAndLastDescendingLikeCoreData() throws {
        let database = try Database(path: ":memory:")
        try database.executeScript("""
            CREATE TABLE t (id INTEGER PRIMARY KEY, d TEXT);
            INSERT INTO t (id, d) VALUES (1, '2024-01-01'), (2, NULL), (3, '2023-01-01');
            """)
        let ascending = try ResultsController(database: database, request: FetchRequest(table: "t", sortDescriptors: [SortDescriptor(key: "d")]))
        try ascending.performFetch()
        XCTAssertEqual(ascending.fetchedIDs, [2, 3, 1])
        let descending = try ResultsController(database: database, request: FetchRequest(table: "t", sortDescriptors: [SortDescriptor(key: "d", ascending: false)]))
        try descending.performFetch()
        XCTAssertEqual(descending.fetchedIDs, [1, 3, 2])
    }

    func testAnEmptyResultHasNoSections() throws {
        let database = try makeDatabase(count: 5)
        let controller = try ResultsController(database: database, request: FetchRequest(table: "banks", filter: "0"))
        try controller.performFetch()
        XCTAssertTrue(controller.sections.isEmpty)
        XCTAssertTrue(controller.fetchedIDs.isEmpty)
    }
}
