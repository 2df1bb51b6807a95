import Foundation
@testable import SiteBuild
import SiteStore
import TestSupport
import XCTest

/// The oracle for incremental builds is a clean one: after each random change to the example site's
/// sources, the incremental build's output folder must hold exactly the files, byte for byte, that a
/// build from nothing writes, and it must render few more pages than the files whose bytes changed.
final class IncrementalBuildTests: XCTestCase {
    private var scratch: ScratchSite!
    private var site: URL { scratch.site }
    private var clean: URL { scratch.clean }

    override func setUpWithError() throws {
        // Two builds a step, hundreds of steps: in memory (tmpfs) where there is one, since this machine's
        // disk takes a millisecond per new folder.
        scratch = try ScratchSite("incremental")
    }

    override func tearDownWithError() throws {
        scratch.remove()
    }

    func testABuildHasClosedEveryConnectionToTheStoreWhenItReturns() throws {
        // The last connection to close deletes the store's -wal and -shm files: one closed by a worker
        // after the build returned deleted them under a copy of the site made at that moment.
        var random = SeededGenerator(seed: 7)
        var mutator = try SiteMutator(site: site, events: true)
        let store = site.appendingPathComponent(".sitegen/store.sqlite").path
        for step in 0..<30 {
            let change = step == 0 ? "first build" : try mutator.mutate(using: &random)
            XCTAssertTrue(try SiteBuilder(root: site).build().succeeded, change)
            for suffix in ["-wal", "-shm"] {
                XCTAssertFalse(FileManager.default.fileExists(atPath: store + suffix), "step \(step), \(change): \(suffix) is still there")
            }
        }
    }

    func testIncrementalBuildsEqualCleanBuildsOverRandomChanges() throws {
        let seed = ProcessInfo.processInfo.environment["SITEGEN_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...999_999)
        let steps = ProcessInfo.processInfo.environment["SITEGEN_STEPS"].flatMap(Int.init) ?? 200
        var random = SeededGenerator(seed: seed)
        var mutator = try SiteMutator(site: site, events: true)
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        var worstSlack = 0, rendered = 0, written = 0, planned = 0, stopped = 0
        for step in 1...steps {
            let change = try mutator.mutate(using: &random)
            let context = "seed \(seed) (SITEGEN_SEED=\(seed) replays it), step \(step): \(change)"
            // A template typo met while rendering stops a build after its load and before it publishes (an
            // eighth of the steps): the build after the fix must still make exactly what a clean build makes,
            // and render no more than the step's changes need (the slack below), not every page.
            if Int.random(in: 0..<8, using: &random) == 0 {
                let file = site.appendingPathComponent("Templates/" + ["detail.mustache", "list.mustache"][Int.random(in: 0..<2, using: &random)])
                let text = try String(contentsOf: file, encoding: .utf8)
                try (text + "{{no_such_value}}").write(to: file, atomically: true, encoding: .utf8)
                XCTAssertThrowsError(try SiteBuilder(root: site).build(), "\(context): a build with \(file.lastPathComponent) broken")
                try text.write(to: file, atomically: true, encoding: .utf8)
                stopped += 1
            }
            // `--plan` is what a user reads before building: on a quarter of the steps it goes first, and
            // the build must then do exactly what it said.
            let plan = Int.random(in: 0..<4, using: &random) == 0 ? try SiteBuilder(root: site).build(options: SiteBuilder.Options(dryRun: true)) : nil
            let summary = try SiteBuilder(root: site).build()
            XCTAssertTrue(summary.succeeded, "\(context): \(summary.problems)")
            if let plan {
                planned += 1
                XCTAssertEqual(plan.rendered.map(\.path).sorted(), summary.rendered.map(\.path).sorted(), "\(context): pages the plan said would be rendered")
                XCTAssertEqual(plan.rendered.sorted { $0.path < $1.path }.map(\.reason), summary.rendered.sorted { $0.path < $1.path }.map(\.reason), "\(context): the plan's reasons")
                XCTAssertEqual(plan.writtenPaths.sorted(), summary.writtenPaths.sorted(), "\(context): files the plan said would be written")
                XCTAssertEqual(plan.deletedPaths.sorted(), summary.deletedPaths.sorted(), "\(context): files the plan said would be deleted")
            }
            try assertSameAsCleanBuild(context)
            // A page is rendered when its inputs changed; its bytes then nearly always change too. The slack
            // is the pages rendered whose bytes came out the same: a detail page whose neighbour changed
            // something it does not show, a page of a listing whose row changed a field the list omits.
            let pageFiles = summary.writtenPaths.filter { !["sitemap.xml", "robots.txt", "404.html"].contains($0) }
            let slack = summary.rendered.count - Set(pageFiles.map(Self.page)).count
            worstSlack = max(worstSlack, slack)
            rendered += summary.rendered.count
            written += pageFiles.count
            if !change.hasPrefix("template") && !change.hasPrefix("menu") {
                XCTAssertLessThanOrEqual(slack, 6 * 7, "\(context): rendered \(summary.rendered.count) pages, only \(pageFiles.count) files changed")
            }
            if testRun?.failureCount ?? 0 > 0 { break }
        }
        print("incremental oracle: seed \(seed), \(steps) steps (\(planned) planned first, \(stopped) after a build stopped by a template typo), \(rendered) pages rendered, \(written) files written, worst slack \(worstSlack)")
    }

    func testRecordsThatTieOnEverySortFieldAreListedAsACleanBuildListsThem() throws {
        let csv = site.appendingPathComponent("content/records/failed-banks.csv")
        var table = CSVText.parse(try String(contentsOf: csv, encoding: .utf8))
        let cert = table[0].firstIndex(of: "cert")!
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        func rebuild(_ change: String) throws {
            try CSVText.write(table).write(to: csv, atomically: true, encoding: .utf8)
            XCTAssertTrue(try SiteBuilder(root: site).build().succeeded, change)
            try assertSameAsCleanBuild(change)
        }
        // A twin (same name, same closing date) at the line of the record it ties with: the record moves a
        // line down with nothing of it changed.
        var twin = table[1]
        twin[cert] = "990001"
        table.insert(twin, at: 1)
        try rebuild("a twin inserted at its twin's line")
        table.swapAt(1, 2)
        try rebuild("the twins swapped in the file")
        twin[cert] = "10"
        table.append(twin)
        table.remove(at: 2)
        try rebuild("a third twin appended, the first deleted")
    }

    func testPagesThatWouldShareAnAddressAreReportedAndTheFirstPlannedKeepsIt() throws {
        let page = site.appendingPathComponent("content/pages/news.md")
        try "---\ntitle: Our news\n---\nA page of our own.\n".write(to: page, atomically: true, encoding: .utf8)
        let newsPage = site.appendingPathComponent("output/news/index.html")
        // Built again with nothing changed, the clash is reported again: the page is still not published.
        for build in 1...2 {
            let summary = try SiteBuilder(root: site).build()
            XCTAssertFalse(summary.succeeded, "build \(build)")
            XCTAssertEqual(summary.problems.map(\.description), ["content/pages/news.md:1: record 'news' would be published at /news/, "
                                                                 + "which listing 'news' already has; give one of them another path"], "build \(build)")
            let text = try String(contentsOf: newsPage, encoding: .utf8)
            XCTAssertTrue(text.contains("<h1>News</h1>"), "build \(build): the listing keeps /news/")
            XCTAssertFalse(text.contains("A page of our own."), "build \(build)")
        }
        try FileManager.default.removeItem(at: page)
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        try assertSameAsCleanBuild("the page removed")

        // Two listings at one path: the one listed first in sitegen.yml keeps it.
        let config = site.appendingPathComponent("sitegen.yml")
        let settings = try String(contentsOf: config, encoding: .utf8)
        try settings.replacingOccurrences(of: "    path: /news/\n", with: "    path: /\n").write(to: config, atomically: true, encoding: .utf8)
        let summary = try SiteBuilder(root: site).build()
        XCTAssertEqual(summary.problems.map(\.description), ["sitegen.yml: listing 'news' would be published at /, "
                                                             + "which listing 'home' already has; give one of them another path"])
        XCTAssertTrue(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8).contains("Failed banks, newest first"))
    }

