import Foundation
import SiteStore
@testable import SiteBuild
import TestSupport
import XCTest

/// A build after a change looks at the pages the controllers' deltas name, not at every page, and still
/// writes what a clean build writes; a watch's session (controllers and manifest kept in memory) too.
final class DeltaPlanTests: XCTestCase {
    private var scratch: ScratchSite!
    private var site: URL { scratch.site }

    override func setUpWithError() throws {
        scratch = try ScratchSite("delta-plan")
    }

    override func tearDownWithError() throws {
        scratch.remove()
    }

    /// 10,000 banks in 50 states, the example site's listings (500 pages newest first, a section per
    /// state, detail pages): one bank's notes edited is one listing page, one state's page and three detail
    /// pages looked at (its own and its neighbours', which show its title), whatever the site's size.
    func testAOneRecordEditLooksAtThePagesItTouchesNotEveryPage() throws {
        let csv = site.appendingPathComponent("content/records/failed-banks.csv")
        var rows = ["name,city,state,cert,acquirer,closing_date,fund,notes"]
        let states = (0..<50).map { String(UnicodeScalar(65 + $0 / 26)!) + String(UnicodeScalar(65 + $0 % 26)!) }
        for number in 0..<10_000 {
            let day = String(format: "20%02d-%02d-%02d", number % 24, number % 12 + 1, number % 28 + 1)
            rows.append("Bank \(number),Town \(number % 300),\(states[number % 50]),\(100_000 + number),Acquirer,\(day),\(number),Notes of bank \(number).")
        }
        try (rows.joined(separator: "\n") + "\n").write(to: csv, atomically: true, encoding: .utf8)
        let first = try SiteBuilder(root: site).build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        XCTAssertGreaterThan(first.pagesLookedAt, 10_000, "a first build looks at every page")

        rows[4_321] = rows[4_321].replacingOccurrences(of: "Notes of bank", with: "New notes of bank")
        try (rows.joined(separator: "\n") + "\n").write(to: csv, atomically: true, encoding: .utf8)
        let edit = try SiteBuilder(root: site).build()
        XCTAssertTrue(edit.succeeded, "\(edit.problems)")
        XCTAssertLessThanOrEqual(edit.pagesLookedAt, 8, "pages looked at for one record's notes: \(edit.rendered)")
        XCTAssertEqual(Set(edit.rendered.map(\.path)).count, edit.rendered.count)
        XCTAssertLessThanOrEqual(edit.rendered.count, 5, "\(edit.rendered)")
        XCTAssertTrue(edit.rendered.contains { $0.path.hasPrefix("banks/104320/") }, "the record's own page: \(edit.rendered)")

        // Under a session (a watch's), the next edit looks at as few, from controllers kept in memory.
        var watching = SiteBuilder(root: site)
        watching.session = BuildSession()
        XCTAssertTrue(try watching.build().succeeded)
        rows[1_234] = rows[1_234].replacingOccurrences(of: "Notes of bank", with: "Other notes of bank")
        try (rows.joined(separator: "\n") + "\n").write(to: csv, atomically: true, encoding: .utf8)
        let kept = try watching.build()
        XCTAssertTrue(kept.succeeded, "\(kept.problems)")
        XCTAssertLessThanOrEqual(kept.pagesLookedAt, 8, "\(kept.rendered)")
        XCTAssertEqual(watching.session?.controllerCount, 7, "every listing's and collection's controller is kept")
        XCTAssertGreaterThan(watching.session?.workerConnections.count ?? 0, 0, "the render workers' connections are kept")
        try assertSameAsCleanBuild("after two one-record edits")

        // A record that moves to the top of the listing shifts every page of it, and of its state: every
        // page of those is looked at, but not the other states' or the detail pages far from it.
        rows[777] = "Bank 776,Town \(776 % 300),\(states[776 % 50]),100776,Acquirer,2099-12-31,776,Moved."
        try (rows.joined(separator: "\n") + "\n").write(to: csv, atomically: true, encoding: .utf8)
        let moved = try watching.build()
        XCTAssertTrue(moved.succeeded, "\(moved.problems)")
        XCTAssertLessThan(moved.pagesLookedAt, 1_000, "\(moved.pagesLookedAt) pages looked at")
        try assertSameAsCleanBuild("after a record moved to the top")

        // A new record at the top: its listing's and its state's pages all shift and are looked at. The store's
        // manifest is not asked about every old page's possible files (its Markdown twin, its feeds) to find
        // those past the new count: the session's index has the pages' own files.
        rows.append("Bank 10000,Town 1,\(states[0]),110000,Acquirer,2099-12-30,10000,New.")
        try (rows.joined(separator: "\n") + "\n").write(to: csv, atomically: true, encoding: .utf8)
        let added = try watching.build()
        XCTAssertTrue(added.succeeded, "\(added.problems)")
        XCTAssertGreaterThan(added.pagesLookedAt, 500, "every page of the listing shifts")
        XCTAssertLessThanOrEqual(added.manifestQueries, added.pagesLookedAt, "at most one query a page looked at: \(added.pagesLookedAt) pages")
        try assertSameAsCleanBuild("after a record added at the top")

        // As a process of its own (no index kept, the controllers from their caches), the listing's shifted
        // pages are read from the store's manifest in one query, not one a page.
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        rows.append("Bank 10001,Town 2,\(states[1]),110001,Acquirer,2099-12-31,10001,Newer.")
        try (rows.joined(separator: "\n") + "\n").write(to: csv, atomically: true, encoding: .utf8)
        let process = try SiteBuilder(root: site).build()
        XCTAssertTrue(process.succeeded, "\(process.problems)")
        XCTAssertGreaterThan(process.pagesLookedAt, 500, "every page of the listing shifts")
        XCTAssertLessThan(process.pagesLookedAt, 1_000, "\(process.pagesLookedAt) pages looked at")
        XCTAssertLessThanOrEqual(process.manifestQueries, process.pagesLookedAt / 10, "\(process.pagesLookedAt) pages looked at")
        try assertSameAsCleanBuild("after a record added at the top, as a process")
    }

