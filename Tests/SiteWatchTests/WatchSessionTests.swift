import Foundation
import SiteBuild
import SiteStore
import SiteWatch
import XCTest

/// A watch's builds after its first look only at what the watcher said changed since the last build that
/// loaded; these check when it may trust that list and when it must look at every source.
final class WatchSessionTests: XCTestCase {
    private var site: URL!
    private var session: WatchSession!

    override func setUpWithError() throws {
        site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-session-\(UUID().uuidString)")
        for folder in ["content", "Templates"] {
            try FileManager.default.createDirectory(at: site.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try write("sitegen.yml", """
            title: T
            collections:
              notes:
                kind: markdown
                sources: content/*.md
            listings:
              home: {from: notes, sort: [key], path: /}
            """)
        try write("Templates/list.mustache", "{{#items}}{{key}}={{title}};{{/items}}")
        for name in ["a", "b", "c"] { try write("content/\(name).md", "---\ntitle: \(name.uppercased())\n---\n") }
        session = try WatchSession(builder: SiteBuilder(root: site))
    }

    override func tearDownWithError() throws {
        session.stop()
        try FileManager.default.removeItem(at: site)
    }

    private func write(_ path: String, _ text: String) throws {
        try text.write(to: site.appendingPathComponent(path), atomically: false, encoding: .utf8)
    }

    private var home: String {
        get throws { try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8) }
    }

    /// A save in a static folder, or making one, must build.
    func testTheStaticFoldersAreWatchedThereOrNot() throws {
        XCTAssertEqual(WatchSession.sourceFolders(of: site).folders, ["static"], "a static/ made later is seen made")
        try write("sitegen.yml", "static: [assets/site, static]\n" + String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8))
        XCTAssertEqual(WatchSession.sourceFolders(of: site).folders, ["assets", "static"])
    }