    func testTwoRecordsAtOneDetailPathAreReportedAndTheFirstKeepsIt() throws {
        // Pages published by their title: two pages given one title want one address.
        let config = site.appendingPathComponent("sitegen.yml")
        let settings = try String(contentsOf: config, encoding: .utf8)
        try settings.replacingOccurrences(of: "      path: /{key}/\n      template: page", with: "      path: /p/{title}/\n      template: page")
            .write(to: config, atomically: true, encoding: .utf8)
        let methodology = site.appendingPathComponent("content/pages/methodology.md")
        let text = try String(contentsOf: methodology, encoding: .utf8)
        try text.replacingOccurrences(of: "title: How the list is kept", with: "title: About Failed Bank Watch")
            .write(to: methodology, atomically: true, encoding: .utf8)
        // Built again with nothing changed, and after an edit of the second, the clash is reported again.
        for build in 1...3 {
            if build == 3 { try (text.replacingOccurrences(of: "title: How the list is kept", with: "title: About Failed Bank Watch") + "\nEdited.\n")
                .write(to: methodology, atomically: true, encoding: .utf8) }
            let summary = try SiteBuilder(root: site).build()
            XCTAssertFalse(summary.succeeded, "build \(build)")
            XCTAssertEqual(summary.problems.map(\.description), ["content/pages/methodology.md:1: record 'methodology' would be published at "
                + "/p/about-failed-bank-watch/, which record 'about' already has; make '/p/{title}/' unique"], "build \(build)")
            let page = try String(contentsOf: site.appendingPathComponent("output/p/about-failed-bank-watch/index.html"), encoding: .utf8)
            XCTAssertTrue(page.contains("lists every bank closed"), "build \(build): the first record keeps the page")
        }
        try text.write(to: methodology, atomically: true, encoding: .utf8)
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        try assertSameAsCleanBuild("the second page given its own title again")
    }

