import Foundation
@testable import SiteBuild
import XCTest

/// What a person watching a long build sees: the load of a collection's many files and the publishing of
/// the build's files, each counted with a rate and the time left, and a last line saying it is done.
final class ProgressTests: XCTestCase {
    /// A starter site with 40 posts more, and a builder that reports progress at every step.
    private func builder() throws -> SiteBuilder {
        let site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-progress-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: site) }
        try StarterSite.write(into: site)
        for number in 1...40 {
            try "---\ntitle: Post \(number)\ndate: 2026-02-01T00:00:00Z\n---\nText.\n"
                .write(to: site.appendingPathComponent("content/posts/post-\(number).md"), atomically: true, encoding: .utf8)
        }
        var builder = try SiteBuilder(root: site)
        builder.progressInterval = 0
        return builder
    }

    func testLoadingManyFilesCountsFilesAndRowsAndEndsWithADoneLine() throws {
        var builder = try builder()
        nonisolated(unsafe) var lines: [String] = []
        builder.onLoadProgress = { lines.append($0.line) }
        XCTAssertTrue(try builder.build().succeeded)
        let posts = lines.filter { $0.hasPrefix("posts  ") }
        XCTAssertGreaterThan(posts.count, 10, "a line per file at an interval of 0")
        XCTAssertTrue(posts.contains { $0.range(of: #"^posts  \d+%  \d+ of 42 files  \d+ rows  [\d,]+ files/s"#, options: .regularExpression) != nil }, "\(posts)")
        XCTAssertTrue(posts.last!.range(of: #"^posts  100%  42 of 42 files  42 rows  [\d,]+ files/s  done in \d+ s$"#, options: .regularExpression) != nil,
                      posts.last!)
        // The About page's one file is counted too; a second build stores no row (it reads at most the files
        // changed within the file system's clock tick of the first, and finds their bytes unchanged).
        XCTAssertTrue(lines.contains { $0.hasPrefix("pages  100%  1 of 1 files  1 rows") })
        lines = []
        XCTAssertTrue(try builder.build().succeeded)
        XCTAssertEqual(lines.filter { !$0.contains("  0 rows") }, [])
    }

    func testPublishingCountsTheBuildsFilesIntoTheirPlaces() throws {
        var builder = try builder()
        nonisolated(unsafe) var lines: [String] = []
        builder.onPublishProgress = { lines.append($0.line) }
        let summary = try builder.build()
        XCTAssertTrue(summary.succeeded)
        XCTAssertGreaterThan(lines.count, 1)
        let total = summary.pagesWritten
        XCTAssertTrue(lines.last!.range(of: "^output/  100%  \(total) of \(total) files  [\\d,]+ files/s  done in \\d+ s$", options: .regularExpression) != nil,
                      lines.last!)
    }
}
