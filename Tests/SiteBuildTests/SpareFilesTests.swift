import Foundation
@testable import SiteBuild
import XCTest

/// Pages replaced through spares: every page holds exactly its new bytes, a page's old file is reused
/// only by a later build, never while it has another link, and the spares stay within their capacity.
/// Each test runs with every implementation of the renames (`forEachRenaming`): Linux's exchange, then the
/// portable one other systems use.
final class SpareFilesTests: XCTestCase {
    /// The renames the spares and the writer of the test use now.
    private var renamingKind = FileRenamingKind.exchange

    private var work: URL!
    private var output: String { work.appendingPathComponent("output").path }
    private var spareFolder: String { work.appendingPathComponent("spare").path }

    /// Runs `body` once per kind of renames this system has, each in a folder of its own; a failure says
    /// which kind it was with. (One test class per kind would not do: Linux's XCTest does not run the tests a
    /// class inherits.)
    private func forEachRenaming(_ body: () throws -> Void) throws {
        #if os(Linux)
        let kinds: [FileRenamingKind] = [.exchange, .portable]
        #else
        let kinds: [FileRenamingKind] = [.portable]
        #endif
        for kind in kinds {
            renamingKind = kind
            let failures = testRun?.failureCount ?? 0
            work = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-spares-\(UUID().uuidString)")
            try FileManager.default.createDirectory(atPath: work.appendingPathComponent("output").path, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            try body()
            if (testRun?.failureCount ?? 0) > failures { XCTFail("the failures above are with the \(kind) renames") }
        }
    }

    func testAPagesOldFileIsReusedByALaterBuildOnly() throws {
        try forEachRenaming {
            try write("old page A, longer than what replaces it", to: "a.html")
            try write("old page B", to: "b.html")
            let oldA = try inode(output + "/a.html")

            // Each build has its spares to itself: the first lets go of them before the next begins.
            do {
                let first = try XCTUnwrap(makeSpares(capacity: 10))
                XCTAssertTrue(try place("new A", at: "a.html", with: first))
                XCTAssertTrue(try place("new B", at: "b.html", with: first))
            }
            XCTAssertEqual(try read("a.html"), "new A")
            XCTAssertEqual(try read("b.html"), "new B")
            // The old files are the spares now; this build wrote both pages into new files.
            XCTAssertNotEqual(try inode(output + "/b.html"), oldA, "a file this build retired was written into by the same build")
            XCTAssertEqual(Set(try spareContents()), ["old page A, longer than what replaces it", "old page B"])

            let second = try XCTUnwrap(makeSpares(capacity: 10))
            XCTAssertTrue(try place("A, third", at: "a.html", with: second))
            XCTAssertTrue(try place("B, third and longer than before", at: "b.html", with: second))
            XCTAssertEqual(try read("a.html"), "A, third")
            XCTAssertEqual(try read("b.html"), "B, third and longer than before")
            let reused = Set([try inode(output + "/a.html"), try inode(output + "/b.html")])
            XCTAssertTrue(reused.contains(oldA), "the next build did not write into the spares")
            XCTAssertEqual(Set(try spareContents()), ["new A", "new B"])
        }
    }

    func testAReaderOfTheOldPageKeepsItsBytesWhileTheBuildGoesOn() throws {
        try forEachRenaming {
            try write("the page as it was", to: "a.html")
            let reader = try XCTUnwrap(FileHandle(forReadingAtPath: output + "/a.html"))
            defer { try? reader.close() }
            let spares = try XCTUnwrap(makeSpares(capacity: 10))
            XCTAssertTrue(try place("the new page", at: "a.html", with: spares))
            for page in 0..<20 {
                try write("page \(page)", to: "p\(page).html")
                // Past the capacity, a temporary file, as the build's writer does.
                XCTAssertEqual(try place("page \(page), again", at: "p\(page).html", with: spares), page < 9)
            }
            XCTAssertEqual(String(decoding: try reader.readToEnd() ?? Data(), as: UTF8.self), "the page as it was")
        }
    }

    func testASpareWithAnotherLinkIsNeverWrittenInto() throws {
        try forEachRenaming {
            try write("the page in a backup", to: "a.html")
            let backup = work.appendingPathComponent("backup.html").path
            // A backup made with hard links (cp -al, rsync --link-dest) shares the page's file.
            XCTAssertEqual(link(output + "/a.html", backup), 0)
            do {
                let first = try XCTUnwrap(makeSpares(capacity: 10))
                XCTAssertTrue(try place("new", at: "a.html", with: first))
            }
            let second = try XCTUnwrap(makeSpares(capacity: 10))
            XCTAssertTrue(try place("newer", at: "a.html", with: second))
            XCTAssertEqual(try read("a.html"), "newer")
            XCTAssertEqual(try String(contentsOfFile: backup, encoding: .utf8), "the page in a backup")
        }
    }

    func testSparesStayWithinTheirCapacityAndNewPagesAreCreated() throws {
        try forEachRenaming {
            for page in 0..<5 { try write("old \(page)", to: "p\(page).html") }
            do {
                let spares = try XCTUnwrap(makeSpares(capacity: 2))
                for page in 0..<5 { XCTAssertEqual(try place("new \(page)", at: "p\(page).html", with: spares), page < 2, "spares within the capacity") }
                // A page that is not there yet takes its place all the same.
                XCTAssertFalse(try place("fresh", at: "fresh.html", with: spares))
                for page in 0..<5 { XCTAssertEqual(try read("p\(page).html"), "new \(page)") }
                XCTAssertEqual(try read("fresh.html"), "fresh")
                XCTAssertLessThanOrEqual(try FileManager.default.contentsOfDirectory(atPath: spareFolder).count, 2)
                XCTAssertEqual(spares.spareCount, try FileManager.default.contentsOfDirectory(atPath: spareFolder).count)
            }

            let smaller = try XCTUnwrap(makeSpares(capacity: 1))
            smaller.trim()
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: spareFolder).count, 1)
        }
    }

    /// Pages that wait for `publish()` hold their spares until then: past the capacity they are written
    /// to temporary files beside their places, not to new spares (a file per page in the spare folder).
    /// Until `publish()`, every page is as it was; `discardUnpublished()` leaves it so, with no file or
    /// folder of the stopped build behind.
    func testWaitingPagesStayWithinTheSparesCapacityAndAreAllPublishedOrNone() throws {
        try forEachRenaming {
            for page in 0..<6 { try write("old \(page)", to: "p\(page).html") }
            for round in ["new", "discarded"] {
                let writer = OutputWriter(root: URL(fileURLWithPath: output))
                writer.renaming = renamingKind.renaming
                writer.spares = try XCTUnwrap(makeSpares(capacity: 2))
                for page in 0..<6 { try writer.write("\(round) \(page)", to: "p\(page).html") }
                try writer.write("fresh", to: "deep/er/fresh.html")
                XCTAssertLessThanOrEqual(try FileManager.default.contentsOfDirectory(atPath: spareFolder).count, 2)
                for page in 0..<6 { XCTAssertEqual(try read("p\(page).html"), round == "new" ? "old \(page)" : "new \(page)", "not yet") }
                XCTAssertFalse(FileManager.default.fileExists(atPath: output + "/deep/er/fresh.html"))
                if round == "new" {
                    try writer.publish()
                    for page in 0..<6 { XCTAssertEqual(try read("p\(page).html"), "new \(page)") }
                    XCTAssertEqual(try read("deep/er/fresh.html"), "fresh")
                    try FileManager.default.removeItem(atPath: output + "/deep")
                } else {
                    writer.discardUnpublished()
                    for page in 0..<6 { XCTAssertEqual(try read("p\(page).html"), "new \(page)") }
                    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output).sorted(), (0..<6).map { "p\($0).html" },
                                   "no temporary file, and no folder the stopped build made")
                }
                XCTAssertLessThanOrEqual(try FileManager.default.contentsOfDirectory(atPath: spareFolder).count, 2)
            }
        }
    }

    func testTwoBuildsAtOnceNeverShareTheSpares() throws {
        try forEachRenaming {
            var first = makeSpares(capacity: 10)
            XCTAssertNotNil(first)
            XCTAssertNil(makeSpares(capacity: 10), "a second build took the spares in use")
            first = nil
            XCTAssertNotNil(makeSpares(capacity: 10), "the spares stayed locked after the build")
        }
    }

    func testAPageNoLongerBuiltBecomesASpare() throws {
        try forEachRenaming {
            try write("a page that goes", to: "gone.html")
            let spares = try XCTUnwrap(makeSpares(capacity: 1))
            XCTAssertTrue(spares.retire(fileAt: output + "/gone.html"))
            XCTAssertFalse(FileManager.default.fileExists(atPath: output + "/gone.html"))
            try write("another", to: "other.html")
            XCTAssertFalse(spares.retire(fileAt: output + "/other.html"), "retired beyond the capacity")
            XCTAssertEqual(try spareContents(), ["a page that goes"])
        }
    }

    /// A page deleted while its build publishes (`rm -rf output` under a watch): the spare goes where it was,
    /// as a new file that a failed publication deletes again, not as one renamed over an old file for good
    /// (which made the build's error blame a file system that cannot exchange files).
    func testASpareSwappedInWhereThePageWentIsANewFile() throws {
        try forEachRenaming {
            try write("old", to: "page.html")
            try write("old", to: "kept.html")
            let spares = try XCTUnwrap(makeSpares(capacity: 10))
            XCTAssertTrue(spares.retire(fileAt: output + "/kept.html"))
            let first = try XCTUnwrap(try spares.write(Data("new".utf8)))
            XCTAssertEqual(try spares.swapIn(first, at: output + "/page.html"), .exchanged)
            spares.settle(first)
            let second = try XCTUnwrap(try spares.write(Data("newer".utf8)))
            try FileManager.default.removeItem(atPath: output + "/page.html")
            XCTAssertEqual(try spares.swapIn(second, at: output + "/page.html"), .placedWhereNone)
            XCTAssertEqual(try read("page.html"), "newer")
        }
    }

    /// Replaces the page `name` with `text` as a build's writer does: through a spare while one can be had,
    /// else a temporary file and a rename; says whether a spare was used.
    /// A watch's next build takes the spares its last build left as that build listed them, while the
    /// folder has not changed since; once it has (another build, a hand), it lists the folder again.
    func testAListingIsTakenAsItIsOnlyWhileTheFolderIsUnchanged() throws {
        try forEachRenaming {
            try write("old page A", to: "a.html")
            try write("old page B", to: "b.html")
            var listing: SpareFiles.Listing?
            do {
                let first = try XCTUnwrap(makeSpares(capacity: 10))
                XCTAssertTrue(try place("new A", at: "a.html", with: first))
                XCTAssertTrue(try place("new B", at: "b.html", with: first))
                first.trim()
                listing = first.listing()
            }
            let names = try XCTUnwrap(listing).names
            XCTAssertEqual(Set(names), Set(try FileManager.default.contentsOfDirectory(atPath: spareFolder)), "the listing is the folder's files")
            XCTAssertEqual(names.count, 2)

            // Unchanged: the listing stands (a name the folder never had shows that it was not listed again).
            let stale = SpareFiles.Listing(names: names + ["never-listed"], changed: try XCTUnwrap(listing).changed)
            XCTAssertEqual(try XCTUnwrap(makeSpares(capacity: 10, remembered: stale)).spareCount, 3)
            // Changed since: listed again.
            usleep(10_000)
            try Data("left by hand".utf8).write(to: URL(fileURLWithPath: spareFolder + "/by-hand"))
            let again = try XCTUnwrap(makeSpares(capacity: 10, remembered: stale))
            XCTAssertEqual(again.spareCount, 3, "two spares and the file made by hand")
            XCTAssertTrue(try place("A, third", at: "a.html", with: again))
            XCTAssertEqual(try read("a.html"), "A, third")
        }
    }

    /// Two builds whose new spares' names would be the same (a watch's builds share a process and a second)
    /// never give one name to two files: the second takes the next free name, and its listing names each
    /// file once, so no later build writes two pages into one file.
    func testASpareNeverTakesTheNameOfOneListed() throws {
        try forEachRenaming {
            try write("old page A", to: "a.html")
            try write("old page B", to: "b.html")
            var listing: SpareFiles.Listing?
            do {
                let first = try XCTUnwrap(makeSpares(capacity: 10, namePrefix: "same-"))
                XCTAssertTrue(first.retire(fileAt: output + "/a.html"))
                listing = first.listing()
            }
            let second = try XCTUnwrap(makeSpares(capacity: 10, remembered: try XCTUnwrap(listing),
                                                  namePrefix: "same-"))
            XCTAssertTrue(second.retire(fileAt: output + "/b.html"))
            let names = try XCTUnwrap(second.listing()).names
            XCTAssertEqual(names.count, Set(names).count, "a name listed twice: \(names)")
            XCTAssertEqual(Set(names), Set(try FileManager.default.contentsOfDirectory(atPath: spareFolder)))
            XCTAssertEqual(try spareContents().sorted(), ["old page A", "old page B"])
        }
    }

    /// Spares in `spareFolder` for the pages in `output`, swapped in with this class's renames.
    private func makeSpares(capacity: Int, remembered: SpareFiles.Listing? = nil, namePrefix: String? = nil) -> SpareFiles? {
        SpareFiles(folder: spareFolder, outputRoot: output, capacity: capacity, remembered: remembered, namePrefix: namePrefix,
                   renaming: renamingKind.renaming)
    }

    private func place(_ text: String, at name: String, with spares: SpareFiles) throws -> Bool {
        guard let spare = try spares.write(Data(text.utf8)) else {
            try replaceFile(atPath: output + "/" + name, with: Data(text.utf8))
            return false
        }
        if try spares.swapIn(spare, at: output + "/" + name) == .exchanged { spares.settle(spare) }
        return true
    }

    private func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: output + "/" + name))
    }

    private func read(_ name: String) throws -> String {
        try String(contentsOfFile: output + "/" + name, encoding: .utf8)
    }

    private func inode(_ path: String) throws -> UInt {
        var status = stat()
        guard stat(path, &status) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return UInt(status.st_ino)
    }

    private func spareContents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: spareFolder).map {
            try String(contentsOfFile: spareFolder + "/" + $0, encoding: .utf8)
        }
    }
}