    func testATemplateEditRendersThePagesThatUseItAndNothingElse() throws {
        let first = try SiteBuilder(root: site).build()
        let newsPages = first.rendered.map(\.path).filter { $0.hasPrefix("news/") && !$0.hasPrefix("news/topics/") && $0.split(separator: "/").count <= 4 && ($0 == "news/index.html" || $0.hasPrefix("news/page/")) }
        // The topics' index page is the sections template's.
        let topicPages = first.rendered.map(\.path).filter { $0.hasPrefix("news/topics/") && $0 != "news/topics/index.html" }
        XCTAssertFalse(newsPages.isEmpty)
        XCTAssertFalse(topicPages.isEmpty)
        let url = site.appendingPathComponent("Templates/news.mustache")
        try (try String(contentsOf: url, encoding: .utf8) + "<!-- edited -->\n").write(to: url, atomically: true, encoding: .utf8)
        let summary = try SiteBuilder(root: site).build()
        // The news template lists the news and the news by topic; detail pages and the banks' listings use others.
        XCTAssertEqual(Set(summary.rendered.map(\.path)), Set(newsPages + topicPages))
        XCTAssertTrue(summary.rendered.allSatisfy { $0.reason == "template changed: news.mustache" }, "\(Set(summary.rendered.map(\.reason)))")
        try assertSameAsCleanBuild("after a template edit")
    }

    func testAListingEditedInTheConfigRebuildsThatListingOnlyAndASiteSettingRebuildsEverything() throws {
        let first = try SiteBuilder(root: site).build()
        let url = site.appendingPathComponent("sitegen.yml")
        let text = try String(contentsOf: url, encoding: .utf8)
        try text.replacingOccurrences(of: "title: Failed banks by state", with: "title: Failed banks, state by state")
            .write(to: url, atomically: true, encoding: .utf8)
        let listing = try SiteBuilder(root: site).build()
        XCTAssertFalse(listing.rendered.isEmpty)
        // The menu names every listing, so every page shows the new title; robots.txt and the sitemap do not.
        XCTAssertEqual(Set(listing.rendered.map(\.path)), Set(first.rendered.map(\.path)).subtracting(["robots.txt", "sitemap.xml"]))
        try assertSameAsCleanBuild("after a listing's title changed")

        try text.replacingOccurrences(of: "pageSize: 20\n    path: /states/{section}/", with: "pageSize: 15\n    path: /states/{section}/")
            .write(to: url, atomically: true, encoding: .utf8)
        _ = try SiteBuilder(root: site).build()
        try text.replacingOccurrences(of: "pageSize: 20\n    path: /states/{section}/", with: "pageSize: 10\n    path: /states/{section}/")
            .write(to: url, atomically: true, encoding: .utf8)
        let pageSize = try SiteBuilder(root: site).build()
        XCTAssertFalse(pageSize.rendered.isEmpty)
        // That listing's pages, and the sitemap, which lists the pages that came and went.
        XCTAssertTrue(pageSize.rendered.allSatisfy { $0.path.hasPrefix("states/") || $0.path == "sitemap.xml" },
                      "\(pageSize.rendered.map(\.path).filter { !$0.hasPrefix("states/") })")
        XCTAssertTrue(pageSize.writtenPaths.allSatisfy { $0.hasPrefix("states/") || $0 == "sitemap.xml" })
        try assertSameAsCleanBuild("after a listing's page size changed")

        try text.replacingOccurrences(of: "title: Failed Bank Watch", with: "title: Failed Bank Watcher").write(to: url, atomically: true, encoding: .utf8)
        let settings = try SiteBuilder(root: site).build()
        XCTAssertEqual(Set(settings.rendered.map(\.path)), Set(first.rendered.map(\.path)), "every page shows the site's title")
        try assertSameAsCleanBuild("after the site's title changed")
    }

    func testEveryListingCatchesUpFromTheResultsTheBuildBeforeSaved() throws {
        let first = try SiteBuilder(root: site).build()
        XCTAssertEqual(first.deltas.filter(\.caughtUp).map(\.name), [], "nothing cached yet")
        let records = site.appendingPathComponent("content/records/failed-banks.csv")
        let text = try String(contentsOf: records, encoding: .utf8)
        try text.replacingOccurrences(of: "Capitol Bank,", with: "Capitol Bank of Minneapolis,").write(to: records, atomically: true, encoding: .utf8)
        // Saved on the cache writer's connection while the first build rendered: all there for this one.
        let second = try SiteBuilder(root: site).build()
        XCTAssertFalse(second.deltas.isEmpty)
        XCTAssertEqual(second.deltas.filter { !$0.caughtUp }.map(\.name), [])
        XCTAssertTrue(second.deltas.contains { $0.name == "home" && $0.updatedRows == 1 }, "\(second.deltas)")
        try assertSameAsCleanBuild("after an edit caught up with")
    }

