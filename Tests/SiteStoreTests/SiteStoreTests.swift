import Foundation
import SiteStore
import XCTest

final class SiteStoreTests: XCTestCase {
    private let schema = CollectionSchema(table: "banks", columns: [("name", .text), ("state", .text)], indexedColumns: ["state"])

    private func row(_ key: String, _ name: String, _ state: String, hash: Int64? = nil) -> StoredRow {
        StoredRow(key: key, line: 1, contentHash: hash ?? Int64(truncatingIfNeeded: (name + state).hashValue),
                  values: [.text(name), .text(state)])
    }

    func testARealNumberIsShownInFullInItsFewestDigits() {
        let shown = [0.00001, 1e16, 1e15, 12_345_678_901_234_567, -0.5, 2.5e-7, 10, -3, 1234.5678, 1e21, 0.1 + 0.2].map(DatabaseValue.text(of:))
        XCTAssertEqual(shown, ["0.00001", "10000000000000000", "1000000000000000", "12345678901234568", "-0.5", "0.00000025", "10", "-3",
                               "1234.5678", "1000000000000000000000", "0.30000000000000004"])
        for number in [0.00001, 1e16, 12_345_678_901_234_567, 2.5e-7, 0.1 + 0.2, 1e21, -7.25e-3] {
            XCTAssertEqual(Double(DatabaseValue.text(of: number)), number, "reads back as the same number")
        }
    }

