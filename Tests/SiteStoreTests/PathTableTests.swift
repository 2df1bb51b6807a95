import Foundation
import SiteStore
import TestSupport
import XCTest

/// `PathTable` numbers paths as a dictionary and an array of paths do (the oracle), through many doublings of
/// its table, and sorts numbers in the byte order of their paths.
final class PathTableTests: XCTestCase {
    func testNumbersAreWhatADictionaryAndAnArrayOfPathsGive() {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 1...999_999)
        var random = SeededGenerator(seed: seed)
        let context = "seed \(seed) (SITEGEN_SEED=\(seed) replays it)"
        // Pieces whose mixes share prefixes, end inside one another, are empty, or go beyond ASCII. "é" is
        // there composed and decomposed: equal as Swift strings, two paths as bytes. So the oracle is keyed by
        // the bytes, not by the string.
        let pieces = ["", "/", "a", "a/", "index.html", "banks", "états", "e\u{301}tats", "日本", "🙂", "\u{7f}", "\u{80}", "z"]
        func randomPath() -> String {
            var path = ""
            for _ in 0..<Int.random(in: 0...4, using: &random) { path += pieces.randomElement(using: &random)! }
            if Bool.random(using: &random) { path += String(Int.random(in: 0..<3_000, using: &random)) }
            return path
        }
        let pool = (0..<12_000).map { _ in randomPath() }
        var table = PathTable()
        var numbers: [[UInt8]: Int] = [:]
        var paths: [String] = []

        /// Every path inserted has its number both ways; paths never inserted (none has a "~") have none.
        func checkAll(_ when: String) {
            XCTAssertEqual(table.count, paths.count, "\(context), \(when)")
            for (number, path) in paths.enumerated() {
                XCTAssertEqual(table.number(of: path), number, "\(context), \(when): \(path)")
                XCTAssertEqual(Array(table.path(at: number).utf8), Array(path.utf8), "\(context), \(when): \(number)")
            }
            for _ in 0..<200 {
                let path = randomPath() + "~"
                XCTAssertNil(table.number(of: path), "\(context), \(when): \(path)")
            }
        }

        for step in 0..<30_000 {
            // Early steps draw from a few paths, so the same ones come back often; later ones from all.
            let path = pool[Int.random(in: 0..<(step < 2_000 ? 50 : pool.count), using: &random)]
            let known = numbers[Array(path.utf8)]
            let (number, inserted) = table.insert(path)
            XCTAssertEqual(inserted, known == nil, "\(context), step \(step): \(path)")
            XCTAssertEqual(number, known ?? paths.count, "\(context), step \(step): \(path)")
            if known == nil {
                numbers[Array(path.utf8)] = number
                paths.append(path)
            }
            XCTAssertEqual(table.count, paths.count, "\(context), step \(step)")
            XCTAssertEqual(table.number(of: path), number, "\(context), step \(step): \(path)")
            // Just after the table doubled (at 9, 17, 33... paths), every path must still be found.
            if inserted, (paths.count - 1) & (paths.count - 2) == 0 { checkAll("step \(step), \(paths.count) paths") }
        }
        XCTAssertGreaterThan(paths.count, 4_096, "\(context): too few paths to double the table ten times")
        checkAll("the end")

        var all = Array(0..<table.count).shuffled(using: &random)
        table.sortInPathOrder(&all)
        let inByteOrder = paths.indices.sorted { Array(paths[$0].utf8).lexicographicallyPrecedes(Array(paths[$1].utf8)) }
        // The first place that differs, not two arrays of thousands, in the message.
        if let at = all.indices.first(where: { all[$0] != inByteOrder[$0] }) {
            XCTFail("\(context): \(paths[all[at]]) sorted at \(at), where \(paths[inByteOrder[at]]) belongs")
        }
        // Some numbers twice, some not at all: the paths come out in byte order all the same.
        let drawn = (0..<2_000).map { _ in Int.random(in: 0..<table.count, using: &random) }
        var some = drawn
        table.sortInPathOrder(&some)
        XCTAssertEqual(some.sorted(), drawn.sorted(), context)
        if let at = some.indices.dropFirst().first(where: { Array(paths[some[$0]].utf8).lexicographicallyPrecedes(Array(paths[some[$0 - 1]].utf8)) }) {
            XCTFail("\(context): \(paths[some[at - 1]]) sorted before \(paths[some[at]])")
        }
    }
}
