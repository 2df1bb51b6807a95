import Foundation
@testable import SiteBuild
import XCTest

/// A copy of the example site in a scratch folder (in memory where /dev/shm is, since these tests make
/// thousands of folders), and the oracle of every incremental test: a clean build of the same sources.
struct ScratchSite {
    /// The folder holding the site and its clean copy.
    let work: URL
    /// The site the tests change and build.
    var site: URL { work.appendingPathComponent("site") }
    /// Where a clean build of the site's sources is made.
    var clean: URL { work.appendingPathComponent("clean") }

    /// Copies the example site (sitegen.yml, content, Templates) into a new scratch folder named after `name`.
    init(_ name: String) throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var isFolder: ObjCBool = false
        let memory = FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isFolder) && isFolder.boolValue
            && FileManager.default.isWritableFile(atPath: "/dev/shm")
        let base = memory ? URL(fileURLWithPath: "/dev/shm", isDirectory: true) : FileManager.default.temporaryDirectory
        work = base.appendingPathComponent("sitegen-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work.appendingPathComponent("site"), withIntermediateDirectories: true)
        for item in ["sitegen.yml", "content", "Templates"] {
            try FileManager.default.copyItem(at: repository.appendingPathComponent(item), to: work.appendingPathComponent("site/" + item))
        }
    }

    /// Deletes the scratch folder.
    func remove() {
        try? FileManager.default.removeItem(at: work)
    }

    /// Fails unless the site's output folder holds exactly what a clean build of its sources writes (with
    /// drafts when `includesDrafts`, as `--drafts` builds).
    func assertSameAsCleanBuild(_ context: String, includesDrafts: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws {
        try? FileManager.default.removeItem(at: clean)
        try FileManager.default.createDirectory(at: clean, withIntermediateDirectories: true)
        for item in ["sitegen.yml", "content", "Templates", "static"]
        where FileManager.default.fileExists(atPath: site.appendingPathComponent(item).path) {
            try FileManager.default.copyItem(at: site.appendingPathComponent(item), to: clean.appendingPathComponent(item))
        }
        var builder = SiteBuilder(root: clean)
        builder.includesDrafts = includesDrafts
        _ = try builder.build()
        let expected = try Self.files(under: clean.appendingPathComponent("output"))
        let actual = try Self.files(under: site.appendingPathComponent("output"))
        let missing = Set(expected.keys).subtracting(actual.keys).sorted()
        let extra = Set(actual.keys).subtracting(expected.keys).sorted()
        let different = expected.keys.filter { actual[$0] != nil && actual[$0] != expected[$0] }.sorted()
        // The first line that differs, of the first file that does: what went wrong, not only where.
        let firstDifference = different.first.map { path -> String in
            let lines = [expected[path]!, actual[path]!].map { String(decoding: $0, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) }
            let at = Array(zip(lines[0], lines[1])).firstIndex { $0 != $1 } ?? min(lines[0].count, lines[1].count)
            let line = { (side: Int) in at < lines[side].count ? String(lines[side][at].prefix(300)) : "(none)" }
            return "; \(path) line \(at + 1): clean \(line(0)) | incremental \(line(1))"
        } ?? ""
        XCTAssertTrue(missing.isEmpty && extra.isEmpty && different.isEmpty,
                      "\(context): missing \(missing.prefix(5)), extra \(extra.prefix(5)), different \(different.prefix(5))\(firstDifference)",
                      file: file, line: line)
    }

    /// Every file under `root` with its bytes, and every folder (as `path/`, no bytes): a folder a build
    /// emptied and left behind differs from a clean build too.
    static func files(under root: URL) throws -> [String: Data] {
        var found: [String: Data] = [:]
        let prefix = root.standardizedFileURL.path + "/"
        for case let url as URL in FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)! {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { continue }
            let path = String(url.standardizedFileURL.path.dropFirst(prefix.count))
            found[isFolder.boolValue ? path + "/" : path] = isFolder.boolValue ? Data() : try Data(contentsOf: url)
        }
        return found
    }
}