    func testABulkWriteCommitsThroughARollbackJournalAndTheStoreReturnsToTheLog() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-bulk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let store = try SiteStore(path: path)
        try store.prepareTable(schema)
        let changes = try store.bulkWriting {
            XCTAssertEqual(try store.database.fetchValue("PRAGMA journal_mode")?.stringValue, "delete")
            return try store.transaction { try store.replaceRows(of: "a.csv", in: schema, with: [row("1", "Alpha", "CA")]) }
        }
        XCTAssertEqual(changes.tables["banks"]?.inserted.count, 1)
        XCTAssertEqual(try store.database.fetchValue("PRAGMA journal_mode")?.stringValue, "wal")
        XCTAssertEqual(try SiteStore(path: path).rowCount(of: "banks"), 1, "another connection sees the committed row")
    }

    func testANewStoresFirstBulkLoadIsSyncedInTheBackgroundAndAStoreLeftUnsyncedIsMadeAgain() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-unsynced-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let marker = path + "-unsynced"
        let store = try SiteStore(path: path)
        try store.prepareTable(schema)
        try store.bulkWriting {
            XCTAssertTrue(FileManager.default.fileExists(atPath: marker), "the marker is on the disk before the load commits")
            XCTAssertEqual(try store.database.fetchValue("PRAGMA synchronous")?.int64Value, 0, "the commit does not wait for the disk")
            _ = try store.transaction { try store.replaceRows(of: "a.csv", in: schema, with: [row("1", "Alpha", "CA")]) }
        }
        XCTAssertEqual(try store.database.fetchValue("PRAGMA synchronous")?.int64Value, 1, "later transactions sync as usual")
        store.waitUntilDurable()
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "synced, the marker goes")

        // Only a new store's first load: a second one, or one into a store that was there, waits for the disk.
        try store.bulkWriting {
            XCTAssertFalse(FileManager.default.fileExists(atPath: marker))
            XCTAssertEqual(try store.database.fetchValue("PRAGMA synchronous")?.int64Value, 1)
        }
        let reopened = try SiteStore(path: path)
        try reopened.bulkWriting { XCTAssertFalse(FileManager.default.fileExists(atPath: marker)) }
        XCTAssertEqual(try reopened.rowCount(of: "banks"), 1)

        // A marker whose sync is still running (its lock held) leaves the store alone.
        FileManager.default.createFile(atPath: marker, contents: nil)
        let held = open(marker, O_RDONLY)
        XCTAssertEqual(flock(held, LOCK_EX), 0)
        XCTAssertEqual(try SiteStore(path: path).rowCount(of: "banks"), 1, "a store being synced is not made again")
        close(held)

        // A power cut (or a killed process) before the sync ended leaves the marker unheld: the store,
        // which holds nothing the sources do not, is made again from nothing.
        let remade = try SiteStore(path: path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker))
        XCTAssertFalse(try remade.database.tableExists("banks"), "the store was made again")
    }

    func testTheBuildsConnectionReadsTheStoreMappedAndSeesItsOwnWritesThroughTheMap() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-mmap-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SiteStore(path: folder.appendingPathComponent("store.sqlite").path)
        XCTAssertEqual(try store.database.fetchValue("PRAGMA mmap_size")?.int64Value, 1 << 30)
        try store.prepareTable(schema)
        // Rows written (through the log, then checkpointed into the mapped file) read back the same.
        let rows = (0..<500).map { row("k\($0)", String(repeating: "n\($0) ", count: 200), "CA") }
        _ = try store.transaction { try store.replaceRows(of: "a.csv", in: schema, with: rows) }
        try store.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let changed = (0..<500).map { row("k\($0)", "changed \($0)", "NY") }
        _ = try store.transaction { try store.replaceRows(of: "a.csv", in: schema, with: changed) }
        let names = try store.database.fetchAll("SELECT name FROM banks ORDER BY _id").map { $0["name"]?.stringValue ?? "" }
        XCTAssertEqual(names, (0..<500).map { "changed \($0)" })
    }

    func testReplacingRowsReportsInsertsUpdatesAndDeletesAndNothingForUnchangedRows() throws {
        let store = try SiteStore(path: ":memory:")
        try store.prepareTable(schema)
        let first = try store.transaction {
            try store.replaceRows(of: "a.csv", in: schema, with: [row("1", "Alpha", "CA", hash: 1), row("2", "Beta", "TX", hash: 2)])
        }.tables["banks"] ?? .init()
        XCTAssertEqual(first.inserted.count, 2)
        XCTAssertTrue(first.updated.isEmpty && first.deleted.isEmpty)

        let same = try store.transaction {
            try store.replaceRows(of: "a.csv", in: schema, with: [row("1", "Alpha", "CA", hash: 1), row("2", "Beta", "TX", hash: 2)])
        }
        XCTAssertTrue(same.isEmpty, "reloading identical rows must change nothing")

        let second = try store.transaction {
            try store.replaceRows(of: "a.csv", in: schema, with: [row("1", "Alpha", "NV", hash: 3), row("3", "Gamma", "FL", hash: 4)])
        }.tables["banks"] ?? .init()
        XCTAssertEqual(second.updated.count, 1)
        XCTAssertEqual(second.inserted.count, 1)
        XCTAssertEqual(second.deleted.count, 1)
        XCTAssertEqual(try store.database.fetchValue("SELECT state FROM banks WHERE _key = '1'"), .text("NV"))
        XCTAssertEqual(try store.rowCount(of: "banks"), 2)
    }

    func testAKeyUsedByAnotherSourceFailsThatSourceAndKeepsItsRows() throws {
        let store = try SiteStore(path: ":memory:")
        try store.prepareTable(schema)
        try store.transaction {
            _ = try store.replaceRows(of: "a.csv", in: schema, with: [row("1", "Alpha", "CA")])
            _ = try store.replaceRows(of: "b.csv", in: schema, with: [row("2", "Beta", "TX")])
        }
        XCTAssertThrowsError(try store.transaction {
            try store.replaceRows(of: "b.csv", in: schema, with: [row("3", "Gamma", "TX"), row("1", "Copy", "CA")])
        }) { error in
            XCTAssertEqual(error as? StoreError, .duplicateKey(collection: "banks", key: "1", otherSource: "a.csv"))
        }
        let keys = try store.database.fetchAll("SELECT _key FROM banks ORDER BY _key").map { $0["_key"] }
        XCTAssertEqual(keys, [.text("1"), .text("2")], "the failing source keeps its previous rows")
    }

    func testALoadedSourceIsRecordedWithItsFileAndRowCountAndAFailedOneKeepsThatRecord() throws {
        let store = try SiteStore(path: ":memory:")
        try store.prepareTable(schema)
        let statements = try store.rowStatements(for: schema)
        let file = SiteStore.SourceFingerprint(size: 120, modified: 1_700_000_000.5, hash: 0, succeeded: true)
        _ = try store.transaction {
            try store.replaceRows(of: "a.csv", using: statements, fingerprint: file) { rows in
                for item in [row("1", "Alpha", "CA"), row("2", "Beta", "TX"), row("3", "Gamma", "TX")] { try rows.write(item) }
                rows.fingerprint?.hash = 77
            }
        }
        let status = try store.sourceStatuses()
        XCTAssertEqual(status.map(\.path), ["a.csv"])
        XCTAssertEqual(status.map(\.status), ["ok"])
        XCTAssertEqual(status.map(\.rows), [3])
        var expected = file
        expected.hash = 77
        expected.row = 1
        XCTAssertEqual(try store.fingerprints(ofCollection: "banks")[SiteStore.pathKey("a.csv")], expected,
                       "the hash the body learned is the one recorded")

        // One row kept, one updated, one gone, one new: still three.
        _ = try store.transaction {
            try store.replaceRows(of: "a.csv", using: statements, fingerprint: file) { rows in
                for item in [row("1", "Alpha", "CA"), row("2", "Beta", "NV"), row("4", "Delta", "OR")] { try rows.write(item) }
            }
        }
        _ = try store.transaction {
            try store.replaceRows(of: "b.csv", using: statements) { rows in try rows.write(row("5", "Epsilon", "WA")) }
        }
        XCTAssertEqual(try store.sourceStatuses().map(\.rows), [3, 1])
        XCTAssertEqual(try store.rowCount(of: "banks"), 4)

        XCTAssertThrowsError(try store.transaction {
            try store.replaceRows(of: "a.csv", using: statements, fingerprint: file) { rows in
                try rows.write(row("6", "Zeta", "CA"))
                try rows.write(row("5", "Copy", "WA"))
            }
        })
        XCTAssertEqual(try store.sourceStatuses().map(\.rows), [3, 1], "a failed replacement records nothing")
        XCTAssertEqual(try store.rowCount(of: "banks"), 4)
    }

    func testRemovingASourceDeletesItsRows() throws {
        let store = try SiteStore(path: ":memory:")
        try store.prepareTable(schema)
        try store.transaction {
            _ = try store.replaceRows(of: "a.csv", in: schema, with: [row("1", "Alpha", "CA")])
            _ = try store.replaceRows(of: "b.csv", in: schema, with: [row("2", "Beta", "TX"), row("3", "Gamma", "TX")])
        }
        let changes = try store.transaction { try store.deleteRows(ofSources: ["b.csv"], in: schema) }
        XCTAssertEqual(changes.tables["banks"]?.deleted.count, 2)
        XCTAssertEqual(try store.rowCount(of: "banks"), 1)
    }

    /// A new row never takes the id of a row deleted before it, in this load or an earlier one, nor does a
    /// list item: "deleted, then inserted" under one id reads as an update of one row.
    func testNewRowsAndListItemsNeverTakeTheIdOfOnesDeletedBefore() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-ids-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let tagged = CollectionSchema(table: "posts", columns: [("title", .text), ("tags", .list)])
        func post(_ key: String, _ tags: [String]) -> StoredRow {
            StoredRow(key: key, line: 1, contentHash: Int64(key.count), values: [.text(key), .text("\(tags)")], lists: ["tags": tags])
        }
        func ids(_ table: String, _ store: SiteStore) throws -> [Int64] {
            try store.database.fetchAll("SELECT _id FROM \(table) ORDER BY _id").compactMap { $0["_id"]?.int64Value }
        }
        do {
            let store = try SiteStore(path: path)
            try store.prepareTable(tagged)
            _ = try store.transaction {
                try store.replaceRows(of: "a", in: tagged, with: [post("p1", ["x"]), post("p2", ["y", "z"])])
            }
            // p2, the newest row, and its items go in the same load that adds p3 from another source.
            let statements = try store.rowStatements(for: tagged)
            let changes = try store.transaction {
                var changes = try store.replaceRows(of: "a", using: statements) { try $0.write(post("p1", ["x"])) }
                changes.merge(try store.replaceRows(of: "b", using: statements) { try $0.write(post("p3", ["w"])) })
                try statements.saveIDs()
                return changes
            }
            XCTAssertEqual(changes.tables["posts"], Changeset.TableChanges(inserted: [3], deleted: [2]))
            XCTAssertEqual(changes.tables["posts__tags"], Changeset.TableChanges(inserted: [4], deleted: [2, 3]))
            _ = try store.transaction { try store.deleteRows(ofSources: ["b"], in: tagged) }
        }
        // The highest ids handed out outlive the rows, and the process.
        let store = try SiteStore(path: path)
        _ = try store.transaction { try store.replaceRows(of: "c", in: tagged, with: [post("p4", ["v"])]) }
        XCTAssertEqual(try ids("posts", store), [1, 4])
        XCTAssertEqual(try ids("posts__tags", store), [1, 5])
    }

    func testChangingTheColumnsRecreatesTheTable() throws {
        let store = try SiteStore(path: ":memory:")
        XCTAssertTrue(try store.prepareTable(schema))
        XCTAssertFalse(try store.prepareTable(schema))
        var wider = schema
        wider.columns.append(("city", .text))
        XCTAssertTrue(try store.prepareTable(wider))
        XCTAssertEqual(try store.database.fetchAll("PRAGMA table_info(banks)").count, 8)
    }

    func testAFailedTransactionLeavesTheStoreAsItWas() throws {
        let store = try SiteStore(path: ":memory:")
        try store.prepareTable(schema)
        struct Abort: Error {}
        XCTAssertThrowsError(try store.transaction {
            _ = try store.replaceRows(of: "a.csv", in: schema, with: [row("1", "Alpha", "CA")])
            throw Abort()
        })
        XCTAssertEqual(try store.rowCount(of: "banks"), 0)
        XCTAssertFalse(store.database.isInsideTransaction)
    }

    func testSQLErrorsCarryTheStatement() throws {
        let database = try Database(path: ":memory:")
        XCTAssertThrowsError(try database.execute("SELECT * FROM missing WHERE x = ?", [1])) { error in
            let error = error as? SQLiteError
            XCTAssertEqual(error?.sql, "SELECT * FROM missing WHERE x = ?")
            XCTAssertTrue(error?.description.contains("no such table: missing") == true)
        }
    }

    func testChangesetsMergeSoThatInsertThenDeleteIsNothing() {
        var changeset = Changeset(tables: ["t": .init(inserted: [1], updated: [2])])
        changeset.merge(Changeset(tables: ["t": .init(updated: [1], deleted: [1, 2, 3])]))
        XCTAssertEqual(changeset.tables["t"], .init(inserted: [], updated: [], deleted: [2, 3]))
    }

    func testListItemsLiveInAJoinTableThatFollowsTheirRecord() throws {
        let store = try SiteStore(path: ":memory:")
        let tagged = CollectionSchema(table: "posts", columns: [("title", .text), ("tags", .list)])
        try store.prepareTable(tagged)
        func post(_ key: String, _ tags: [String], hash: Int64) -> StoredRow {
            StoredRow(key: key, line: 1, contentHash: hash, values: [.text(key), .text("\(tags)")], lists: ["tags": tags])
        }
        func items() throws -> [String] {
            try store.database.fetchAll("SELECT p._key || ':' || t.value AS item FROM posts__tags t JOIN posts p ON p._id = t.record_id ORDER BY p._key, t.position")
                .compactMap { $0["item"]?.stringValue }
        }
        let first = try store.transaction { try store.replaceRows(of: "a", in: tagged, with: [post("p1", ["x", "y"], hash: 1), post("p2", ["y"], hash: 2)]) }
        XCTAssertEqual(first.tables["posts__tags"]?.inserted.count, 3)
        XCTAssertEqual(try items(), ["p1:x", "p1:y", "p2:y"])
        let second = try store.transaction { try store.replaceRows(of: "a", in: tagged, with: [post("p1", ["z"], hash: 3)]) }
        XCTAssertEqual(try items(), ["p1:z"], "p1's tags replaced, p2 and its tags gone")
        XCTAssertEqual(second.tables["posts__tags"]?.deleted.count, 3)
        XCTAssertEqual(second.tables["posts__tags"]?.inserted.count, 1)
        var retyped = tagged
        retyped.columns[1].type = .text
        XCTAssertTrue(try store.prepareTable(retyped))
        XCTAssertFalse(try store.database.tableExists("posts__tags"), "the join table goes with the list column")
    }
}