    /// A build the machine failed (here a store it may not write) told the user to fix a file and save again,
    /// and nothing happened once the machine was fixed: the watch tries again by itself.
    func testABuildTheMachineFailedIsTriedAgainWithoutASave() throws {
        XCTAssertTrue(session.buildOnce().succeeded)
        let store = site.appendingPathComponent(".sitegen/store.sqlite")
        func chattr(_ flag: String) throws -> Bool {
            let process = try Process.run(URL(fileURLWithPath: "/usr/bin/chattr"), arguments: [flag, store.path])
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"), try chattr("+i") else {
            throw XCTSkip("needs root and a file system that keeps a file immutable")
        }
        var locked = true
        defer { if locked { _ = try? chattr("-i") } }
        final class Reports: @unchecked Sendable {
            let lock = NSLock()
            var list: [RebuildReport] = []
            var all: [RebuildReport] { lock.withLock { list } }
        }
        let reports = Reports()
        let session = self.session!
        let watching = Thread {
            try? session.watch { report in reports.lock.withLock { reports.list.append(report) } }
        }
        watching.start()
        Thread.sleep(forTimeInterval: 0.3)
        try write("content/a.md", "---\ntitle: A2\n---\n")
        func waitFor(_ seconds: Double, _ condition: ([RebuildReport]) -> Bool) -> Bool {
            let end = Date(timeIntervalSinceNow: seconds)
            while Date() < end {
                if condition(reports.all) { return true }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return false
        }
        XCTAssertTrue(waitFor(5) { !$0.isEmpty }, "the save builds")
        let failed = try XCTUnwrap(reports.all.first)
        XCTAssertFalse(failed.succeeded)
        XCTAssertTrue(failed.failedOutsideTheSite, "\(failed.errors)")
        XCTAssertTrue(failed.line.hasSuffix("not for a file of the site; trying again every 5 s"), failed.line)
        XCTAssertTrue(try chattr("-i"))
        locked = false
        XCTAssertTrue(waitFor(WatchSession.retryInterval + 5) { $0.last?.succeeded == true }, "\(reports.all.map(\.line))")
        XCTAssertEqual(try home, "a=A2;b=B;c=C;", "built with no save after the store could be written")
    }

    /// A build that checks the output folder makes again the pages the last build left that are not there,
    /// and only those; one that does not check trusts the store (`--full` is then the way).
    func testACheckOfTheOutputMakesAgainOnlyThePagesNotThere() throws {
        try write("sitegen.yml", String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
            .replacingOccurrences(of: "sources: content/*.md", with: "sources: content/*.md\n    detail: {path: \"/n/{key}/\"}"))
        try write("Templates/detail.mustache", "{{title}}")
        let builder = SiteBuilder(root: site)
        XCTAssertTrue(try builder.build().succeeded)
        for page in ["output/index.html", "output/n/b/index.html"] { try FileManager.default.removeItem(at: site.appendingPathComponent(page)) }
        XCTAssertEqual(try builder.build().rendered.count, 0, "unchecked, the store says the pages are there")
        let checked = try builder.build(options: SiteBuilder.Options(verifiesOutput: true))
        XCTAssertEqual(checked.rendered.map(\.path).sorted(), ["index.html", "n/b/index.html"])
        XCTAssertEqual(try home, "a=A;b=B;c=C;")
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/n/b/index.html"), encoding: .utf8), "B")
        XCTAssertEqual(try builder.build(options: SiteBuilder.Options(verifiesOutput: true)).rendered.count, 0)
    }

    /// `git clean -fdx` under a watch deletes the store, and the output's files, some of them after the
    /// build the store's deletion started found them in place: no event tells the watch of those (it does
    /// not watch its output), so once the site is quiet it looks for every page and makes the missing again.
    func testPagesDeletedAfterTheBuildTheStoresDeletionStartedAreMadeAgain() throws {
        XCTAssertTrue(session.buildOnce().succeeded)
        let reports = WatchReports()
        let session = self.session!
        let watching = Thread { try? session.watch { report in reports.append(report) } }
        watching.start()
        Thread.sleep(forTimeInterval: 0.3)
        try FileManager.default.removeItem(at: site.appendingPathComponent(".sitegen"))
        XCTAssertTrue(reports.waitFor(5) { !$0.isEmpty }, "the store's deletion builds")
        XCTAssertTrue(reports.all.first?.line.hasPrefix(".sitegen changed: built in") == true, "\(reports.all.map(\.line))")
        try FileManager.default.removeItem(at: site.appendingPathComponent("output/index.html"))
        XCTAssertTrue(reports.waitFor(WatchSession.settlingTime + 5) { $0.count >= 2 }, "\(reports.all.map(\.line))")
        XCTAssertEqual(try home, "a=A;b=B;c=C;")
        let check = try XCTUnwrap(reports.all.dropFirst().first)
        XCTAssertTrue(check.line.hasPrefix("pages missing from the output folder: built in"), check.line)
        XCTAssertEqual(check.summary?.rendered.map(\.path), ["index.html"])
        // With every page in place, the next check (after a folder's deletion) says nothing.
        try FileManager.default.removeItem(at: site.appendingPathComponent(".sitegen"))
        XCTAssertTrue(reports.waitFor(5) { $0.count >= 3 })
        Thread.sleep(forTimeInterval: WatchSession.settlingTime + 1)
        XCTAssertEqual(reports.all.count, 3, "\(reports.all.map(\.line))")
    }

    /// Ctrl-C during the first build: the build finishes, the session says it is stopping (so that `watch`
    /// does not announce what it watches), and no further build runs.
    func testAStopDuringTheFirstBuildEndsTheWatchAfterIt() throws {
        var reports: [RebuildReport] = []
        var stoppingWhenReported = false
        try session.run { report in
            if report.isFirst { session.stop() }
            stoppingWhenReported = session.isStopping
            reports.append(report)
        }
        XCTAssertTrue(stoppingWhenReported)
        XCTAssertEqual(reports.count, 1)
        XCTAssertTrue(reports.first?.succeeded == true)

        // A page deleted by hand between two watches: the next watch's first build makes it again.
        try FileManager.default.removeItem(at: site.appendingPathComponent("output/index.html"))
        let next = try WatchSession(builder: SiteBuilder(root: site))
        var again: [RebuildReport] = []
        try next.run { report in
            next.stop()
            again.append(report)
        }
        XCTAssertEqual(again.first?.summary?.rendered.map(\.path), ["index.html"])
        XCTAssertEqual(try home, "a=A;b=B;c=C;")
    }

    /// A watch's builds leave the listings' cached results to be saved once the site is quiet a moment, so
    /// that a save's build does not wait for them; a `sitegen build` after the watch then catches up from them.
    func testTheCachesAreSavedWhenTheWatchIsQuiet() throws {
        XCTAssertTrue(session.buildOnce().succeeded)
        let reports = WatchReports()
        let session = self.session!
        let watching = Thread { try? session.watch { reports.append($0) } }
        watching.start()
        Thread.sleep(forTimeInterval: 0.5)
        let storePath = site.appendingPathComponent(".sitegen/store.sqlite").path
        func cacheGenerations() throws -> (store: Int64, caches: Set<Int64>) {
            let store = try SiteStore(path: storePath)
            let caches = try store.database.fetchAll("SELECT generation FROM results_controller_cache").compactMap { $0["generation"]?.int64Value }
            return (store.database.generation, Set(caches))
        }
        let before = try cacheGenerations()
        XCTAssertEqual(before.caches, [before.store], "saved after the first build")

        try write("content/a.md", "---\ntitle: A2\n---\n")
        XCTAssertTrue(reports.waitFor(5) { $0.last?.succeeded == true }, "\(reports.all.map(\.line))")
        var after = try cacheGenerations()
        let deadline = Date(timeIntervalSinceNow: 5)
        while after.caches != [after.store], Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            after = try cacheGenerations()
        }
        XCTAssertGreaterThan(after.store, before.store)
        XCTAssertEqual(after.caches, [after.store], "the caches are saved once the watch is quiet")
        session.stop()

        let process = try SiteBuilder(root: site).build()
        XCTAssertTrue(process.deltas.allSatisfy(\.caughtUp), "\(process.deltas)")
        XCTAssertEqual(try home, "a=A2;b=B;c=C;")
    }