    func testControllersFetchedWhileThePlanIsReadBuildWhatACleanBuildBuildsAndSaveTheirCaches() throws {
        // At 100,000 records a watch's build reads its plan for 130 ms and makes the controllers meanwhile;
        // on this small site the plan is held back, so that every controller is made before it is ready.
        var ahead = SiteBuilder.Options()
        ahead.plansAfterFetchingAhead = true
        var random = SeededGenerator(seed: 38)
        var mutator = try SiteMutator(site: site, events: true)
        for step in 0..<12 {
            let change = step == 0 ? "first build" : try mutator.mutate(using: &random)
            let summary = try SiteBuilder(root: site).build(options: ahead)
            XCTAssertTrue(summary.succeeded, "step \(step), \(change): \(summary.problems)")
            XCTAssertFalse(summary.deltas.isEmpty)
            XCTAssertEqual(summary.controllersFetchedAhead, summary.deltas.count, "step \(step), \(change): every controller made ahead")
            try assertSameAsCleanBuild("step \(step), \(change), controllers made ahead")
            // Each controller made ahead saved its results: the next build catches up from them, with nothing to do.
            let next = try SiteBuilder(root: site).build()
            XCTAssertEqual(next.deltas.filter { !$0.caughtUp }.map(\.name), [], "step \(step), \(change)")
            XCTAssertEqual(next.rendered.map(\.path), [], "step \(step), \(change)")
        }
        // A query SQLite rejects, on the second listing, stops the fetching ahead after the first, and is
        // reported at its line before any page is written, as without.
        let config = site.appendingPathComponent("sitegen.yml")
        let text = try String(contentsOf: config, encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let states = try XCTUnwrap(lines.firstIndex(of: "  states:"))
        XCTAssertEqual(lines[states + 1], "    from: banks")
        var broken = lines
        broken.insert("    where: closd > '2024'", at: states + 2)
        try broken.joined(separator: "\n").write(to: config, atomically: true, encoding: .utf8)
        let home = site.appendingPathComponent("output/index.html")
        let homeBefore = try Data(contentsOf: home)
        XCTAssertThrowsError(try SiteBuilder(root: site).build(options: ahead)) { error in
            XCTAssertEqual("\(error)", "sitegen.yml:\(states + 3):12: listing 'states': no such column: closd")
        }
        XCTAssertEqual(try Data(contentsOf: home), homeBefore)
        // Fixed, the build after it catches up from the caches the last good build saved.
        try text.write(to: config, atomically: true, encoding: .utf8)
        let fixed = try SiteBuilder(root: site).build(options: ahead)
        XCTAssertEqual(fixed.deltas.filter { !$0.caughtUp }.map(\.name), [])
        XCTAssertEqual(fixed.rendered.map(\.path), [])
    }

    func testAListingThatRebuildsItsCollectionsTableStartsTheOtherListingsAfresh() throws {
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        // The first record goes, so that rows stored again from the start get other ids than they had.
        let records = site.appendingPathComponent("content/records/failed-banks.csv")
        var lines = try String(contentsOf: records, encoding: .utf8).components(separatedBy: "\n")
        lines.remove(at: 1)
        try lines.joined(separator: "\n").write(to: records, atomically: true, encoding: .utf8)
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        // A listing sorted first on a field no other listing starts with gives the table a new index; the
        // table is made again and every row has a new id, which the other listings' cached results
        // must not still hold.
        let url = site.appendingPathComponent("sitegen.yml")
        let text = try String(contentsOf: url, encoding: .utf8)
        try text.replacingOccurrences(of: "listings:\n", with: """
            listings:
              byname:
                from: banks
                sort: [name]
                pageSize: 20
                path: /names/
                title: Failed banks by name

            """).write(to: url, atomically: true, encoding: .utf8)
        let summary = try SiteBuilder(root: site).build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        // Every listing of banks reads its rows afresh (the cached results all go: a rebuilt table is rare).
        let afresh = Set(summary.deltas.filter { !$0.caughtUp }.map(\.name))
        XCTAssertTrue(afresh.isSuperset(of: ["byname", "detail banks", "home", "states"]), "\(afresh.sorted())")
        try assertSameAsCleanBuild("after a listing that indexes its collection anew")
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        try assertSameAsCleanBuild("the build after that one")
        // `--full` trusts no cached results either.
        let full = try SiteBuilder(root: site).build(options: SiteBuilder.Options(full: true))
        XCTAssertEqual(full.deltas.filter(\.caughtUp).map(\.name), [])
        try assertSameAsCleanBuild("after a full build")
    }

    func testAPlanSaysWhatABuildWouldDoAndWhyAndChangesNothing() throws {
        _ = try SiteBuilder(root: site).build()
        let before = try files(under: site.appendingPathComponent("output"))
        var mutator = try SiteMutator(site: site)
        var random = SeededGenerator(seed: 42)
        var change = ""
        repeat { change = try mutator.mutate(using: &random) } while !change.hasPrefix("redate")
        let plan = try SiteBuilder(root: site).build(options: SiteBuilder.Options(dryRun: true))
        XCTAssertTrue(plan.dryRun)
        XCTAssertEqual(try files(under: site.appendingPathComponent("output")), before, "a plan writes nothing")
        XCTAssertTrue(plan.rendered.contains { $0.reason.contains("moved in") }, "\(change): \(plan.rendered)")
        // The home listing caught up from its cached results; the redated row moved (or stayed in place, updated).
        XCTAssertTrue(plan.deltas.contains { $0.name == "home" && $0.caughtUp && $0.movedRows + $0.updatedRows >= 1 }, "\(plan.deltas)")
        // The store was left as it was: the build after the plan sees the same changes and does the same.
        let build = try SiteBuilder(root: site).build()
        XCTAssertEqual(build.rendered, plan.rendered)
        XCTAssertEqual(build.writtenPaths.sorted(), plan.writtenPaths.sorted())
        XCTAssertEqual(build.deletedPaths, plan.deletedPaths)
        let json = try JSONSerialization.jsonObject(with: build.reportJSON()) as! [String: Any]
        XCTAssertEqual((json["rendered"] as! [[String: String]]).count, build.rendered.count)
        XCTAssertNotNil(json["deltas"] as? [[String: Any]])
    }

    func testAnEmptiedOrAnotherOutputFolderGetsEveryPage() throws {
        let first = try SiteBuilder(root: site).build()
        let output = site.appendingPathComponent("output")
        try FileManager.default.removeItem(at: output)
        let again = try SiteBuilder(root: site).build()
        XCTAssertEqual(again.rendered.count, first.rendered.count)
        XCTAssertTrue(again.rendered.allSatisfy { $0.reason == "the output folder was emptied" })
        try assertSameAsCleanBuild("after output/ was deleted")

        let elsewhere = scratch.work.appendingPathComponent("elsewhere")
        let moved = try SiteBuilder(root: site, outputDirectory: elsewhere).build()
        XCTAssertEqual(moved.rendered.count, first.rendered.count)
        XCTAssertEqual(try files(under: elsewhere), try files(under: output))
        // Back to output/, which the manifest no longer describes: every page again, the same bytes.
        let back = try SiteBuilder(root: site).build()
        XCTAssertEqual(back.rendered.count, first.rendered.count)
        XCTAssertEqual(back.pagesWritten, 0)

        // A record deleted while the other folder was not built (a preview in output/, a deploy elsewhere):
        // its page goes from there too when it is built again, and a file of the user's own stays.
        try "example.org\n".write(to: elsewhere.appendingPathComponent("CNAME"), atomically: true, encoding: .utf8)
        let records = site.appendingPathComponent("content/records/failed-banks.csv")
        let csv = try String(contentsOf: records, encoding: .utf8)
        let capitol = "Capitol Bank,Minneapolis,MN,23917,\"U.S. Bank, N.A.\",2024-02-02,10869,\r\n"
        XCTAssertTrue(csv.contains(capitol))
        try csv.replacingOccurrences(of: capitol, with: "").write(to: records, atomically: true, encoding: .utf8)
        XCTAssertTrue(try SiteBuilder(root: site).build().deletedPaths.contains("banks/23917/index.html"))
        try assertSameAsCleanBuild("after a record was deleted")
        let deployed = try SiteBuilder(root: site, outputDirectory: elsewhere).build()
        XCTAssertTrue(deployed.deletedPaths.contains("banks/23917/index.html"), "\(deployed.deletedPaths)")
        XCTAssertEqual(try files(under: elsewhere).filter { $0.key != "CNAME" }, try files(under: output))
        XCTAssertTrue(FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("CNAME").path))
    }

