import Foundation
@testable import SiteBuild
import XCTest

/// sitegen's manual (`docs/`) is a sitegen site: it builds without a warning, every guide and reference page
/// is there, and every link between its pages (fragments included) leads somewhere.
final class DocsSiteTests: XCTestCase {
    private var site: URL!

    override func setUpWithError() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-docs-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: repository.appendingPathComponent("docs"), to: site)
        // A docs/output/ or docs/.sitegen/ that `make docs` left is not part of the manual's sources.
        for made in ["output", ".sitegen"] { try? FileManager.default.removeItem(at: site.appendingPathComponent(made)) }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: site)
    }

    func testTheManualBuildsWithoutAWarningIntoEveryGuideAndReferencePage() throws {
        let summary = try SiteBuilder(root: site).build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems) \(summary.stoppedBy ?? "")")
        XCTAssertEqual(summary.warnings.map(\.description), [])
        let output = site.appendingPathComponent("output")
        let expected = ["index.html", "reference/index.html", "internals/index.html", "decisions/index.html", "performance/index.html"]
            + ["collections", "listings", "templates", "feeds", "incremental-builds", "watch-and-serve", "deploy", "troubleshooting"]
                .map { "guide/\($0)/index.html" }
            + ["configuration", "templates", "commands"].map { "reference/\($0)/index.html" }
            + ["crash-safety", "results-controller", "benchmarks", "fuzzing", "tests", "status"].map { "internals/\($0)/index.html" }
        for page in expected {
            XCTAssertTrue(FileManager.default.fileExists(atPath: output.appendingPathComponent(page).path), "\(page) was not written")
        }
        // The contents page lists the guide in its reading order, each page with its one-line description.
        let home = try String(contentsOf: output.appendingPathComponent("index.html"), encoding: .utf8)
        let order = ["collections", "listings", "templates", "feeds", "incremental-builds", "watch-and-serve", "deploy", "troubleshooting"]
            .map { home.range(of: "href=\"/guide/\($0)/\"")?.lowerBound }
        XCTAssertFalse(order.contains(nil), "the contents page lists every guide page")
        XCTAssertEqual(order.compactMap { $0 }, order.compactMap { $0 }.sorted())
        XCTAssertTrue(home.contains("<p>Declare records from CSV, JSON, NDJSON, feeds and Markdown, with typed fields.</p>"))
    }

    func testEveryLinkBetweenTheManualsPagesResolvesWithItsFragment() throws {
        XCTAssertTrue(try SiteBuilder(root: site).build().succeeded)
        let (broken, checked) = try LinkChecker(output: site.appendingPathComponent("output")).brokenLinks()
        XCTAssertEqual(broken.map(\.description), [])
        XCTAssertGreaterThan(checked, 150)
    }

    func testEverySitegenYmlKeyTheConfigurationReadsIsInTheReference() throws {
        let reference = try String(contentsOf: site.appendingPathComponent("reference/configuration.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/SiteBuild/Config/SiteConfig.swift"), encoding: .utf8)
        // Each `allowed:` list of the reader names the keys of one mapping of sitegen.yml.
        let lists = try NSRegularExpression(pattern: #"allowed(?:: Set<String>)? *[:=] *\[([^\]]*)\]"#)
        var keys: Set<String> = []
        for match in lists.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            let list = String(source[Range(match.range(at: 1), in: source)!])
            for key in list.split(separator: ",") { keys.insert(key.trimmingCharacters(in: CharacterSet(charactersIn: " \n\"")))}
        }
        XCTAssertGreaterThan(keys.count, 25)
        for key in keys.sorted() where !["name"].contains(key) {
            XCTAssertTrue(reference.contains("| `\(key)` |"), "the reference has no row for the key '\(key)'")
        }
    }
}