    func testABuildLooksOnlyWhereTheWatcherSawChangesSinceTheLastBuildThatLoaded() throws {
        XCTAssertTrue(session.buildOnce().succeeded, "the first build looks at every source")
        XCTAssertEqual(try home, "a=A;b=B;c=C;")

        // Told of a.md only: b.md's edit, which no event reported, is not looked at.
        try write("content/a.md", "---\ntitle: A2\n---\n")
        try write("content/b.md", "---\ntitle: B2\n---\n")
        let told = session.buildOnce(changedPaths: ["content/a.md"])
        XCTAssertEqual(told.summary?.sourcesRead, 1)
        XCTAssertEqual(try home, "a=A2;b=B;c=C;")

        // A build that stops before loading (a template that does not parse) leaves its change for the next.
        try write("Templates/list.mustache", "{{#items}")
        try write("content/c.md", "---\ntitle: C2\n---\n")
        let broken = session.buildOnce(changedPaths: ["Templates/list.mustache", "content/c.md"])
        XCTAssertFalse(broken.loaded)
        XCTAssertNil(broken.summary)
        try write("Templates/list.mustache", "{{#items}}{{key}}={{title}};{{/items}}")
        let fixed = session.buildOnce(changedPaths: ["Templates/list.mustache"])
        XCTAssertTrue(fixed.succeeded, "\(fixed.errors)")
        XCTAssertEqual(try home, "a=A2;b=B;c=C2;", "c.md's change, told to the build that stopped, is loaded")

        // sitegen.yml changed: a pattern may now match files no event named, so every source is looked at.
        try write("sitegen.yml", try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8) + "\n")
        let config = session.buildOnce(changedPaths: ["sitegen.yml"])
        XCTAssertTrue(config.succeeded, "\(config.errors)")
        XCTAssertEqual(try home, "a=A2;b=B2;c=C2;")

        // Events lost: the same.
        try write("content/a.md", "---\ntitle: A3\n---\n")
        XCTAssertTrue(session.buildOnce(changedPaths: [FileWatcher.eventsLost]).succeeded)
        XCTAssertEqual(try home, "a=A3;b=B2;c=C2;")
    }
}

/// The reports of a watch running on another thread.
private final class WatchReports: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [RebuildReport] = []
    var all: [RebuildReport] { lock.withLock { list } }

    func append(_ report: RebuildReport) { lock.withLock { list.append(report) } }

    /// Waits up to `seconds` for `condition` to hold of the reports; whether it did.
    func waitFor(_ seconds: Double, _ condition: ([RebuildReport]) -> Bool) -> Bool {
        let end = Date(timeIntervalSinceNow: seconds)
        while Date() < end {
            if condition(all) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }
}
