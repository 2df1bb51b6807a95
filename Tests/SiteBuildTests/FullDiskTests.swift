import Foundation
@testable import SiteBuild
import XCTest

/// A disk that fills up mid-build left `.NAME.sitegen-PID-TID.tmp` files in `output/` for good (issue 42):
/// a build that stops at a write error deletes what it made, and the next build looks for any left.
final class FullDiskTests: XCTestCase {
    private var work: URL!
    private var output: String { work.appendingPathComponent("output").path }

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-full-disk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: work)
    }

    /// Everything under the output folder: files with their text, folders ending in `/`.
    private func contents() throws -> [String: String] {
        try ScratchSite.files(under: URL(fileURLWithPath: output)).mapValues { String(decoding: $0, as: UTF8.self) }
    }

    /// A write that fails half-way (the disk is full after the first bytes) takes its temporary file and the
    /// folders made for it along: the folder holds what it held, and no `.sitegen-*.tmp`.
    func testAFailedWriteLeavesNoTemporaryFileOrFolder() throws {
        try "old".write(toFile: output + "/kept.html", atomically: false, encoding: .utf8)
        let before = try contents()
        let writer = OutputWriter(root: URL(fileURLWithPath: output))
        writer.newFiles = NewFileLog(path: work.appendingPathComponent("new-files").path)
        writer.writeBytes = { data, descriptor, path in
            guard data.count > 20 else { return try OutputWriter.write(data, to: descriptor, path: path) }
            // Some bytes reach the disk, then it is full.
            try OutputWriter.write(data.prefix(10), to: descriptor, path: path)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "No space left on device"])
        }
        try writer.write("new", to: "kept.html")
        try writer.write("small", to: "a/b/small.html")
        XCTAssertThrowsError(try writer.write(String(repeating: "x", count: 100), to: "c/d/large.html")) { error in
            XCTAssertTrue("\(error)".contains("No space left on device"), "\(error)")
        }
        writer.discardUnpublished()
        XCTAssertEqual(try contents(), before, "no temporary file, and no folder the stopped build made")
    }

    /// Temporary files an earlier process left (killed between a write and its cleanup, or an older sitegen
    /// after a full disk) go with the next build after one that wrote some and stopped, and with `--full`,
    /// wherever they are; a file sitegen did not make stays.
    func testTheNextBuildAfterOneThatStoppedDeletesEveryTemporaryFile() throws {
        let logPath = work.appendingPathComponent("new-files").path
        let stopped = NewFileLog(path: logPath)
        try stopped.recordTemporaryFiles()
        try FileManager.default.createDirectory(atPath: output + "/deep/er", withIntermediateDirectories: true)
        for name in ["deep/er/.index.html.sitegen-4242-1.tmp", ".page.html.sitegen-1-2.tmp", "deep/CNAME"] {
            try "left".write(toFile: output + "/" + name, atomically: false, encoding: .utf8)
        }
        // An ordinary build (nothing stopped since the last good one) lists no folder for them.
        let quiet = OutputWriter(root: URL(fileURLWithPath: output))
        quiet.newFiles = NewFileLog(path: work.appendingPathComponent("other-log").path)
        _ = quiet.deleteStale([])
        XCTAssertEqual(try contents().keys.filter { $0.hasSuffix(".tmp") }.count, 2)

        let next = OutputWriter(root: URL(fileURLWithPath: output))
        next.newFiles = NewFileLog(path: logPath)
        XCTAssertTrue(next.newFiles?.earlierBuildsWroteTemporaryFiles == true)
        XCTAssertEqual(next.newFiles?.files(), [], "the mark is no file to delete")
        let (deleted, kept) = next.deleteStale([])
        XCTAssertEqual(deleted, [], "temporary files are not pages")
        XCTAssertTrue(kept.isEmpty)
        XCTAssertEqual(try contents(), ["deep/": "", "deep/CNAME": "left"])

        try "left".write(toFile: output + "/deep/.x.sitegen-7-7.tmp", atomically: false, encoding: .utf8)
        let full = OutputWriter(root: URL(fileURLWithPath: output))
        full.sweepsTemporaries = true
        _ = full.deleteStale([])
        XCTAssertEqual(try contents(), ["deep/": "", "deep/CNAME": "left"])
    }

    /// A build on a small file system that fills up stops with an error that names the full disk; once room
    /// is made, the next build leaves the output folder as a clean build writes it, with no temporary file.
    /// Needs a tmpfs mounted for the test (root, in a namespace that allows it): skipped otherwise.
    func testABuildOnAFullDiskIsFinishedByTheNextOnceThereIsRoom() throws {
        let scratch = try ScratchSite("full-disk")
        defer { scratch.remove() }
        let mountPoint = scratch.site.appendingPathComponent("output")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        // The example's output takes about 3.5 MB of a tmpfs (its 423 files a 4 KiB page at least).
        guard mount(["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint.path]) else {
            print("FullDiskTests: skipped, `mount -t tmpfs` is not allowed here (needs root and a mount namespace that permits it)")
            throw XCTSkip("cannot mount a tmpfs here")
        }
        defer { _ = umount(mountPoint.path) }

        XCTAssertThrowsError(try SiteBuilder(root: scratch.site).build()) { error in
            XCTAssertTrue("\(error)".contains("No space left on device"), "\(error)")
        }
        XCTAssertEqual(try ScratchSite.files(under: mountPoint).keys.filter { $0.contains(".sitegen-") }, [], "no temporary file after the failure")

        // Room made: the next build finishes it.
        XCTAssertTrue(mount(["-o", "remount,size=64m", mountPoint.path]))
        _ = try SiteBuilder(root: scratch.site).build()
        try scratch.assertSameAsCleanBuild("after a full disk, then room")

        // An edit that makes every page longer, on a disk with room for a few of them: the failed build
        // publishes nothing, and leaves nothing; the next one, with room, is a clean build's.
        let base = scratch.site.appendingPathComponent("Templates/base.mustache")
        let padding = "<!-- " + String(repeating: "padding ", count: 2000) + "-->"
        try String(contentsOf: base, encoding: .utf8).replacingOccurrences(of: "<head>", with: "<head>" + padding)
            .write(to: base, atomically: true, encoding: .utf8)
        let used = try usedBytes(mountPoint.path)
        XCTAssertTrue(mount(["-o", "remount,size=\(used + 512 * 1024)", mountPoint.path]))
        let published = try ScratchSite.files(under: mountPoint)
        XCTAssertThrowsError(try SiteBuilder(root: scratch.site).build()) { error in
            XCTAssertTrue("\(error)".contains("No space left on device"), "\(error)")
        }
        XCTAssertEqual(try ScratchSite.files(under: mountPoint), published, "the failed build published nothing and left nothing")
        XCTAssertTrue(mount(["-o", "remount,size=64m", mountPoint.path]))
        _ = try SiteBuilder(root: scratch.site).build()
        try scratch.assertSameAsCleanBuild("after an edit on a full disk, then room")
    }

    private func mount(_ arguments: [String]) -> Bool {
        guard getuid() == 0, let process = try? Process.run(URL(fileURLWithPath: "/bin/mount"), arguments: arguments) else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    private func umount(_ path: String) -> Bool {
        guard let process = try? Process.run(URL(fileURLWithPath: "/bin/umount"), arguments: [path]) else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    private func usedBytes(_ path: String) throws -> Int {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { throw CocoaError(.fileReadUnknown) }
        return Int(status.f_blocks - status.f_bfree) * Int(status.f_frsize)
    }
}
