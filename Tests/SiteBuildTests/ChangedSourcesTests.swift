import Foundation
import SiteBuild
import SiteStore
import TestSupport
import XCTest

/// A build told which files changed (`SiteBuilder.Options.changedSources`, what a watch knows from inotify)
/// looks only at those and at the sources that failed. Its oracle is a clean build: over random changes to
/// files and folders, each told as the watcher tells it, the output and the store's rows must be what a
/// build from nothing makes.
final class ChangedSourcesTests: XCTestCase {
    private var work: URL!
    private var site: URL { work.appendingPathComponent("site") }
    private var outside: URL { work.appendingPathComponent("outside") }

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-changed-\(UUID().uuidString)")
        for folder in ["site/notes", "site/rows", "site/Templates", "outside"] {
            try FileManager.default.createDirectory(at: work.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        // Patterns of each shape the walk knows: any depth, one level written with `./`, a folder outside the site.
        try write("sitegen.yml", """
            title: Test
            collections:
              notes:
                kind: markdown
                sources: notes/**/*.md
                fields: {day: date}
                detail: {path: "/notes/{key}/", body: body}
              rows:
                kind: csv
                sources: [./rows/*.csv, ../outside/*.csv]
                key: name
                fields: {name: text, amount: integer}
            listings:
              home: {from: notes, sort: [-day, key], path: /}
              table: {from: rows, sort: [name], path: /rows/}
            """)
        try write("Templates/list.mustache", "{{#items}}{{key}} {{title}} {{day}}{{amount}};{{/items}}")
        try write("Templates/detail.mustache", "{{title}}: {{{body}}}")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: work)
    }

