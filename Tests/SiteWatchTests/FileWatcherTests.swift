import Foundation
import SiteWatch
import XCTest

/// A watcher on its own: what counts as a change, and how changes are batched. Each test runs against every
/// watcher (`forEachWatcher`): the system's (inotify on Linux), then the polling one other systems use.
final class FileWatcherTests: XCTestCase {
    private var root: URL!
    private var watcher: (any ChangeWatcher)!
    /// The watcher the test is running against now.
    private var kind = FileWatcher.Kind.native

    /// Runs `body` once per watcher kind, each on a site of its own; a failure says which kind it was with.
    /// (One test class per kind would not do: Linux's XCTest does not run the tests a class inherits.)
    private func forEachWatcher(_ body: () throws -> Void) throws {
        for kind in FileWatcher.Kind.allCases {
            self.kind = kind
            let failures = testRun?.failureCount ?? 0
            try makeSite()
            defer {
                watcher.stop()
                try? FileManager.default.removeItem(at: root)
            }
            try body()
            if (testRun?.failureCount ?? 0) > failures { XCTFail("the failures above are the \(kind) watcher's") }
        }
    }

    private func makeSite() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-watcher-\(UUID().uuidString)")
        for folder in ["content/records", "Templates", "output"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try "title: T\n".write(to: root.appendingPathComponent("sitegen.yml"), atomically: false, encoding: .utf8)
        watcher = try FileWatcher.make(FileWatcher.Configuration(
            root: root, folders: ["content", "Templates"], files: ["sitegen.yml"],
            ignoredFolders: [root.appendingPathComponent("output"), root.appendingPathComponent("content/generated")],
            quietPeriod: 0.1, maximumDelay: 0.5), kind: kind)
    }

    private func write(_ text: String, to path: String) throws {
        try text.write(to: root.appendingPathComponent(path), atomically: false, encoding: .utf8)
    }

    /// The next batch, or nil when none comes within `timeout` seconds (the watcher is then stopped for good).
    private func nextBatch(within timeout: Double = 3) -> [String]? {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var batch: [String]?
        let watcher = self.watcher!
        Thread.detachNewThread {
            batch = try? watcher.nextBatch()
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            watcher.stop()
            done.wait()
        }
        return batch
    }

    func testWritesInAFolderComeAsOneBatchOfRelativePaths() throws {
        try forEachWatcher {
            try write("a", to: "content/records/a.csv")
            try write("b", to: "content/records/b.csv")
            try write("t", to: "Templates/list.mustache")
            XCTAssertEqual(nextBatch(), ["Templates/list.mustache", "content/records/a.csv", "content/records/b.csv"])
        }
    }

    func testAnEditorsSaveByRenameIsAChangeOfTheRealFileOnly() throws {
        try forEachWatcher {
            try write("old", to: "content/records/a.csv")
            XCTAssertEqual(nextBatch(), ["content/records/a.csv"])
            try write("new", to: "content/records/.a.csv.tmp")
            XCTAssertEqual(rename(root.appendingPathComponent("content/records/.a.csv.tmp").path,
                                  root.appendingPathComponent("content/records/a.csv").path), 0)
            XCTAssertEqual(nextBatch(), ["content/records/a.csv"])
            // sitegen.yml is watched through its folder, so a rename over it is seen too, and seen again next time.
            for round in 1...2 {
                try write("title: \(round)\n", to: "sitegen.yml.new")
                XCTAssertEqual(rename(root.appendingPathComponent("sitegen.yml.new").path, root.appendingPathComponent("sitegen.yml").path), 0)
                XCTAssertEqual(nextBatch(), ["sitegen.yml"], "round \(round)")
            }
        }
    }