    /// The store named the output folder by its absolute path, so a site moved whole (a renamed checkout, a
    /// CI cache restored at another path) took its own `output/` for another folder and rendered every page.
    func testASiteMovedWithItsOutputAndStoreBuildsOnlyWhatChanged() throws {
        let first = try SiteBuilder(root: site).build()
        XCTAssertGreaterThan(first.rendered.count, 100)
        let moved = scratch.work.appendingPathComponent("moved")
        try FileManager.default.moveItem(at: site, to: moved)
        let records = moved.appendingPathComponent("content/records/failed-banks.csv")
        let csv = try String(contentsOf: records, encoding: .utf8)
        XCTAssertTrue(csv.contains("Capitol Bank,Minneapolis"))
        try csv.replacingOccurrences(of: "Capitol Bank,Minneapolis", with: "Capitol Bank of Minnesota,Minneapolis").write(to: records, atomically: true, encoding: .utf8)
        let again = try SiteBuilder(root: moved).build()
        XCTAssertTrue(again.succeeded, "\(again.problems)")
        XCTAssertFalse(again.rendered.contains { $0.reason.hasPrefix("another output folder") }, "\(again.rendered.prefix(3))")
        XCTAssertLessThan(again.rendered.count, 20, "\(again.rendered.map(\.path))")
        XCTAssertTrue(again.writtenPaths.contains("banks/23917/index.html"), "\(again.writtenPaths)")
        try FileManager.default.moveItem(at: moved, to: site)
        try assertSameAsCleanBuild("after the site was moved and a record edited")
    }

