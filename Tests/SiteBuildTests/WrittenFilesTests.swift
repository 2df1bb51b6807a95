import Foundation
@testable import SiteBuild
import SiteStore
import XCTest

/// `WrittenFiles` and `RenderedPages` behave as the dictionary, list and array they replace in the writer,
/// the plan and the summary (decisions.md 39g), over random sets, removals, marks and paths set again.
final class WrittenFilesTests: XCTestCase {
    func testFilesAreWhatADictionaryByPathAndAListOfWrittenPathsHold() {
        var random = SystemRandomNumberGenerator()
        var files = WrittenFiles()
        var hashes: [String: Int64] = [:]
        var written: [String] = []
        var replacing = Set<String>()
        let paths = (0..<3_000).map { number -> String in
            // Short and long paths, shared prefixes, and names beyond ASCII.
            number % 7 == 0 ? "états/\(number)/index.html" : number % 5 == 0 ? "p/\(number)" : "records/\(number * 7919 % 4_001)/index.html"
        }
        for step in 0..<40_000 {
            let path = paths.randomElement(using: &random)!
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let hash = Int64.random(in: .min ... .max, using: &random)
                let number = files.set(hash, for: path)
                hashes[path] = hash
                XCTAssertEqual(files.path(of: number), path)
                XCTAssertEqual(files.number(of: path), number)
                if Bool.random(using: &random), !written.contains(path) {
                    files.mark(number, .written)
                    written.append(path)
                }
            case 4..<6:
                let number = files.remove(path)
                XCTAssertEqual(number != nil, hashes.removeValue(forKey: path) != nil, "step \(step)")
                written.removeAll { $0 == path }
                replacing.remove(path)
            case 6:
                guard let number = files.number(of: path) else { continue }
                if Bool.random(using: &random) {
                    files.mark(number, .replacing)
                    replacing.insert(path)
                } else {
                    files.unmark(number, .replacing)
                    replacing.remove(path)
                }
            default:
                XCTAssertEqual(files.hash(of: path), hashes[path], "step \(step): \(path)")
                XCTAssertEqual(files.contains(path), hashes[path] != nil)
                XCTAssertEqual(files.number(of: path).map { files.marks(of: $0).contains(.replacing) } ?? false, replacing.contains(path))
            }
            XCTAssertEqual(files.count, hashes.count)
        }
        var seen: [String: Int64] = [:]
        files.forEach { seen[$0] = $1 }
        XCTAssertEqual(seen, hashes)
        XCTAssertEqual(Set(files.writtenPaths), Set(written))
        XCTAssertEqual(files.writtenPaths.count, written.count)
        for path in paths { XCTAssertEqual(files.hash(of: path), hashes[path], path) }
    }

    func testRenderedPagesAreWhatAnArrayOfPagesHolds() {
        var random = SystemRandomNumberGenerator()
        var pages = RenderedPages()
        var entries = PageEntries()
        var oracle: [BuildSummary.RenderedPage] = []
        let reasons = ["new page", "template changed: pager.mustache", "rows 6, 5 added", "états changés"]
        for step in 0..<5_000 {
            let path = step % 3 == 0 ? "é/\(step % 97)/index.html" : "records/\(Int.random(in: 0..<400, using: &random))/index.html"
            switch Int.random(in: 0..<20, using: &random) {
            case 0:
                // A file withdrawn: its entry goes from the plan's entries, and its pages from the list.
                entries.removeValue(forKey: path)
                if let number = entries.number(of: path) { pages.removeAll(entry: number) }
                oracle.removeAll { $0.path == path }
            case 1:
                // An entry set again (a page kept with new inputs) keeps its number.
                entries[path] = PageRecord(inputs: nil, hash: Int64(step))
            default:
                let reason = reasons.randomElement(using: &random)!
                entries[path] = PageRecord(inputs: nil, hash: 0, owner: "records")
                pages.append(entry: entries.number(of: path)!, reason: reason)
                oracle.append(BuildSummary.RenderedPage(path: path, reason: reason))
            }
            XCTAssertEqual(pages.count, oracle.count)
        }
        let named = pages.named(by: entries)
        XCTAssertEqual(named.pages, oracle)
        XCTAssertEqual(RenderedPages(oracle), named)
        XCTAssertEqual((0..<oracle.count).map { named[$0] }, oracle)
    }
}
