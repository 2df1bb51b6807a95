import Foundation
@testable import SiteRender
import XCTest

/// sitegen's Mustache engine against swift-mustache 2.1.1, which it replaced: random templates and
/// contexts must render to the same bytes, fail to parse together, and name the same unknown variable.
///
/// Deliberate differences, which the generator leaves out and `TemplateEngineTests` pins down:
/// - swift-mustache escapes `"`, `&`, `'`, `<` and `>` only where they stand as a whole `Character`, so one
///   followed by a combining mark (`"\u{301}`) went out unescaped, which can end an HTML attribute early;
///   sitegen escapes every such byte.
/// - `{{.}}` on a strict render's page context printed `SiteRender.StrictRoot` (the old lookup object);
///   it now prints the context, as the lenient render always did.
final class TemplateDifferentialTests: XCTestCase {
    func testRandomTemplatesRenderAsSwiftMustacheRendersThem() throws {
        let baseSeed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 0...UInt64.max >> 1)
        let cases = Int(ProcessInfo.processInfo.environment["SITEGEN_CASES"] ?? "") ?? 3_000
        var parsed = 0, rejected = 0, contextual = 0, strictFailures = 0
        for index in 0..<cases {
            let seed = baseSeed &+ UInt64(index)
            let replay = "seed \(seed) (SITEGEN_SEED=\(seed) SITEGEN_CASES=1 replays it)"
            var random = RandomTemplates(seed: seed)
            let texts = random.templates()
            let context = random.context()
            let knownNames = random.knownNames()
            let listing = texts.map { "--- \($0.name)\n\($0.text.debugDescription)" }.joined(separator: "\n")
            let reference = ReferenceTemplates(texts)
            let templates: TemplateSet
            do {
                templates = try TemplateSet(texts: texts.map { ($0.name, $0.name + ".mustache", $0.text) })
            } catch {
                guard reference == nil else { return XCTFail("\(replay): sitegen rejects what swift-mustache reads: \(error)\n\(listing)") }
                rejected += 1
                continue
            }
            guard let reference else { return XCTFail("\(replay): swift-mustache rejects what sitegen reads\n\(listing)") }
            parsed += 1

            let expected = reference.render("main", context: context)
            let output = try templates.render("main", context: context)
            guard output == expected else {
                return XCTFail("\(replay): outputs differ\n\(listing)\ncontext: \(context)\nswift-mustache: \(expected.debugDescription)\nsitegen:        \(output.debugDescription)")
            }
            if expected != reference.render("main", context: [:]) { contextual += 1 }

            let strict = reference.renderStrictly("main", context: context, knownNames: knownNames)
            do {
                let strictOutput = try templates.render("main", context: context, knownNames: knownNames)
                guard strict.unknownNames.isEmpty else {
                    return XCTFail("\(replay): swift-mustache found unknown names \(strict.unknownNames.sorted()), sitegen none\n\(listing)")
                }
                XCTAssertEqual(strictOutput, strict.output, "\(replay)\n\(listing)")
            } catch {
                strictFailures += 1
                guard case .unknownVariable(let name, _, _, _) = error, name == strict.unknownNames.sorted().first else {
                    return XCTFail("\(replay): sitegen: \(error); swift-mustache's unknown names: \(strict.unknownNames.sorted())\n\(listing)")
                }
            }
        }
        print("template differential: \(cases) cases from seed \(baseSeed): \(parsed) parsed (\(contextual) depending on their context, "
              + "\(strictFailures) with unknown names in a strict render), \(rejected) rejected by both")
        // A replay of one case proves nothing about the generator; a run does.
        guard cases >= 1_000 else { return }
        XCTAssertGreaterThan(Double(contextual), 0.5 * Double(cases), "most cases must render something of their context")
        XCTAssertGreaterThan(rejected, cases / 100, "syntax errors must be exercised too")
        XCTAssertGreaterThan(strictFailures, cases / 10, "strict renders must meet unknown names")
        XCTAssertGreaterThan(parsed - strictFailures, cases / 10, "strict renders must also succeed")
    }
}
