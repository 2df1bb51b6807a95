import Foundation
@testable import SiteBuild
import XCTest

/// The two renames publishing needs, as each implementation does them: an exchange swaps two files and
/// fails on a missing one; a rename to a free name never takes a name that is taken. The portable ones
/// leave nothing behind, and what a build killed between their calls leaves is swept by the next.
final class FileRenamingTests: XCTestCase {
    private var folder: String!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-renaming-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Every implementation this system has.
    private var kinds: [FileRenamingKind] {
        #if os(Linux)
        [.exchange, .portable]
        #else
        [.portable]
        #endif
    }

    func testAnExchangeSwapsTheFilesAndLeavesNoOtherName() throws {
        for kind in kinds {
            try write("new page", to: "new")
            try write("old page", to: "page.html")
            let (newFile, oldFile) = (try inode("new"), try inode("page.html"))
            XCTAssertTrue(kind.renaming.exchange(path("new"), path("page.html")), "\(kind)")
            XCTAssertEqual(try read("page.html"), "new page", "\(kind)")
            XCTAssertEqual(try read("new"), "old page", "\(kind)")
            XCTAssertEqual(try inode("page.html"), newFile, "\(kind): the same files, swapped")
            XCTAssertEqual(try inode("new"), oldFile, "\(kind)")
            XCTAssertEqual(try names(), ["new", "page.html"], "\(kind)")
            try clear()
        }
    }

    func testAnExchangeWithAMissingFileFailsWithENOENTAndChangesNothing() throws {
        for kind in kinds {
            try write("new page", to: "new")
            let exchanged = kind.renaming.exchange(path("new"), path("gone.html")), code = errno
            XCTAssertFalse(exchanged, "\(kind)")
            XCTAssertEqual(code, ENOENT, "\(kind): what the writer takes for a page deleted meanwhile")
            XCTAssertEqual(try names(), ["new"], "\(kind)")
            try clear()
        }
    }

    func testARenameToAFreeNameNeverTakesATakenOne() throws {
        for kind in kinds {
            try write("retired page", to: "page.html")
            try write("a spare", to: "spare-1")
            let renamed = kind.renaming.renameToFreeName(path("page.html"), path("spare-1")), code = errno
            XCTAssertFalse(renamed, "\(kind)")
            XCTAssertEqual(code, EEXIST, "\(kind)")
            XCTAssertEqual(try read("spare-1"), "a spare", "\(kind)")
            XCTAssertTrue(kind.renaming.renameToFreeName(path("page.html"), path("spare-2")), "\(kind)")
            XCTAssertEqual(try read("spare-2"), "retired page", "\(kind)")
            XCTAssertEqual(try names(), ["spare-1", "spare-2"], "\(kind)")
            try clear()
        }
    }

    /// A portable exchange killed after its link: the page's old file has a second name beside the spare.
    /// The next build's spares let that name go and never write into the file, which is still the page.
    func testAnExchangeKilledAfterItsLinkLeavesAFileTheNextBuildLetsGo() throws {
        let output = folder + "/output", spares = folder + "/spare"
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: spares, withIntermediateDirectories: true)
        try write("the page", to: "output/page.html")
        let aside = spares + "/" + PortableRenaming.asidePrefix + "1-1.tmp"
        XCTAssertEqual(link(output + "/page.html", aside), 0)
        XCTAssertTrue(OutputWriter.isTemporary(name: (aside as NSString).lastPathComponent), "swept from the output folder too")

        let next = try XCTUnwrap(SpareFiles(folder: spares, outputRoot: output, capacity: 4, renaming: PortableRenaming()))
        XCTAssertEqual(next.spareCount, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: aside))
        let spare = try XCTUnwrap(try next.write(Data("the new page".utf8)))
        XCTAssertEqual(try next.swapIn(spare, at: output + "/page.html"), .exchanged)
        XCTAssertEqual(try read("output/page.html"), "the new page")
        XCTAssertEqual(try String(contentsOfFile: spare, encoding: .utf8), "the page")
    }

    private func path(_ name: String) -> String { folder + "/" + name }

    private func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
    }

    private func read(_ name: String) throws -> String {
        try String(contentsOfFile: path(name), encoding: .utf8)
    }

    private func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    private func clear() throws {
        for name in try names() { try FileManager.default.removeItem(atPath: path(name)) }
    }

    private func inode(_ name: String) throws -> UInt64 {
        var status = stat()
        guard stat(path(name), &status) == 0 else { throw CocoaError(.fileNoSuchFile) }
        return UInt64(status.st_ino)
    }
}
