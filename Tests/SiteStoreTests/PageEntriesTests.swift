import Foundation
import SiteStore
import XCTest

/// `PageEntries` behaves as the dictionary by path it replaces, over random sets, removals, hash updates and
/// entries set again (the oracle), and gives its entries in the paths' byte order.
final class PageEntriesTests: XCTestCase {
    func testEntriesAreWhatADictionaryByPathHolds() {
        var random = SystemRandomNumberGenerator()
        var entries = PageEntries()
        var oracle: [String: PageRecord] = [:]
        let owners = ["home", "states", "banks", ""]
        let paths = (0..<3_000).map { number -> String in
            // Short and long paths, shared prefixes, and names beyond ASCII.
            number % 7 == 0 ? "états/\(number)/index.html" : number % 5 == 0 ? "p/\(number)" : "banks/\(number * 7919 % 4_001)/index.html"
        }
        for step in 0..<40_000 {
            let path = paths.randomElement(using: &random)!
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let record = PageRecord(
                    inputs: Bool.random(using: &random) ? PageInputs(settings: Int64(step), template: 2, data: 3, content: Int64(step % 9)) : nil,
                    hash: Int64.random(in: .min ... .max, using: &random), owner: owners.randomElement(using: &random)!,
                    section: step % 3 == 0 ? "" : "s\(step % 40)", page: Int.random(in: 0...500, using: &random),
                    record: Int64(step % 1_000), key: step % 4 == 0 ? "" : "key-\(step % 77)")
                entries[path] = record
                oracle[path] = record
            case 5..<7:
                XCTAssertEqual(entries.removeValue(forKey: path), oracle.removeValue(forKey: path), "step \(step)")
            case 7..<9:
                let hash = Int64(step)
                XCTAssertEqual(entries.setHash(hash, of: path), oracle[path] != nil)
                oracle[path]?.hash = hash
            default:
                XCTAssertEqual(entries[path], oracle[path], "step \(step): \(path)")
            }
            XCTAssertEqual(entries.count, oracle.count)
        }
        var seen: [String: PageRecord] = [:]
        entries.forEach { seen[$0] = $1 }
        XCTAssertEqual(seen, oracle)
        var ordered: [String] = []
        entries.forEachInPathOrder { path, record in
            ordered.append(path)
            XCTAssertEqual(record, oracle[path])
        }
        XCTAssertEqual(ordered, oracle.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        for path in paths { XCTAssertEqual(entries[path], oracle[path], path) }
    }
}
