import Foundation
@testable import SiteBuild
import XCTest

/// README.md's five-minute tutorial, run as a newcomer would: its commands and files, exactly as written,
/// each step building without a warning into a site whose every link leads somewhere.
final class ReadmeTutorialTests: XCTestCase {
    /// One step of the tutorial: a shell line, or a file written whole or put into a mapping of sitegen.yml.
    enum Step {
        case command([String])
        case file(path: String, text: String, placement: Placement)
    }

    /// Where a file block's text goes: the whole file, at the end of a top-level mapping (`under=listings`),
    /// or before a top-level key (`before=collections`).
    enum Placement: Equatable { case whole, under(String), before(String) }

    /// The steps of README.md's section "A site in five minutes", in order: ```` ```sh ```` blocks' lines and
    /// blocks with a `file=` attribute after their language.
    static func tutorialSteps() throws -> [Step] {
        let readme = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        let start = try XCTUnwrap(readme.range(of: "## A site in five minutes"))
        let rest = readme[start.upperBound...]
        let section = rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)]
        let blocks = try NSRegularExpression(pattern: "```(\\w+)([^\\n]*)\\n(.*?)```", options: .dotMatchesLineSeparators)
        let text = String(section)
        return blocks.matches(in: text, range: NSRange(text.startIndex..., in: text)).flatMap { match -> [Step] in
            let part = { (index: Int) in String(text[Range(match.range(at: index), in: text)!]) }
            var attributes: [String: String] = [:]
            for pair in part(2).split(separator: " ") {
                let halves = pair.split(separator: "=", maxSplits: 1).map(String.init)
                if halves.count == 2 { attributes[halves[0]] = halves[1] }
            }
            if let path = attributes["file"] {
                let placement: Placement = attributes["under"].map { .under($0) } ?? attributes["before"].map { .before($0) } ?? .whole
                return [.file(path: path, text: part(3), placement: placement)]
            }
            guard part(1) == "sh" else { return [] }
            return part(3).split(separator: "\n").compactMap { line in
                let words = (line.split(separator: "#", maxSplits: 1).first ?? "").split(separator: " ").map(String.init)
                return words.isEmpty ? nil : .command(words)
            }
        }
    }

    func testTheTutorialRunsAsWrittenAndEachStepBuildsWithoutAWarning() throws {
        let steps = try Self.tutorialSteps()
        XCTAssertGreaterThanOrEqual(steps.filter { if case .file = $0 { true } else { false } }.count, 7)
        var folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-tutorial-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { [start = folder] in try? FileManager.default.removeItem(at: start) }
        var builds = 0
        func build(after step: String) throws {
            let summary = try SiteBuilder(root: folder).build()
            XCTAssertTrue(summary.succeeded, "after \(step): \(summary.problems) \(summary.stoppedBy ?? "")")
            XCTAssertEqual(summary.warnings.map(\.description), [], "after \(step)")
            builds += 1
        }
        for step in steps {
            switch step {
            case .command(let words):
                switch (words.first, words.dropFirst().first) {
                case ("cd", let name?): folder.appendPathComponent(name)
                case ("sitegen", "new"): try StarterSite.write(into: folder.appendingPathComponent(words[2]))
                // `serve` builds first, and then serves what it built; the build is what a test can check.
                case ("sitegen", "build"), ("sitegen", "serve"): try build(after: words.joined(separator: " "))
                default: XCTFail("the tutorial has a command this test does not know: \(words.joined(separator: " "))")
                }
            case let .file(path, text, placement):
                let url = folder.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                let written = placement == .whole ? text : try Self.placing(text, placement, in: String(contentsOf: url, encoding: .utf8))
                try written.write(to: url, atomically: true, encoding: .utf8)
                try build(after: "writing \(path)")
            }
        }
        XCTAssertGreaterThanOrEqual(builds, 9)
        let output = folder.appendingPathComponent("output")
        for page in ["posts/hello-again/index.html", "parks/index.html", "parks/yell/index.html", "releases/index.html", "releases/2/index.html"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: output.appendingPathComponent(page).path), "\(page) was not written")
        }
        let parks = try String(contentsOf: output.appendingPathComponent("parks/index.html"), encoding: .utf8)
        XCTAssertTrue(parks.contains(#"<a href="/parks/grca/">Grand Canyon</a>"#), parks)
        let (broken, checked) = try LinkChecker(output: output).brokenLinks()
        XCTAssertEqual(broken.map(\.description), [])
        XCTAssertGreaterThan(checked, 50)
    }

    /// `text` put into `file` (sitegen.yml) at `placement`.
    static func placing(_ text: String, _ placement: Placement, in file: String) throws -> String {
        var lines = file.components(separatedBy: "\n")
        let added = text.components(separatedBy: "\n").dropLast(text.hasSuffix("\n") ? 1 : 0)
        switch placement {
        case .whole: return text
        case .before(let key):
            let index = try XCTUnwrap(lines.firstIndex(of: key + ":"), "sitegen.yml has no \(key):")
            lines.insert(contentsOf: added, at: index)
        case .under(let key):
            let start = try XCTUnwrap(lines.firstIndex(of: key + ":"), "sitegen.yml has no \(key):")
            // The mapping ends at the next line that is neither indented, blank nor a comment.
            var end = lines[(start + 1)...].firstIndex { !($0.isEmpty || $0.hasPrefix(" ") || $0.hasPrefix("#")) } ?? lines.endIndex
            while end > start + 1, lines[end - 1].isEmpty { end -= 1 }
            lines.insert(contentsOf: added, at: end)
        }
        return lines.joined(separator: "\n")
    }
}