    /// A build that stops before publishing keeps its changes for the next build and unmarks the output as
    /// half-written, but not the mark of a killed build before it (the next build must render every page),
    /// nor when it built into another folder than the last (the next build into it deleted all it held).
    func testAStoppedBuildKeepsAKilledBuildsMarkAndAnotherFoldersFiles() throws {
        let template = site.appendingPathComponent("Templates/detail.mustache")
        let good = try String(contentsOf: template, encoding: .utf8)
        func stop(_ builder: SiteBuilder) throws {
            try (good + "{{no_such_value}}").write(to: template, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try builder.build())
            try good.write(to: template, atomically: true, encoding: .utf8)
        }
        let first = try SiteBuilder(root: site).build()
        // A killed build's mark, as `beginWritingOutput` leaves it.
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        try store.setState("writing-output", "1")
        try stop(SiteBuilder(root: site))
        let after = try SiteBuilder(root: site).build()
        XCTAssertEqual(after.rendered.count, first.rendered.count)
        XCTAssertTrue(after.rendered.allSatisfy { $0.reason == "the last build did not finish" }, "\(after.rendered.prefix(2))")

        let elsewhere = scratch.work.appendingPathComponent("public")
        XCTAssertTrue(try SiteBuilder(root: site, outputDirectory: elsewhere).build().succeeded)
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        try stop(SiteBuilder(root: site, outputDirectory: elsewhere))
        let deploy = try SiteBuilder(root: site, outputDirectory: elsewhere).build()
        XCTAssertEqual(deploy.deletedPaths, [])
        XCTAssertEqual(try files(under: elsewhere), try files(under: site.appendingPathComponent("output")))
    }

    func testAKilledWritersTemporaryFilesGoWithoutBeingCountedAsDeletedPages() throws {
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        // What a build killed between writing a page's temporary file and renaming it leaves.
        let output = site.appendingPathComponent("output")
        let leftovers = ["banks/.index.html.sitegen-999999-1.tmp", "news/.index.md.sitegen-999999-2.tmp"]
        for path in leftovers { try Data("half a page".utf8).write(to: output.appendingPathComponent(path)) }
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        try store.setState("writing-output", "1")

        let after = try SiteBuilder(root: site).build()
        XCTAssertTrue(after.succeeded)
        XCTAssertEqual(after.deletedPaths, [], "no page went")
        for path in leftovers {
            XCTAssertFalse(FileManager.default.fileExists(atPath: output.appendingPathComponent(path).path), path)
        }
        try assertSameAsCleanBuild("after a killed build's temporary files")
    }

    /// The page a file belongs to: a feed or a Markdown twin goes with its listing page.
    private static func page(_ path: String) -> String {
        path.hasSuffix("index.html") ? path : (path as NSString).deletingLastPathComponent + "/index.html"
    }

    private func assertSameAsCleanBuild(_ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try scratch.assertSameAsCleanBuild(context, file: file, line: line)
    }

    private func files(under root: URL) throws -> [String: Data] {
        try ScratchSite.files(under: root)
    }
}

/// Makes one random change at a time to a copy of the example site, the kinds of change a site sees:
/// records edited, added, deleted, redated (so they move across pages) and moved between sections
/// (emptying some, making new ones); whole files added and removed; a template, a page of the menu and a
/// setting edited. With `events`, the site also has events that each name a bank (a to-one relationship),
/// listed by their bank's closing date and filtered by its state, and events added, moved to another bank
/// (or to one that does not exist) and deleted: the banks' own changes then reorder and filter them.
struct SiteMutator {
    let site: URL
    private var header: [String] = []
    private var rows: [[String]] = []
    private var extraFiles: [String] = []
    private var nextCert = 900_000
    private let records: URL
    /// Each event's id, title and bank's cert; nil without events.
    private var events: [(id: Int, title: String, bank: String)]?
    private var nextEvent = 1