    private func write(_ path: String, _ text: String, under base: URL? = nil) throws {
        let url = (base ?? site).appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: false, encoding: .utf8)
    }

    private func build(_ changed: Set<String>?) throws -> BuildSummary {
        try SiteBuilder(root: site).build(options: SiteBuilder.Options(changedSources: changed))
    }

    func testABuildToldWhatChangedLooksOnlyThereAndAtSourcesThatFailed() throws {
        try write("notes/a.md", "---\nday: 2024-01-01\n---\nA\n")
        try write("notes/b.md", "---\nday: 2024-01-02\n---\nB\n")
        try write("rows/r.csv", "name,amount\nx,1\n")
        waitPastTheClocksTick()
        XCTAssertTrue(try build(nil).succeeded)
        try write("notes/a.md", "---\nday: 2024-01-01\n---\nA, edited\n")
        try write("notes/b.md", "---\nday: 2024-01-02\n---\nB, edited\n")
        let told = try build(["notes/a.md"])
        XCTAssertEqual(told.sourcesRead, 1, "only the file named is looked at")
        XCTAssertEqual(told.sourcesUnchanged, 2)
        XCTAssertEqual(try page("notes/a/index.html"), "a: <p>A, edited</p>\n")
        XCTAssertEqual(try page("notes/b/index.html"), "b: <p>B</p>\n", "a change nobody told of is not seen")

        // A file that failed is read again by every build: its fault may lie in another file.
        try write("rows/s.csv", "name,amount\nx,2\n")
        let clash = try build(["rows/s.csv"])
        XCTAssertFalse(clash.succeeded, "two files with the key x")
        try write("rows/r.csv", "name,amount\ny,1\n")
        let fixed = try build(["rows/r.csv"])
        XCTAssertTrue(fixed.succeeded, "\(fixed.problems)")
        XCTAssertEqual(try page("rows/index.html"), "x x 2;y y 1;")
    }

    /// A file written again, at the same size, in the clock tick in which a build read it keeps the change
    /// time that build recorded (ext4 before Linux 6.13 ticks once a jiffy, FAT every two seconds). The
    /// store is set as such a tick leaves it: the recorded change time is the file's new one.
    func testAFileWrittenAgainInTheTickItsBuildReadItIsReadAgain() throws {
        try write("notes/a.md", "---\nday: 2024-01-01\n---\nA, one\n")
        try write("notes/b.md", "---\nday: 2024-01-02\n---\nB\n")
        XCTAssertTrue(try build(nil).succeeded)
        try write("notes/a.md", "---\nday: 2024-01-01\n---\nA, two\n")
        try recordChangeTimeAsLoaded("notes/a.md", loadedAfter: 0.01)
        let found = try build(nil)
        XCTAssertEqual(try page("notes/a/index.html"), "a: <p>A, two</p>\n", "the edit in the build's tick is seen")
        XCTAssertEqual(found.rowsUpdated, 1)

        // What a watch is told: the file, whose status is what the store recorded.
        try write("notes/a.md", "---\nday: 2024-01-01\n---\nA, six\n")
        try recordChangeTimeAsLoaded("notes/a.md", loadedAfter: 0.01)
        XCTAssertTrue(try build(["notes/a.md"]).succeeded)
        XCTAssertEqual(try page("notes/a/index.html"), "a: <p>A, six</p>\n")

        // A file whose change time is well before its load is vouched for by it, and not read.
        try recordChangeTimeAsLoaded("notes/a.md", loadedAfter: 60)
        try recordChangeTimeAsLoaded("notes/b.md", loadedAfter: 60)
        let quiet = try build(nil)
        XCTAssertEqual(quiet.sourcesRead, 0, "files changed long before their loads are not read again")
        XCTAssertEqual(quiet.sourcesUnchanged, 2)
        try assertSameAsCleanBuild("an edit in the tick of its build's read")
    }

    /// Makes the store's record of `path` say it was loaded `seconds` after its file's present change time,
    /// with that change time: as if the file's last write had fallen in the tick of that load.
    private func recordChangeTimeAsLoaded(_ path: String, loadedAfter seconds: Double) throws {
        var status = stat()
        XCTAssertEqual(stat(site.appendingPathComponent(path).path, &status), 0)
        let changed = Double(status.st_ctim.tv_sec) + Double(status.st_ctim.tv_nsec) / 1e9
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        try store.database.execute("UPDATE sitegen_sources SET mtime = ?, loaded_at = ? WHERE path = ?",
                                   [.real(changed), .real(changed + seconds), .text(path)])
        XCTAssertEqual(store.database.changesCount, 1)
    }

    func testAFileAPatternNamesOutrightIsLookedAtEvenWhenNoChangeNamesIt() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "sources: notes/**/*.md", with: "sources: [notes/**/*.md, notes/.special.md, extra/sub/one.md]")
        try write("sitegen.yml", config)
        try write("notes/.special.md", "---\nday: 2024-01-01\n---\nHidden\n")
        try write("extra/sub/one.md", "---\nday: 2024-01-02\n---\nOne\n")
        XCTAssertTrue(try build(nil).succeeded)
        XCTAssertEqual(try page("notes/special/index.html"), ".special: <p>Hidden</p>\n")
        // A watch ignores hidden names: the edit is found all the same.
        try write("notes/.special.md", "---\nday: 2024-01-01\n---\nHidden, edited\n")
        XCTAssertTrue(try build([]).succeeded)
        XCTAssertEqual(try page("notes/special/index.html"), ".special: <p>Hidden, edited</p>\n")
        // The file's folder moved away and made again: told only of the folder.
        try FileManager.default.moveItem(at: site.appendingPathComponent("extra/sub"), to: work.appendingPathComponent("gone"))
        try FileManager.default.createDirectory(at: site.appendingPathComponent("extra/sub"), withIntermediateDirectories: true)
        XCTAssertEqual(try build(["extra/sub"]).rowsDeleted, 1)
        try assertSameAsCleanBuild("a named file's folder replaced")
    }

    func testAFolderMadeMovedOrDeletedIsLoadedAsACleanBuildLoadsIt() throws {
        try write("notes/2024/a.md", "---\nday: 2024-01-01\n---\nA\n")
        try write("notes/2024/deep/b.md", "---\nday: 2024-01-02\n---\nB\n")
        XCTAssertTrue(try build(nil).succeeded)
        // Deleted: the watcher says only the folder.
        try FileManager.default.removeItem(at: site.appendingPathComponent("notes/2024/deep"))
        XCTAssertEqual(try build(["notes/2024/deep"]).rowsDeleted, 1)
        try assertSameAsCleanBuild("deep folder deleted")
        // Moved in from outside the watched folders: the folder and the files the watcher finds in it.
        try write("c.md", "---\nday: 2024-01-03\n---\nC\n", under: outside.appendingPathComponent("moving"))
        try FileManager.default.moveItem(at: outside.appendingPathComponent("moving"), to: site.appendingPathComponent("notes/2025"))
        XCTAssertEqual(try build(["notes/2025", "notes/2025/c.md"]).rowsInserted, 1)
        try assertSameAsCleanBuild("folder moved in")
        // Renamed: gone from one place and made in another, told as two folders.
        try FileManager.default.moveItem(at: site.appendingPathComponent("notes/2024"), to: site.appendingPathComponent("notes/old"))
        let renamed = try build(["notes/2024", "notes/old"])
        XCTAssertTrue(renamed.succeeded, "\(renamed.problems)")
        try assertSameAsCleanBuild("folder renamed")
        // The folder a pattern starts in, deleted: every source is looked at, and its records kept with an error.
        try FileManager.default.removeItem(at: site.appendingPathComponent("notes"))
        let missing = try build(["notes"])
        XCTAssertFalse(missing.succeeded)
        XCTAssertEqual(missing.rowsDeleted, 0, "\(missing.problems)")
    }

    func testBuildsToldWhatChangedEqualBuildsThatLookAtEverySourceOverRandomChanges() throws {
        let seed = ProcessInfo.processInfo.environment["SITEGEN_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...999_999)
        var random = SeededGenerator(seed: seed)
        // A twin of the site gets the same changes and builds looking at every source: a source that fails
        // keeps its last good rows, which a clean build never had, so the twin is the oracle while one does.
        let twin = work.appendingPathComponent("twin")
        try FileManager.default.createDirectory(at: twin.appendingPathComponent("outside"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: site, to: twin.appendingPathComponent("site"))
        let twinSite = twin.appendingPathComponent("site")
        XCTAssertTrue(try build(nil).succeeded)
        XCTAssertTrue(try SiteBuilder(root: twinSite).build().succeeded)
        var before = try sources()
        var cleanChecks = 0
        // 80 steps, or more while fewer than 11 came without a failing source (a broken file may stay for
        // dozens: seed 607861 had 9 such steps in its 80).
        for step in 1...240 {
            if step > 80 && cleanChecks > 10 { break }
            let change = try mutate(using: &random, twin: twin)
            let now = try sources()
            // What the watcher would say: every file whose bytes or time changed, made or deleted; a file in a
            // folder deleted is told by that folder alone.
            var told = Set<String>()
            for path in Set(now.keys).union(before.keys) where !path.hasSuffix("/") && now[path] != before[path] {
                var folder = path, deleted: String?
                while let slash = folder.lastIndex(of: "/"), !path.hasPrefix("/") {
                    folder = String(folder[..<slash])
                    if before[folder + "/"] != nil && now[folder + "/"] == nil { deleted = folder }
                }
                told.insert(deleted ?? path)
            }
            before = now
            let context = "seed \(seed) (SITEGEN_SEED=\(seed) replays it), step \(step): \(change), told \(told.sorted())"
            let summary = try build(told)
            let full = try SiteBuilder(root: twinSite).build()
            XCTAssertEqual(try outputFiles(site), try outputFiles(twinSite), "\(context): output")
            XCTAssertEqual(try records(site), try records(twinSite), "\(context): records")
            XCTAssertEqual(try statuses(site), try statuses(twinSite), "\(context): sources")
            // A file changed just before a build is read again by the next one that looks at it (its change time
            // is too close to its load to vouch for it), and found with the same bytes: unchanged all the same.
            XCTAssertEqual([summary.rowsInserted, summary.rowsUpdated, summary.rowsDeleted, summary.sourcesUnchanged + summary.sourcesSameBytes],
                           [full.rowsInserted, full.rowsUpdated, full.rowsDeleted, full.sourcesUnchanged + full.sourcesSameBytes],
                           "\(context): counts")
            // With every source loaded, a build from nothing is the oracle too.
            if full.problems.isEmpty {
                try assertSameAsCleanBuild(context)
                cleanChecks += 1
            }
            if testRun?.failureCount ?? 0 > 0 { break }
        }
        XCTAssertGreaterThan(cleanChecks, 10, "seed \(seed): too few steps without a failing source to compare with clean builds")
    }

    /// One random change, made the same in the site and in `twin`'s: to the notes (any depth, in folders made
    /// and removed) or the rows (in the site and outside it); some files are broken, some repeat another's key.
    private func mutate(using random: inout SeededGenerator, twin: URL) throws -> String {
        let sites = [site, twin.appendingPathComponent("site")], outsides = [outside, twin.appendingPathComponent("outside")]
        let folders = ["notes", "notes/x", "notes/x/y", "notes/z", "notes/.hidden"]
        let day = "2024-0\(Int.random(in: 1...9, using: &random))-1\(Int.random(in: 0...9, using: &random))"
        switch Int.random(in: 0..<7, using: &random) {
        case 0, 1:
            // Names (the records' keys) rarely repeat another folder's.
            let folder = folders.randomElement(using: &random)!
            let shared = Int.random(in: 0..<6, using: &random) == 0
            let path = "\(folder)/\(shared ? "" : folder.split(separator: "/").last!)n\(Int.random(in: 0..<4, using: &random)).md"
            let broken = Int.random(in: 0..<8, using: &random) == 0
            let text = broken ? "---\nday: [\n---\nbroken\n" : "---\nday: \(day)\n---\nBody \(Int.random(in: 0..<1_000, using: &random))\n"
            for site in sites { try write(path, text, under: site) }
            return "wrote \(path)\(broken ? " (broken)" : "")"
        case 2:
            let folder = ["notes/x", "notes/x/y", "notes/z"].randomElement(using: &random)!
            for site in sites { try? FileManager.default.removeItem(at: site.appendingPathComponent(folder)) }
            return "deleted folder \(folder)"
        case 3:
            let notes = try existing(under: site.appendingPathComponent("notes"), prefix: "notes")
            guard let path = notes.randomElement(using: &random) else { return "nothing to delete" }
            for site in sites { try FileManager.default.removeItem(at: site.appendingPathComponent(path)) }
            return "deleted \(path)"
        default:
            let inside = Bool.random(using: &random)
            let bases = inside ? sites.map { $0.appendingPathComponent("rows") } : outsides
            let name = "r\(Int.random(in: 0..<4, using: &random)).csv"
            if Int.random(in: 0..<5, using: &random) == 0 {
                for base in bases { try? FileManager.default.removeItem(at: base.appendingPathComponent(name)) }
                return "deleted \(inside ? "rows" : "outside")/\(name)"
            }
            // Keys rarely repeat another file's.
            let shared = Int.random(in: 0..<6, using: &random) == 0
            let rows = (0..<4).filter { _ in Bool.random(using: &random) }.map { number in
                "\(shared ? "" : (inside ? "in-" : "out-") + name)k\(number),\(Int.random(in: 0..<100, using: &random))"
            }
            for base in bases { try write(name, "name,amount\n" + rows.joined(separator: "\n") + "\n", under: base) }
            return "wrote \(inside ? "rows" : "outside")/\(name): \(rows)"
        }
    }

    /// Every file and folder the sources may be in, by path as the watcher says it (relative to the site,
    /// absolute outside it; folders end in `/`), with the file's bytes and modification time.
    private func sources() throws -> [String: String] {
        var found: [String: String] = [:]
        for (root, prefix) in [(site.appendingPathComponent("notes"), "notes"), (site.appendingPathComponent("rows"), "rows"),
                               (outside, outside.standardizedFileURL.path)] {
            for path in try existing(under: root, prefix: prefix, folders: true) {
                let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : site.appendingPathComponent(path)
                if path.hasSuffix("/") {
                    found[path] = ""
                } else {
                    let modified = try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
                    found[path] = (try String(contentsOf: url, encoding: .utf8)) + "\(modified?.timeIntervalSince1970 ?? 0)"
                }
            }
        }
        return found
    }

    /// The files under `root` (and its folders, ending in `/`, when `folders`), as `prefix/…`.
    private func existing(under root: URL, prefix: String, folders: Bool = false) throws -> [String] {
        var found: [String] = []
        guard let walk = FileManager.default.enumerator(atPath: root.path) else { return [] }
        while let relative = walk.nextObject() as? String {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root.appendingPathComponent(relative).path, isDirectory: &isFolder)
            if isFolder.boolValue {
                if folders { found.append(prefix + "/" + relative + "/") }
            } else {
                found.append(prefix + "/" + relative)
            }
        }
        return found.sorted()
    }

    private func page(_ path: String) throws -> String {
        try String(contentsOf: site.appendingPathComponent("output/" + path), encoding: .utf8)
    }

    /// The output and the store's records equal those of a build from nothing of a copy of the site.
    private func assertSameAsCleanBuild(_ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let clean = work.appendingPathComponent("clean")
        try? FileManager.default.removeItem(at: clean)
        try FileManager.default.createDirectory(at: clean, withIntermediateDirectories: true)
        for item in ["sitegen.yml", "notes", "rows", "extra", "Templates"] where FileManager.default.fileExists(atPath: site.appendingPathComponent(item).path) {
            try FileManager.default.copyItem(at: site.appendingPathComponent(item), to: clean.appendingPathComponent(item))
        }
        let cleanSummary = try SiteBuilder(root: clean).build()
        XCTAssertEqual(try outputFiles(clean), try outputFiles(site), "\(context): output", file: file, line: line)
        XCTAssertEqual(try records(clean), try records(site), "\(context): records", file: file, line: line)
        XCTAssertEqual(try statuses(clean), try statuses(site), "\(context): sources (clean build: \(cleanSummary.problems))", file: file, line: line)
    }

    private func outputFiles(_ root: URL) throws -> [String: String] {
        var found: [String: String] = [:]
        for path in try existing(under: root.appendingPathComponent("output"), prefix: "") {
            found[path] = try String(contentsOf: root.appendingPathComponent("output" + path), encoding: .utf8)
        }
        return found
    }

    private func records(_ root: URL) throws -> [String] {
        let store = try SiteStore(path: root.appendingPathComponent(".sitegen/store.sqlite").path)
        return try ["notes", "rows"].flatMap { table in
            try store.database.fetchAll("SELECT * FROM \(table) ORDER BY _source, _key").map { row in
                "\(table) \(row["_key"]?.stringValue ?? "") \(row["_source"]?.stringValue ?? "") \(row["body"]?.stringValue ?? "") \(row["amount"]?.int64Value ?? -1)"
            }
        }
    }

    private func statuses(_ root: URL) throws -> [String] {
        try SiteStore(path: root.appendingPathComponent(".sitegen/store.sqlite").path).sourceStatuses().map {
            "\($0.collection) \($0.path) \($0.status) \($0.rows) \($0.message ?? "")"
        }
    }
}
