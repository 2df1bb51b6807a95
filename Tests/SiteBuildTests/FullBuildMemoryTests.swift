import Foundation
import SiteStore
@testable import SiteBuild
import XCTest

/// What a build of every page keeps per page is kept small (decisions.md 39c): the writer does not list the
/// folders inside folders it made, nor two more paths per staged page, and a build without a session counts
/// its manifest instead of indexing it. These check that the shortcuts leave what the long ways left.
final class FullBuildMemoryTests: XCTestCase {
    private var scratch: ScratchSite!
    private var site: URL { scratch.site }

    override func setUpWithError() throws {
        scratch = try ScratchSite("full-build-memory")
    }

    override func tearDownWithError() throws {
        scratch.remove()
    }

    /// Pages discarded unpublished take with them every folder the writer made for them, the unlisted ones
    /// inside folders it made too, and leave the folders it found and their files.
    func testDiscardedPagesTakeTheFoldersTheWriterMadeAndLeaveTheOnesItFound() throws {
        let output = scratch.work.appendingPathComponent("discarded")
        try FileManager.default.createDirectory(at: output.appendingPathComponent("found"), withIntermediateDirectories: true)
        try Data("mine\n".utf8).write(to: output.appendingPathComponent("found/notes.txt"))
        let writer = OutputWriter(root: output)
        let pages = ["index.html", "a/index.html", "a/b/c/index.html", "a/b/d/index.html", "a/b/d/feed.xml", "found/p/index.html",
                     "found/q/r/index.html"]
        for page in pages { try writer.write("page \(page)\n", to: page) }
        writer.discardUnpublished()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.path).sorted(), ["found"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.appendingPathComponent("found").path), ["notes.txt"])
    }

    /// Pages published are where they go, with their bytes, and no temporary file is left, however deep the
    /// folders the writer made for them.
    func testPublishedPagesInFoldersTheWriterMadeAreInPlaceWithNoTemporaryFileLeft() throws {
        let output = scratch.work.appendingPathComponent("published")
        let writer = OutputWriter(root: output)
        let pages = (0..<200).map { "records/r\($0)/index.html" } + ["tags/t/page/2/index.html", "tags/t/page/2/index.md", "index.html"]
        for page in pages { try writer.write("page \(page)\n", to: page) }
        try writer.publish()
        for page in pages {
            XCTAssertEqual(try String(contentsOf: output.appendingPathComponent(page), encoding: .utf8), "page \(page)\n")
        }
        let left = FileManager.default.enumerator(atPath: output.path)?.compactMap { $0 as? String }.filter { OutputWriter.isTemporary(name: ($0 as NSString).lastPathComponent) }
        XCTAssertEqual(left, [])
        var rendered = Set<String>()
        writer.renderedFiles.forEach { path, _ in rendered.insert(path) }
        XCTAssertEqual(rendered, Set(pages))
    }

    /// The counts a build without a session stores with the manifest, from nothing and with `--full`, are
    /// those of the files the manifest lists; and the counts `counts(afterApplying:)` gives are those `apply`
    /// leaves.
    func testABuildOfEveryPageStoresTheCountsOfTheManifestItLeaves() throws {
        for options in [SiteBuilder.Options(), SiteBuilder.Options(full: true)] {
            let summary = try SiteBuilder(root: site).build(options: options)
            XCTAssertTrue(summary.succeeded, "\(summary.problems)")
            let storePath = site.appendingPathComponent(".sitegen/store.sqlite").path
            let store = try SiteStore(path: storePath)
            let manifest = try store.pageManifest()
            let whole = ManifestIndex(paths: manifest.paths, entries: manifest.records)
            let stored = try XCTUnwrap(try SiteStore.ManifestReader(database: store.database, storePath: storePath).counts())
            XCTAssertEqual(stored, whole.currentCounts, "full: \(options.full)")
            XCTAssertGreaterThan(stored.files, 100)
        }

        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        let manifest = try store.pageManifest()
        let index = ManifestIndex(paths: manifest.paths, entries: manifest.records)
        var changed = PageEntries()
        for (path, record) in zip(manifest.paths, manifest.records).prefix(40) { changed[path] = record }
        changed["new/index.html"] = PageRecord(inputs: nil, hash: 1, owner: "banks", page: 3)
        changed["new/index.md"] = PageRecord(inputs: nil, hash: 2, owner: "banks", page: 3)
        let removed = Array(manifest.paths.suffix(30)) + [manifest.paths[0], "never/index.html"]
        let counted = index.counts(afterApplying: changed, removed: removed)
        index.apply(changed: changed, removed: removed)
        XCTAssertEqual(counted, index.currentCounts)
    }
}
