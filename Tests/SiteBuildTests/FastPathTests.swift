import Foundation
@testable import SiteBuild
import TestSupport
import XCTest

/// Shortcuts taken for speed against the general code they stand in for.
final class FastPathTests: XCTestCase {
    func testASCIISlugsMatchTheUnicodeSlugs() {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 1...999_999)
        var random = SeededGenerator(seed: seed)
        let alphabet = Array("aZ09 -_./:{}#?%!~\t\u{7F}\u{1}Qz")
        for _ in 0..<5000 {
            let text = String((0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            XCTAssertEqual(slugify(text), unicodeSlug(text), "seed \(seed): \(text.debugDescription)")
        }
        XCTAssertEqual(slugify("Ashburg Community Bank — closes"), "ashburg-community-bank-closes")
        XCTAssertEqual(slugify("\u{212A}elvin"), "kelvin", "the Kelvin sign lower-cases to an ASCII k")
    }

    func testTheBasePathMatchesTheURLParser() throws {
        for baseURL in ["https://records.example.org/", "https://records.example.org", "https://x.org/sub/site/",
                        "http://x.org:8080/a/b", "https://x.org/my%20site/", "https://x.org/a?b=c", "https://x.org/a#f",
                        "/relative/", "file:///srv/site/", "https://user@x.org/p/"] {
            var config = try SiteConfig(yaml: """
                title: T
                baseURL: https://example.org/
                collections:
                  notes: {kind: markdown, sources: notes/*.md}
                """, file: "sitegen.yml")
            config.baseURL = baseURL
            let path = URL(string: baseURL)?.path ?? "/"
            XCTAssertEqual(config.basePath, path.hasSuffix("/") ? path : path + "/", baseURL)
        }
    }
}