    init(site: URL, events withEvents: Bool = false) throws {
        self.site = site
        records = site.appendingPathComponent("content/records/failed-banks.csv")
        let table = CSVText.parse(try String(contentsOf: records, encoding: .utf8))
        header = table[0]
        rows = Array(table.dropFirst())
        guard withEvents else { return }
        let config = site.appendingPathComponent("sitegen.yml")
        try String(contentsOf: config, encoding: .utf8)
            .replacingOccurrences(of: "\nlistings:\n", with: """

                  events:
                    kind: ndjson
                    sources: content/events/*.ndjson
                    key: id
                    fields: {id: integer, title: text, bank: integer}
                    relationships: {bank: banks}
                    detail:
                      path: /events/{key}/
                      title: title
                      template: event

                listings:
                  events:
                    from: events
                    sort: [-bank.closing_date, id]
                    pageSize: 4
                    path: /events/
                    template: events
                    title: Events
                  caEvents:
                    from: events
                    where: "bank.state = 'CA'"
                    sort: [bank.name, id]
                    pageSize: 3
                    path: /events/ca/
                    template: events
                    title: Events in California

                """)
            .write(to: config, atomically: true, encoding: .utf8)
        try "<h1>{{listing.title}}</h1><ul>{{#items}}<li>{{title}}: {{#bank}}{{name}}, {{state}}, {{closing_date}}{{/bank}}</li>{{/items}}</ul>{{>pagination}}\n"
            .write(to: site.appendingPathComponent("Templates/events.mustache"), atomically: true, encoding: .utf8)
        try "<h1>{{title}}</h1><p>{{#record}}{{#bank}}{{name}} of {{city}}, closed {{closing_date}}{{/bank}}{{/record}}</p>\n"
            .write(to: site.appendingPathComponent("Templates/event.mustache"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: site.appendingPathComponent("content/events"), withIntermediateDirectories: true)
        var initial: [(id: Int, title: String, bank: String)] = []
        // Banks in California and elsewhere, and one that is not there.
        for row in rows.prefix(12) + rows.filter({ $0[column("state")] == "CA" }).prefix(6) {
            initial.append((nextEvent, "Event \(nextEvent)", row[column("cert")]))
            nextEvent += 1
        }
        initial.append((nextEvent, "Event \(nextEvent)", "1"))
        nextEvent += 1
        events = initial
        try saveEvents()
    }

    private func saveEvents() throws {
        let lines = (events ?? []).map { "{\"id\": \($0.id), \"title\": \"\($0.title)\", \"bank\": \($0.bank)}\n" }
        try lines.joined().write(to: site.appendingPathComponent("content/events/events.ndjson"), atomically: true, encoding: .utf8)
    }

    /// Makes one change to the events and says what it was.
    private mutating func mutateEvents(using random: inout SeededGenerator) throws -> String {
        // A bank that exists, now and then one that does not (yet).
        let bank = Int.random(in: 0..<8, using: &random) == 0 || rows.isEmpty
            ? String(Int.random(in: 1...3, using: &random)) : rows.randomElement(using: &random)![column("cert")]
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            events!.insert((nextEvent, "Event \(nextEvent)", bank), at: Int.random(in: 0...events!.count, using: &random))
            nextEvent += 1
            try saveEvents()
            return "add event \(nextEvent - 1) of bank \(bank)"
        case 1 where !events!.isEmpty:
            let index = Int.random(in: 0..<events!.count, using: &random)
            events![index].bank = bank
            try saveEvents()
            return "move event \(events![index].id) to bank \(bank)"
        default:
            guard !events!.isEmpty else { return "nothing" }
            let removed = events!.remove(at: Int.random(in: 0..<events!.count, using: &random))
            try saveEvents()
            return "delete event \(removed.id)"
        }
    }

    private func column(_ name: String) -> Int { header.firstIndex(of: name)! }

    private func saveRecords() throws {
        try CSVText.write([header] + rows).write(to: records, atomically: true, encoding: .utf8)
    }

    private func randomDate(using random: inout SeededGenerator) -> String {
        String(format: "%04d-%02d-%02d", Int.random(in: 2001...2024, using: &random), Int.random(in: 1...12, using: &random),
               Int.random(in: 1...28, using: &random))
    }

