import Foundation
import SiteSources
import XCTest

/// The feedparser test corpus: documents written by others, each stating in an `Expect:` comment what a
/// parser should extract. A sample is kept under Fixtures/feeds/corpus; the whole corpus is read from
/// ../shared/data/feeds when it is there.
final class FeedCorpusTests: XCTestCase {
    /// One checkable clause of an `Expect:` line: item `index` (or the feed, when nil), a field, a value.
    struct Expectation: Equatable {
        var index: Int?
        var field: String
        var value: String
    }

    private static let fieldNames = ["title": "title", "link": "link", "id": "id", "guid": "id", "author": "author",
                                     "summary": "summary", "description": "summary", "content": "content"]

    /// The clauses of `line` that name a field sitegen extracts, with their Python string literals decoded.
    static func expectations(_ line: String) -> [Expectation] {
        let pattern = try! NSRegularExpression(pattern: #"^(?:not bozo and )?(?:entries\[(\d+)\]|feed)\[['"](\w+)['"]\](\[0\]\[['"]value['"]\])?\s*==\s*u?(['"])(.*)\4$"#)
        return line.components(separatedBy: " and ").compactMap { clause in
            let clause = clause.trimmingCharacters(in: .whitespaces)
            let range = NSRange(clause.startIndex..., in: clause)
            guard let match = pattern.firstMatch(in: clause, range: range) else { return nil }
            func group(_ number: Int) -> String? {
                Range(match.range(at: number), in: clause).map { String(clause[$0]) }
            }
            guard let field = group(2).flatMap({ fieldNames[$0] }), let literal = group(5) else { return nil }
            if field == "content", group(3) == nil { return nil }
            let index = group(1).flatMap { Int($0) }
            if index == nil, !["title", "link"].contains(field) { return nil }
            return Expectation(index: index, field: field, value: decodePython(literal))
        }
    }

    /// A Python string literal's escapes (\xNN, \uNNNN, \n, \', \\) as the characters they stand for.
    static func decodePython(_ literal: String) -> String {
        var scalars = String.UnicodeScalarView()
        var iterator = Array(literal.unicodeScalars).makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\", let next = iterator.next() else { scalars.append(scalar); continue }
            switch next {
            case "n": scalars.append("\n")
            case "t": scalars.append("\t")
            case "r": scalars.append("\r")
            case "x", "u":
                let digits = String((0..<(next == "x" ? 2 : 4)).compactMap { _ in iterator.next().map(Character.init) })
                if let value = UInt32(digits, radix: 16), let decoded = Unicode.Scalar(value) { scalars.append(decoded) }
            default: scalars.append(next)
            }
        }
        return String(scalars)
    }

    private func value(_ field: String, of item: FeedItem) -> String? {
        switch field {
        case "title": return item.title
        case "link": return item.link
        case "id": return item.id
        case "author": return item.author
        case "summary": return item.summary
        default: return item.content
        }
    }

    /// Checks every document under `root`; returns the relative paths whose expectations were not met.
    private func check(root: URL) throws -> (mismatches: Set<String>, parsed: Int, documents: Int) {
        var mismatches = Set<String>()
        var parsed = 0, documents = 0
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "xml" }.sorted { $0.path < $1.path }
        for url in files {
            let relative = String(url.path.dropFirst(root.path.count + 1))
            let data = try Data(contentsOf: url)
            documents += 1
            let text = String(decoding: data, as: UTF8.self)
            let expectLine = text.range(of: "Expect:").map { String(text[$0.upperBound...].prefix { $0 != "\n" }).trimmingCharacters(in: .whitespaces) }
            let wellFormed = relative.hasPrefix("wellformed/") && !(expectLine ?? "").hasPrefix("bozo")
            // CDF (Microsoft's Channel Definition Format) is not a dialect sitegen reads.
            let supported = !text.contains("<CHANNEL")
            let outcome = Result { () throws(SourceError) -> FeedDocument in try FeedParser(file: relative).parse(data) }
            guard case .success(let document) = outcome else {
                if wellFormed, supported { mismatches.insert(relative) }
                continue
            }
            parsed += 1
            guard !relative.contains("/sanitize/"), let expectLine else { continue }
            for expectation in Self.expectations(expectLine) {
                let got: String?
                if let index = expectation.index {
                    got = index < document.items.count ? value(expectation.field, of: document.items[index]) : nil
                } else {
                    got = expectation.field == "title" ? document.title : document.link
                }
                if got != expectation.value { mismatches.insert(relative) }
            }
        }
        return (mismatches, parsed, documents)
    }

    private func knownDifferences() throws -> Set<String> {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/feeds/known-differences", withExtension: "txt"))
        return Set(try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") })
    }

    /// Every document read as a stream from its file gives what reading it whole gives: the same records,
    /// warnings and errors (the whole path decodes first; the stream is cleaned and parsed as it is read).
    private func checkStreamingMatchesWholeReads(root: URL) throws -> Int {
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }.filter { ["xml", "json"].contains($0.pathExtension) }.sorted { $0.path < $1.path }
        var streamed = 0
        for url in files {
            let source = FeedSource(url: url, displayName: url.lastPathComponent)
            let data = try Data(contentsOf: url)
            let whole = Result { () throws(SourceError) in try source.read(data) }
            var input = try SourceInput(contentsOf: url, displayName: url.lastPathComponent)
            var prescan = FeedPrescan()
            input.forEachChunk { prescan.feed($0) }
            if prescan.allowsStreaming { streamed += 1 }
            let fromFile = Result { () throws(SourceError) in try source.read() }
            switch (whole, fromFile) {
            case (.success(let a), .success(let b)):
                XCTAssertEqual(a.records, b.records, url.path)
                XCTAssertEqual(a.warnings, b.warnings, url.path)
            case (.failure(let a), .failure(let b)):
                XCTAssertEqual(a, b, url.path)
            default:
                XCTFail("\(url.path): read whole \(whole), streamed \(fromFile)")
            }
        }
        return streamed
    }

    func testEveryFeedStreamedFromItsFileReadsAsWhenReadWhole() throws {
        let sample = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/feeds", withExtension: nil))
        XCTAssertGreaterThan(try checkStreamingMatchesWholeReads(root: sample), 30)
        let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/data/feeds").standardized
        if FileManager.default.fileExists(atPath: shared.path) {
            print("feed corpus: \(try checkStreamingMatchesWholeReads(root: shared)) documents streamed, the same as read whole")
        }
    }

    func testTheFeedparserCorpusSampleMeetsItsExpectations() throws {
        let root = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/feeds/corpus", withExtension: nil))
        let result = try check(root: root)
        XCTAssertGreaterThanOrEqual(result.documents, 40)
        XCTAssertEqual(result.mismatches.subtracting(try knownDifferences()), [], "new differences from the corpus's expectations")
    }

    func testTheWholeSharedCorpusMeetsItsExpectationsOrDiffersAsListed() throws {
        let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/data/feeds").standardized
        guard FileManager.default.fileExists(atPath: shared.path) else { throw XCTSkip("../shared/data/feeds is not here") }
        let result = try check(root: shared)
        let known = try knownDifferences()
        XCTAssertEqual(result.mismatches.subtracting(known).sorted(), [], "new differences from the corpus's expectations")
        XCTAssertEqual(known.subtracting(result.mismatches).sorted(), [], "listed differences that are gone: remove them from known-differences.txt")
        print("feed corpus: \(result.parsed) of \(result.documents) documents parsed; \(known.count) listed differences")
    }
}