    func testFoldersAndFilesAddedToTheWatchAndPatternsAreWatched() throws {
        try forEachWatcher {
            for folder in ["data/records", "archive-2024", "archive-2025"] {
                try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
            }
            try write("before", to: "data/records/a.csv")
            try write("before", to: "top.csv")
            XCTAssertNil(nextBatch(within: 0.5), "not watched yet")
            watcher = try FileWatcher.make(watcher.configuration, kind: kind)
            try watcher.watch(folders: ["data", "archive-*", "content"], files: ["*.csv"])
            XCTAssertEqual(watcher.configuration.folders, ["content", "Templates", "data", "archive-*"])
            XCTAssertEqual(watcher.configuration.files, ["sitegen.yml", "*.csv"])

            try write("after", to: "data/records/a.csv")
            try write("after", to: "archive-2025/b.csv")
            try write("after", to: "top.csv")
            try write("hidden", to: ".top.csv")
            try write("other", to: "top.txt")
            XCTAssertEqual(nextBatch(), ["archive-2025/b.csv", "data/records/a.csv", "top.csv"])

            // A folder that matches a pattern once it is made is watched with what it holds.
            let later = root.appendingPathComponent("archive-2026")
            try FileManager.default.createDirectory(at: later, withIntermediateDirectories: true)
            try write("c", to: "archive-2026/c.csv")
            let batch = nextBatch() ?? []
            XCTAssertTrue(batch.contains("archive-2026/c.csv"), "\(batch)")
            try write("d", to: "archive-2026/c.csv")
            XCTAssertEqual(nextBatch(), ["archive-2026/c.csv"])
            // Every folder of the site, but for the ignored ones (the output); an editor's file at the top is no change.
            try watcher.watch(folders: ["*"], files: ["*"])
            try write("e", to: "output/index.html")
            try write("e", to: "content/generated.csv")
            try write("x", to: "4913")
            try write("f", to: "top.md")
            XCTAssertEqual(nextBatch(), ["content/generated.csv", "top.md"])
        }
    }