    /// Makes one change and says what it was.
    mutating func mutate(using random: inout SeededGenerator) throws -> String {
        let states = Array(Set(rows.map { $0[column("state")] })).sorted()
        if events != nil, Int.random(in: 0..<6, using: &random) == 0 { return try mutateEvents(using: &random) }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<18 where !rows.isEmpty:
            let index = Int.random(in: 0..<rows.count, using: &random)
            rows[index][column("notes")] = "Edited \(Int.random(in: 0..<1_000_000, using: &random)): deposits **assumed**."
            try saveRecords()
            return "edit notes of \(rows[index][column("cert")])"
        case 18..<30 where !rows.isEmpty:
            let index = Int.random(in: 0..<rows.count, using: &random)
            rows[index][column("name")] = "Renamed Bank \(Int.random(in: 0..<1_000, using: &random))"
            try saveRecords()
            return "rename \(rows[index][column("cert")])"
        case 30..<48 where !rows.isEmpty:
            let index = Int.random(in: 0..<rows.count, using: &random)
            rows[index][column("closing_date")] = randomDate(using: &random)
            try saveRecords()
            return "redate \(rows[index][column("cert")]) to \(rows[index][column("closing_date")])"
        case 48..<58 where !rows.isEmpty:
            let index = Int.random(in: 0..<rows.count, using: &random)
            // Sometimes a section of its own, sometimes an existing one.
            let state = Bool.random(using: &random) ? "Z\(Character(UnicodeScalar(UInt8.random(in: 65...70, using: &random))))"
                : states.randomElement(using: &random)!
            rows[index][column("state")] = state
            try saveRecords()
            return "move \(rows[index][column("cert")]) to section \(state)"
        case 58..<63 where states.count > 1:
            // Empty a section: its rows all go to another.
            let from = states.randomElement(using: &random)!, to = states.filter { $0 != from }.randomElement(using: &random)!
            for index in rows.indices where rows[index][column("state")] == from { rows[index][column("state")] = to }
            try saveRecords()
            return "empty section \(from) into \(to)"
        case 63..<73:
            var row = rows.randomElement(using: &random) ?? header.map { _ in "" }
            nextCert += 1
            row[column("cert")] = String(nextCert)
            // Sometimes a twin: another bank of the same name closed the same day, which ties with it on
            // every field the listings sort by.
            let twin = !rows.isEmpty && Int.random(in: 0..<3, using: &random) == 0
            if !twin {
                row[column("name")] = "New Bank \(nextCert)"
                row[column("closing_date")] = randomDate(using: &random)
            }
            rows.insert(row, at: Int.random(in: 0...rows.count, using: &random))
            try saveRecords()
            return twin ? "add \(nextCert), a twin of \(row[column("name")]) closed \(row[column("closing_date")])" : "add \(nextCert)"
        case 73..<81 where rows.count > 1:
            let removed = rows.remove(at: Int.random(in: 0..<rows.count, using: &random))
            try saveRecords()
            return "delete \(removed[column("cert")])"
        case 81..<86:
            // A second file of records, later removed: its rows come and go together.
            if let file = extraFiles.popLast() {
                try FileManager.default.removeItem(at: site.appendingPathComponent(file))
                return "remove file \(file)"
            }
            nextCert += 3
            let file = "content/records/extra-\(nextCert).csv"
            var table = [header]
            for offset in 0..<3 {
                var row = header.map { _ in "" }
                row[column("cert")] = String(nextCert - offset)
                row[column("name")] = "Extra Bank \(nextCert - offset)"
                row[column("state")] = states.randomElement(using: &random) ?? "CA"
                row[column("city")] = "Springfield"
                row[column("closing_date")] = randomDate(using: &random)
                row[column("fund")] = "1"
                table.append(row)
            }
            try CSVText.write(table).write(to: site.appendingPathComponent(file), atomically: true, encoding: .utf8)
            extraFiles.append(file)
            return "add file \(file)"
        case 86..<89:
            // A static file written (new, or other bytes of the same size or another) or deleted; `docs/notes`
            // and `docs/notes/a.txt` take each other's places, a file becoming a folder and back.
            let path = ["CNAME", "img/logo.png", "css/site.css", "docs/notes/a.txt", "docs/notes"].randomElement(using: &random)!
            let url = site.appendingPathComponent("static/" + path)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue, Bool.random(using: &random) {
                try FileManager.default.removeItem(at: url)
                return "static \(path) deleted"
            }
            if isFolder.boolValue { try FileManager.default.removeItem(at: url) }
            let parent = url.deletingLastPathComponent()
            if FileManager.default.fileExists(atPath: parent.path, isDirectory: &isFolder), !isFolder.boolValue {
                try FileManager.default.removeItem(at: parent)
            }
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            try Data((0..<Int.random(in: 1...3, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: url)
            return "static \(path) written"
        case 89..<91:
            let name = ["detail", "list", "pagination", "news"].randomElement(using: &random)!
            let url = site.appendingPathComponent("Templates/\(name).mustache")
            let text = try String(contentsOf: url, encoding: .utf8)
            try (text + "<!-- \(Int.random(in: 0..<1_000, using: &random)) -->\n").write(to: url, atomically: true, encoding: .utf8)
            return "template \(name) edited"
        case 91..<94:
            let url = site.appendingPathComponent("content/pages/about.md")
            let text = try String(contentsOf: url, encoding: .utf8)
            let title = "About Failed Bank Watch \(Int.random(in: 0..<100, using: &random))"
            try text.replacingOccurrences(of: #"(?m)^title: .*$"#, with: "title: \(title)", options: .regularExpression)
                .write(to: url, atomically: true, encoding: .utf8)
            return "menu: about page retitled"
        case 94..<97:
            let url = site.appendingPathComponent("sitegen.yml")
            let text = try String(contentsOf: url, encoding: .utf8)
            let size = [10, 15, 20, 25].randomElement(using: &random)!
            // The states listing's page size: that listing is rebuilt, the others are not.
            let edited = text.replacingOccurrences(of: #"(?s)(  states:.*?pageSize: )\d+"#, with: "$1\(size)", options: .regularExpression)
            try edited.write(to: url, atomically: true, encoding: .utf8)
            return "listing states: pageSize \(size)"
        default:
            let url = site.appendingPathComponent("content/feeds/news.xml")
            let text = try String(contentsOf: url, encoding: .utf8)
            guard let range = text.range(of: #"<item>\s*<title>"#, options: .regularExpression) else { return "nothing" }
            let word = ["Update:", "Report:", "Notice:"].randomElement(using: &random)!
            try text.replacingCharacters(in: range, with: text[range] + word + " ").write(to: url, atomically: true, encoding: .utf8)
            return "news item retitled"
        }
    }
}

/// RFC 4180 text, enough for the example's records (quoted fields, doubled quotes, line breaks inside quotes).
enum CSVText {
    static func parse(_ text: String) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = "", quoted = false
        var characters = Array(text).makeIterator()
        var pending: Character?
        while let character = pending ?? characters.next() {
            pending = nil
            if quoted {
                if character == "\"" {
                    let next = characters.next()
                    if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                row.append(field)
                field = ""
            } else if character == "\n" || character == "\r\n" {
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            } else {
                field.append(character)
            }
        }
        if !field.isEmpty || !row.isEmpty { rows.append(row + [field]) }
        return rows
    }

    static func write(_ rows: [[String]]) -> String {
        rows.map { row in
            row.map { field in
                field.contains(where: { ",\"\n".contains($0) }) ? "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : field
            }.joined(separator: ",")
        }.joined(separator: "\n") + "\n"
    }
}
