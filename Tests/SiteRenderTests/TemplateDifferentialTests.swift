import Foundation
@testable import SiteRender
import TestSupport
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
/// - A page overriding a block its layout does not declare (`{{$contents}}` for the layout's `{{$content}}`)
///   rendered the layout's default; sitegen refuses the templates (`TemplateError.unknownBlock`). The
///   generator still writes such pages, and the test counts them.
/// - sitegen's helpers (`json`, `xml`, `absolute`, `date`…) apply to every kind of value; swift-mustache
///   had them on a record's text only and printed nothing for a string, number, boolean or list. The
///   generator applies them to a record's text or a missing name; `TemplateEngineTests` pins the rest down.
final class TemplateDifferentialTests: XCTestCase {
    func testRandomTemplatesRenderAsSwiftMustacheRendersThem() throws {
        let baseSeed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 0...UInt64.max >> 1)
        let cases = Int(ProcessInfo.processInfo.environment["SITEGEN_CASES"] ?? "") ?? 3_000
        var parsed = 0, rejected = 0, contextual = 0, strictFailures = 0, dottedFailures = 0, unknownBlocks = 0
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
                if case .unknownBlock = error, reference != nil {
                    unknownBlocks += 1
                    continue
                }
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
                if case .missingChosenPartial(let name, _, _, _, _, let available, _) = error {
                    // Stricter by design: a dynamic partial (`{{>*which}}`) whose value names no template is an
                    // error at its tag, where swift-mustache prints nothing.
                    guard !available.contains(name) else { return XCTFail("\(replay): sitegen: \(error)\n\(listing)") }
                    continue
                }
                // sitegen is stricter than the old render in one way: a dotted name whose last part is missing
                // under a value that is there (`site.titl`) is misspelt too, unless that part is a known name.
                // The other unknown names must be the old render's, and the error names the first of all.
                let all = templates.unknownNames(rendering: "main", context: context, knownNames: knownNames)
                let dotted = all.filter { $0.contains(".") }
                guard dotted.allSatisfy({ !knownNames.contains(String($0.split(separator: ".").last!)) }),
                      all.subtracting(dotted) == strict.unknownNames
                else {
                    return XCTFail("\(replay): sitegen's unknown names \(all.sorted()), swift-mustache's \(strict.unknownNames.sorted())\n\(listing)")
                }
                if !dotted.isEmpty { dottedFailures += 1 }
                guard case .unknownVariable(let name, _, _, _) = error, name == all.min() else {
                    return XCTFail("\(replay): sitegen: \(error); its unknown names: \(all.sorted())\n\(listing)")
                }
            }
        }
        print("template differential: \(cases) cases from seed \(baseSeed): \(parsed) parsed (\(contextual) depending on their context, "
              + "\(strictFailures) with unknown names in a strict render, \(dottedFailures) of them dotted), \(rejected) rejected by both, "
              + "\(unknownBlocks) by sitegen alone for overriding a block the layout lacks")
        // A replay of one case proves nothing about the generator; a run does.
        guard cases >= 1_000 else { return }
        XCTAssertGreaterThan(Double(contextual), 0.5 * Double(cases), "most cases must render something of their context")
        XCTAssertGreaterThan(rejected, cases / 100, "syntax errors must be exercised too")
        XCTAssertGreaterThan(strictFailures, cases / 10, "strict renders must meet unknown names")
        XCTAssertGreaterThan(parsed - strictFailures, cases / 10, "strict renders must also succeed")
    }

    /// A record (`TemplateRecord`) renders as the dictionary it stands for: random templates over random
    /// contexts whose dictionaries are records, with their names in another order and absent names among
    /// them, against the same contexts as dictionaries.
    ///
    /// Where a template prints a dictionary whole (`{{d}}`), the order of its pairs is that of its hash
    /// table, which Swift seeds per instance: two equal dictionaries print them in different orders. There
    /// the two outputs must hold the same characters. A case whose templates enumerate a dictionary
    /// (`{{last(enumerated(d))}}` picks a pair by its place in that order) is left out.
    func testRecordsRenderAsTheDictionariesTheyStandFor() throws {
        let baseSeed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 0...UInt64.max >> 1)
        var random = SeededGenerator(seed: baseSeed)
        var records = 0, compared = 0, unordered = 0
        func check(_ output: String, _ expected: String, _ message: @autoclosure () -> String) {
            guard output != expected else { return }
            unordered += 1
            if output.sorted() != expected.sorted() { XCTFail("\(output.debugDescription)\nagainst dictionaries:\n\(expected.debugDescription)\n\(message())") }
        }
        var absentNames: [String] = []
        func recorded(_ value: Any) -> Any {
            if let dictionary = value as? [String: Any] {
                records += 1
                var names = dictionary.keys.shuffled(using: &random)
                var values: [Any?] = names.map { dictionary[$0].map(recorded) }
                // A name the record has no value for prints nothing. It hides the same name further out (an
                // empty field is the record's, not the page's), which an absent key does not: only names no
                // scope has, and known to a strict render, are left without a value here.
                for absent in absentNames where dictionary[absent] == nil && Bool.random(using: &random) {
                    let at = Int.random(in: 0...names.count, using: &random)
                    names.insert(absent, at: at)
                    values.insert(nil, at: at)
                }
                return TemplateRecord(names: names, values: values)
            }
            if let dictionaries = value as? [[String: Any]] { return dictionaries.map { recorded($0) as! TemplateRecord } }
            return value
        }
        for index in 0..<1_000 {
            let seed = baseSeed &+ UInt64(index)
            var generator = RandomTemplates(seed: seed)
            let texts = generator.templates()
            let context = generator.context()
            let knownNames = generator.knownNames()
            absentNames = knownNames.contains("missing") ? ["missing", "x"] : ["x"]
            guard !texts.contains(where: { $0.text.contains("enumerated") }),
                let templates = try? TemplateSet(texts: texts.map { ($0.name, $0.name + ".mustache", $0.text) })
            else { continue }
            let withRecords = context.mapValues(recorded)
            let asDictionaries = withRecords.mapValues(TemplateRecord.plain)
            let listing = texts.map { "--- \($0.name)\n\($0.text.debugDescription)" }.joined(separator: "\n")
            let expected = try templates.render("main", context: asDictionaries)
            check(try templates.render("main", context: withRecords), expected, "seed \(baseSeed), case \(index)\n\(listing)")
            let strictExpected = Result { try templates.render("main", context: asDictionaries, knownNames: knownNames) }
            let strict = Result { try templates.render("main", context: withRecords, knownNames: knownNames) }
            switch (strict, strictExpected) {
            case (.success(let output), .success(let expected)): check(output, expected, "seed \(baseSeed), case \(index)\n\(listing)")
            case (.failure(let error), .failure(let expected)): XCTAssertEqual("\(error)", "\(expected)", "seed \(baseSeed), case \(index)")
            default: XCTFail("seed \(baseSeed), case \(index): strict renders disagree: \(strict) against \(strictExpected)\n\(listing)")
            }
            compared += 1
        }
        XCTAssertGreaterThan(compared, 500, "seed \(baseSeed)")
        // Two outputs a case, lenient and strict: most must be equal byte for byte.
        XCTAssertLessThan(unordered, compared / 2, "seed \(baseSeed): most outputs must not depend on a dictionary's order")
        XCTAssertGreaterThan(records, 2_000, "seed \(baseSeed): the contexts must hold records")
    }
}