    func testFoldersOutsideTheRootAreWatchedOnceMadeAndFoldersDroppedAreNot() throws {
        try forEachWatcher {
            let outside = root.deletingLastPathComponent().appendingPathComponent(root.lastPathComponent + "-outside")
            addTeardownBlock { try? FileManager.default.removeItem(at: outside) }
            try watcher.watch(folders: [outside.path, "data"], files: [])
            try FileManager.default.createDirectory(at: outside.appendingPathComponent("feeds"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: root.appendingPathComponent("data"), withIntermediateDirectories: true)
            // The root's watch sees data/ made; nothing watches the outside folder's parent.
            XCTAssertEqual(nextBatch(), ["data"])
            try watcher.watch(folders: [outside.path, "data"], files: [])
            try "a".write(to: outside.appendingPathComponent("feeds/a.xml"), atomically: false, encoding: .utf8)
            try write("b", to: "data/b.csv")
            XCTAssertEqual(nextBatch(), [outside.path + "/feeds/a.xml", "data/b.csv"])

            watcher.unwatch(folders: [outside.path, "data"], files: [])
            XCTAssertEqual(watcher.configuration.folders, ["content", "Templates"])
            try "c".write(to: outside.appendingPathComponent("feeds/c.xml"), atomically: false, encoding: .utf8)
            try write("d", to: "data/d.csv")
            try write("e", to: "content/records/e.csv")
            XCTAssertEqual(nextBatch(), ["content/records/e.csv"])
            // A folder still named by a pattern stays watched when its own name is dropped.
            try watcher.watch(folders: ["data", "d*"], files: [])
            watcher.unwatch(folders: ["data"], files: [])
            try write("f", to: "data/f.csv")
            XCTAssertEqual(nextBatch(), ["data/f.csv"])
        }
    }

    func testFoldersCreatedLaterAreWatchedWithWhatTheyAlreadyHold() throws {
        try forEachWatcher {
            let folder = root.appendingPathComponent("content/pages/guides")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try write("x", to: "content/pages/guides/x.md")
            XCTAssertEqual(nextBatch(), ["content/pages", "content/pages/guides", "content/pages/guides/x.md"])
            try write("y", to: "content/pages/guides/y.md")
            XCTAssertEqual(nextBatch(), ["content/pages/guides/y.md"])
            // A folder moved in from outside the site, and one deleted.
            let outside = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-outside-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try "z".write(to: outside.appendingPathComponent("z.md"), atomically: false, encoding: .utf8)
            try FileManager.default.moveItem(at: outside, to: root.appendingPathComponent("content/moved"))
            XCTAssertEqual(nextBatch(), ["content/moved", "content/moved/z.md"])
            try write("zz", to: "content/moved/z.md")
            XCTAssertEqual(nextBatch(), ["content/moved/z.md"])
            // inotify sees each file deleted before its folder; polling sees the folder gone, and names it alone.
            try FileManager.default.removeItem(at: root.appendingPathComponent("content/pages"))
            XCTAssertEqual(nextBatch(), kind == .poll ? ["content/pages"]
                : ["content/pages", "content/pages/guides", "content/pages/guides/x.md", "content/pages/guides/y.md"])
        }
    }

    func testAWatchedFolderDeletedAndMadeAgainIsWatchedAgain() throws {
        try forEachWatcher {
            try FileManager.default.removeItem(at: root.appendingPathComponent("Templates"))
            XCTAssertEqual(nextBatch(), ["Templates"])
            try FileManager.default.createDirectory(at: root.appendingPathComponent("Templates"), withIntermediateDirectories: true)
            XCTAssertEqual(nextBatch(), ["Templates"])
            try write("t", to: "Templates/page.mustache")
            XCTAssertEqual(nextBatch(), ["Templates/page.mustache"])
        }
    }

    func testSwapFilesBackupsAndIgnoredFoldersAreNoChange() throws {
        try forEachWatcher {
            try FileManager.default.createDirectory(at: root.appendingPathComponent("content/generated"), withIntermediateDirectories: true)
            for path in ["content/records/.a.csv.swp", "content/records/a.csv~", "content/records/4913", "content/records/#a.csv#",
                         "content/generated/x.csv", "output/index.html", "other.txt"] {
                try write("x", to: path)
            }
            try FileManager.default.removeItem(at: root.appendingPathComponent("content/records/4913"))
            XCTAssertNil(nextBatch(within: 0.5))
            // A build may still want them (a pattern can match `4913`): hidden files and ignored folders aside.
            // Polling never sees `4913`, made and deleted between two of its walks.
            let expected: Set = kind == .poll ? ["content/records/a.csv~", "content/records/#a.csv#"]
                : ["content/records/a.csv~", "content/records/4913", "content/records/#a.csv#"]
            XCTAssertEqual(watcher.takeQuietChanges(), expected)
            XCTAssertEqual(watcher.takeQuietChanges(), [])
        }
    }

    /// `rm -rf output` while serving built nothing until the next save, and every open page stayed a 404.
    /// The output folder's own deletion (or move) is a change; what happens inside it is not.
    func testTheOutputFolderDeletedIsAChange() throws {
        try forEachWatcher {
            try write("x", to: "output/index.html")
            try FileManager.default.removeItem(at: root.appendingPathComponent("output"))
            XCTAssertEqual(nextBatch(), ["output"])
        }
    }

    func testAFolderWithAnEditorsBackupNameIsWatchedAsAnyOther() throws {
        try forEachWatcher {
            // A source pattern walks into `old~`: only hidden folders are passed over.
            try FileManager.default.createDirectory(at: root.appendingPathComponent("content/records/old~"), withIntermediateDirectories: true)
            try write("a", to: "content/records/old~/a.csv")
            XCTAssertEqual(nextBatch(), ["content/records/old~", "content/records/old~/a.csv"])
            try write("b", to: "content/records/old~/a.csv")
            XCTAssertEqual(nextBatch(), ["content/records/old~/a.csv"])
        }
    }

    func testAFileDeletedMadeAgainAndDeletedWithinABatchIsAChange() throws {
        try forEachWatcher {
            try write("a", to: "content/records/a.csv")
            XCTAssertEqual(nextBatch(), ["content/records/a.csv"])
            try FileManager.default.removeItem(at: root.appendingPathComponent("content/records/a.csv"))
            try write("b", to: "content/records/a.csv")
            try FileManager.default.removeItem(at: root.appendingPathComponent("content/records/a.csv"))
            XCTAssertEqual(nextBatch(), ["content/records/a.csv"], "it was there before the batch, and is gone")
        }
    }

    func testAFileMadeAndRemovedWithinABatchIsNoChange() throws {
        try forEachWatcher {
            // sed -i writes a scratch file next to the file and renames it over; the scratch name never counts.
            try write("x", to: "content/records/sedAbC124")
            try write("a", to: "content/records/a.csv")
            try FileManager.default.removeItem(at: root.appendingPathComponent("content/records/sedAbC124"))
            XCTAssertEqual(nextBatch(), ["content/records/a.csv"])
            try write("x", to: "content/records/sedAbC123")
            try FileManager.default.removeItem(at: root.appendingPathComponent("content/records/sedAbC123"))
            XCTAssertNil(nextBatch(within: 0.5))
        }
    }

    func testAConstantStreamOfChangesIsHandedOutAfterTheMaximumDelay() throws {
        try forEachWatcher {
            let writer = Thread { [root] in
                for round in 0..<40 {
                    try? "\(round)".write(to: root!.appendingPathComponent("content/records/a.csv"), atomically: false, encoding: .utf8)
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
            writer.start()
            let start = Date()
            XCTAssertEqual(nextBatch(), ["content/records/a.csv"])
            let waited = Date().timeIntervalSince(start)
            XCTAssertLessThan(waited, 1.0, "a 2 s stream of writes 50 ms apart is batched after the 0.5 s maximum delay")
            XCTAssertGreaterThan(waited, 0.4)
            Thread.sleep(forTimeInterval: 1.8)
        }
    }

    func testStopEndsAWaitingBatch() throws {
        try forEachWatcher {
            let start = Date()
            let stopper = Thread { [watcher] in
                Thread.sleep(forTimeInterval: 0.2)
                watcher!.stop()
            }
            stopper.start()
            XCTAssertNil(try watcher.nextBatch())
            XCTAssertLessThan(Date().timeIntervalSince(start), 1)
        }
    }

    func testEditorFileNamesAreIgnored() {
        for name in [".about.md.swp", ".about.md.swx", "about.md~", "4913", "#about.md#", ".#about.md", ".DS_Store",
                     "about.md___jb_tmp___", ".a.sitegen-12-34.tmp"] {
            XCTAssertTrue(ChangeFilter.ignores(name: name), name)
        }
        for name in ["about.md", "failed-banks.csv", "4914", "list.mustache", "swp.md"] {
            XCTAssertFalse(ChangeFilter.ignores(name: name), name)
        }
    }

    func testAnUnknownWatcherIsAnErrorThatNamesTheChoices() {
        // The variable as the run set it (`make test-portable` sets `poll`) comes back after.
        let before = ProcessInfo.processInfo.environment[FileWatcher.kindVariable]
        defer { if let before { setenv(FileWatcher.kindVariable, before, 1) } else { unsetenv(FileWatcher.kindVariable) } }
        setenv(FileWatcher.kindVariable, "kqueue", 1)
        XCTAssertThrowsError(try FileWatcher.Kind.fromEnvironment()) { error in
            XCTAssertEqual("\(error)", "SITEGEN_WATCHER=kqueue names no watcher: set it to native or poll, or unset it")
        }
        setenv(FileWatcher.kindVariable, "poll", 1)
        XCTAssertEqual(try FileWatcher.Kind.fromEnvironment(), .poll)
    }
}