    /// A watch's builds (one session: controllers and manifest in memory) equal clean builds over random
    /// changes, with a build of another process now and then (its changes must not be missed), a build
    /// stopped by a template typo (the session starts over), and the session itself started again.
    func testBuildsOfOneSessionEqualCleanBuildsOverRandomChanges() throws {
        let seed = ProcessInfo.processInfo.environment["SITEGEN_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...999_999)
        let steps = ProcessInfo.processInfo.environment["SITEGEN_STEPS"].flatMap(Int.init) ?? 120
        var random = SeededGenerator(seed: seed)
        var mutator = try SiteMutator(site: site, events: true)
        var watching = SiteBuilder(root: site)
        watching.session = BuildSession()
        XCTAssertTrue(try watching.build().succeeded)
        var other = 0, stopped = 0, restarted = 0
        for step in 1...steps {
            let change = try mutator.mutate(using: &random)
            let context = "seed \(seed) (SITEGEN_SEED=\(seed) replays it), step \(step): \(change)"
            switch Int.random(in: 0..<12, using: &random) {
            case 0:
                // Another process builds this change; the session's next build must see the store moved on.
                XCTAssertTrue(try SiteBuilder(root: site).build().succeeded, context)
                _ = try mutator.mutate(using: &random)
                other += 1
            case 1:
                let file = site.appendingPathComponent("Templates/list.mustache")
                let text = try String(contentsOf: file, encoding: .utf8)
                try (text + "{{no_such_value}}").write(to: file, atomically: true, encoding: .utf8)
                XCTAssertThrowsError(try watching.build(), "\(context): a build with list.mustache broken")
                try text.write(to: file, atomically: true, encoding: .utf8)
                stopped += 1
            case 2:
                watching.session = BuildSession()
                restarted += 1
            default:
                break
            }
            let summary = try watching.build()
            XCTAssertTrue(summary.succeeded, "\(context): \(summary.problems)")
            // A watch saves its controllers' caches when it is quiet: between some builds, not others.
            if Bool.random(using: &random) { watching.session?.saveCaches(storePath: watching.storePath) }
            try assertSameAsCleanBuild(context)
            if testRun?.failureCount ?? 0 > 0 { break }
        }
        print("session oracle: seed \(seed), \(steps) steps (\(other) with another process's build, \(stopped) stopped, \(restarted) restarts)")
    }

    /// A watch's builds leave the listings' caches to be saved when the watch is quiet (`saveCaches`), so a
    /// build does not wait on them; once saved, a `sitegen build` process catches up from them. A save after
    /// another process's build writes nothing: that build's caches are the present ones.
    func testASessionSavesItsCachesWhenToldAndNeverOverAnotherProcesssBuild() throws {
        let csv = site.appendingPathComponent("content/records/failed-banks.csv")
        func edit(_ name: String) throws {
            let text = try String(contentsOf: csv, encoding: .utf8)
            try text.replacingOccurrences(of: name + ",", with: name + " (renamed),").write(to: csv, atomically: true, encoding: .utf8)
        }
        var watching = SiteBuilder(root: site)
        let session = BuildSession()
        watching.session = session
        XCTAssertTrue(try watching.build().succeeded)
        session.saveCaches(storePath: watching.storePath)
        try edit("Capitol Bank")
        let edited = try watching.build()
        XCTAssertTrue(edited.succeeded && edited.rowsUpdated == 1, "\(edited.problems), \(edited.rowsUpdated) rows updated")
        let store = try SiteStore(path: watching.storePath.path)
        func cacheGenerations() throws -> [String: Int64] {
            Dictionary(uniqueKeysWithValues: try store.database.fetchAll("SELECT name, generation FROM results_controller_cache").map {
                ($0["name"]?.stringValue ?? "", $0["generation"]?.int64Value ?? -1)
            })
        }
        let generation = store.database.generation
        let before = try cacheGenerations()
        XCTAssertEqual(before.count, 7, "\(before)")
        XCTAssertTrue(before.values.allSatisfy { $0 < generation }, "saved during the build: \(before), store at \(generation)")

        session.saveCaches(storePath: watching.storePath)
        XCTAssertEqual(Set(try cacheGenerations().values), [generation])
        try edit("Phoenix Savings and Loan")
        let process = try SiteBuilder(root: site).build()
        XCTAssertTrue(process.succeeded, "\(process.problems)")
        XCTAssertTrue(process.deltas.allSatisfy(\.caughtUp), "a process after the save catches up from the caches: \(process.deltas)")
        XCTAssertLessThanOrEqual(process.pagesLookedAt, 8)

        // The session's controllers are behind that build: a save now writes nothing, and lets go of them.
        let afterProcess = try cacheGenerations()
        XCTAssertEqual(Set(afterProcess.values), [store.database.generation])
        session.saveCaches(storePath: watching.storePath)
        XCTAssertEqual(try cacheGenerations(), afterProcess)
        XCTAssertEqual(session.controllerCount, 0)
        try edit("Farmers & Merchants Bank of Long Beach")
        XCTAssertTrue(try watching.build().succeeded)
        try assertSameAsCleanBuild("after a session's build that followed another process's")
    }

    /// A render worker's connection kept for the next build of a session sees what was committed after it
    /// was given back, though a statement of its last build stopped part way (a page's error).
    func testAKeptWorkerConnectionSeesWhatWasCommittedSince() throws {
        let path = scratch.work.appendingPathComponent("kept.sqlite").path
        let writer = try Database(path: path)
        try writer.execute("PRAGMA journal_mode = WAL")
        try writer.execute("CREATE TABLE t (x INTEGER)")
        try writer.execute("INSERT INTO t VALUES (1), (2)")
        let reader = try Database(path: path, readOnly: true)
        let statement = try reader.cachedStatement("SELECT x FROM t ORDER BY x")
        try statement.bind([])
        XCTAssertTrue(try statement.step(), "left part way, holding its read")
        let kept = WorkerConnections()
        kept.giveBack(reader)
        try writer.execute("UPDATE t SET x = x + 10")
        let taken = try XCTUnwrap(kept.take())
        XCTAssertEqual(try taken.fetchValue("SELECT min(x) FROM t")?.int64Value, 11)
    }

    private func assertSameAsCleanBuild(_ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try scratch.assertSameAsCleanBuild(context, file: file, line: line)
    }

    /// The CSV lines (a header, then a bank a line) of `count` banks in states S0 to S6, closed on dates that
    /// repeat every 168 banks.
    private static func banksInSevenStates(_ count: Int) -> [String] {
        ["name,city,state,cert,acquirer,closing_date,fund,notes"] + (0..<count).map { number in
            let day = String(format: "20%02d-%02d-%02d", number % 24, number % 12 + 1, number % 28 + 1)
            return "Bank \(number),Town \(number % 300),S\(number % 7),\(100_000 + number),Acquirer,\(day),\(number),Notes."
        }
    }

    /// Writes `rows` as the example site's banks.
    private func writeBanks(_ rows: [String]) throws {
        let csv = site.appendingPathComponent("content/records/failed-banks.csv")
        try (rows.joined(separator: "\n") + "\n").write(to: csv, atomically: true, encoding: .utf8)
    }

    /// 2,000 banks newest first, 100 pages: a new bank at the top shifts every page by one row, and the
    /// pages are made of the pieces the last build rendered for their rows, the new bank's alone rendered
    /// (the states' pages, which have Markdown twins, are rendered whole). A template edited renders every
    /// item afresh; an edited bank renders its own item again. Each build equals a clean one.
    func testShiftedPagesAreMadeOfTheirRowsPiecesRenderedBefore() throws {
        var rows = Self.banksInSevenStates(2_000)
        func write() throws { try writeBanks(rows) }
        try write()
        let first = try SiteBuilder(root: site).build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        XCTAssertGreaterThanOrEqual(first.listItemsRendered, 2_000, "a first build renders every item into a piece")

        rows.append("Bank New,Town New,S1,999999,Acquirer,2099-12-31,1,Newest.")
        try write()
        let shifted = try SiteBuilder(root: site).build()
        XCTAssertTrue(shifted.succeeded, "\(shifted.problems)")
        XCTAssertGreaterThanOrEqual(shifted.rendered.filter { $0.path.hasPrefix("page/") }.count, 99, "every page of the listing shifted")
        XCTAssertEqual(shifted.listItemsRendered, 1, "only the new bank's item is rendered")
        XCTAssertGreaterThanOrEqual(shifted.listItemsReused, 1_990)
        try assertSameAsCleanBuild("after a bank added at the top")

        let template = site.appendingPathComponent("Templates/list.mustache")
        let text = try String(contentsOf: template, encoding: .utf8)
        try text.replacingOccurrences(of: "<td class=\"date\">", with: "<td class=\"date when\">").write(to: template, atomically: true, encoding: .utf8)
        let edited = try SiteBuilder(root: site).build()
        XCTAssertEqual(edited.listItemsReused, 0, "a template edited renders every item again")
        XCTAssertGreaterThanOrEqual(edited.listItemsRendered, 2_001)
        try assertSameAsCleanBuild("after the list template was edited")

        rows[1_500] = rows[1_500].replacingOccurrences(of: "Town ", with: "City ")
        rows.append("Bank Newer,Town Newer,S2,999998,Acquirer,2100-01-01,1,Newer.")
        try write()
        let both = try SiteBuilder(root: site).build()
        XCTAssertEqual(both.listItemsRendered, 2, "the new bank's item and the edited one's")
        try assertSameAsCleanBuild("after a bank edited and one added")
    }

    /// Banks whose every field has the same width: a new bank at the top shifts every listing page by a row
    /// and leaves each page's size as it was. The writer knows the old bytes hash otherwise (the manifest has
    /// their hash), so it writes the pages without reading their old files to compare.
    func testAShiftedPageOfTheSameSizeIsWrittenWithoutReadingItsOldFile() throws {
        var rows = ["name,city,state,cert,acquirer,closing_date,fund,notes"] + (0..<2_000).map { number in
            let day = String(format: "20%02d-%02d-%02d", number % 24, number % 12 + 1, number % 28 + 1)
            return "Bank \(1_000 + number),Town \(100 + number % 300),S\(number % 7),\(100_000 + number),Acquirer,\(day),\(1_000 + number),Notes."
        }
        try writeBanks(rows)
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        let before = try String(contentsOf: site.appendingPathComponent("output/page/50/index.html"), encoding: .utf8)

        rows.append("Bank 9999,Town 999,S1,999999,Acquirer,2099-12-31,9999,Notes.")
        try writeBanks(rows)
        let shifted = try SiteBuilder(root: site).build()
        XCTAssertTrue(shifted.succeeded, "\(shifted.problems)")
        let after = try String(contentsOf: site.appendingPathComponent("output/page/50/index.html"), encoding: .utf8)
        XCTAssertNotEqual(after, before, "the page shifted")
        XCTAssertEqual(after.utf8.count, before.utf8.count, "and kept its size")
        XCTAssertGreaterThanOrEqual(shifted.writtenPaths.filter { $0.hasPrefix("page/") }.count, 99, "every page of the listing is written")
        XCTAssertLessThanOrEqual(shifted.oldFilesRead, 5, "old files read to compare: \(shifted.oldFilesRead)")
        try assertSameAsCleanBuild("after a bank of the same width added at the top")
    }

    /// A listing's pieces are kept in its rows' order; a bank that moves or goes leaves its old piece where
    /// it was, and the page rendered over that place drops it: the pieces stay about one a row, not one
    /// per place a row ever had.
    func testPiecesOfRowsThatMovedOrWentAreDroppedByThePagesOverTheirOldPlaces() throws {
        var rows = Self.banksInSevenStates(2_000)
        func write() throws { try writeBanks(rows) }
        try write()
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        let store = site.appendingPathComponent(".sitegen/store.sqlite").path
        // The ids of the banks deleted below (certs 101200 to 101209); the news listings' rows are fewer.
        let deleted = try Database(path: store, readOnly: true).fetchAll("SELECT _id FROM banks WHERE cert BETWEEN 101200 AND 101209")
            .compactMap { $0["_id"]?.int64Value }.map(String.init).joined(separator: ",")
        // Pieces of one key and section under more than one place (a row's old and new), and of rows gone.
        func leftOver() throws -> (moved: Int, gone: Int) {
            let database = try Database(path: store, readOnly: true)
            let moved = try database.fetchValue("""
                SELECT count(*) FROM (SELECT 1 FROM sitegen_item_pieces GROUP BY key, section, id HAVING count(*) > 1)
                """)?.int64Value ?? -1
            let gone = try database.fetchValue("SELECT count(*) FROM sitegen_item_pieces WHERE id IN (\(deleted))")?.int64Value ?? -1
            return (Int(moved), Int(gone))
        }
        XCTAssertEqual(try leftOver().moved, 0)
        XCTAssertEqual(try leftOver().gone, 10, "the banks to be deleted have their pieces")

        // Ten banks moved to the top, ten others deleted.
        for number in 100..<110 { rows[number + 1] = rows[number + 1].replacingOccurrences(of: ",Acquirer,20", with: ",Acquirer,30") }
        rows.removeSubrange(1_201..<1_211)
        try write()
        let changed = try SiteBuilder(root: site).build()
        XCTAssertTrue(changed.succeeded, "\(changed.problems)")
        XCTAssertLessThanOrEqual(changed.listItemsRendered, 10, "the moved banks' items alone")
        let (moved, gone) = try leftOver()
        // A place at a page's first or last row is not inside what that page reads: those may stay.
        XCTAssertLessThanOrEqual(moved, 3, "of 10 banks moved, old pieces left")
        XCTAssertLessThanOrEqual(gone, 3, "of 10 banks deleted, pieces left")
        try assertSameAsCleanBuild("after banks moved and deleted")
    }
}
