// Fuzzing the source readers: `scripts/fuzz` builds this with -sanitize=fuzzer,address and -D SITEGEN_FUZZ,
// choosing the reader with SITEGEN_FUZZ_TARGET (feed, csv, frontmatter, json, html). A normal build is a replay
// tool instead: `swift run SourcesFuzzer feed FILE...` runs inputs (crashes found before) through a reader.
import Foundation
import SiteRender
import SiteSources

/// Feeds one input to one reader; every outcome but a crash is fine.
func exercise(_ target: String, _ data: Data) {
    switch target {
    case "feed":
        // Each item's HTML goes on to the sanitizer, as a build publishes it.
        for item in (try? FeedParser(file: "fuzz").parse(data))?.items ?? [] {
            _ = item.content.map(HTMLSanitizer.sanitize)
            _ = item.summary.map(HTMLSanitizer.sanitize)
        }
    case "html":
        _ = HTMLSanitizer.sanitize(String(decoding: data, as: UTF8.self))
    case "csv":
        _ = try? CSVReader(file: "fuzz").read(String(decoding: data, as: UTF8.self))
        _ = try? CSVSource(url: URL(fileURLWithPath: "/dev/null"), displayName: "fuzz", key: "id",
                           fields: [("id", .text), ("n", .integer), ("tags", .list)]).read(data)
    case "frontmatter":
        _ = try? FrontMatterDocument(parsing: String(decoding: data, as: UTF8.self), file: "fuzz")
    case "json":
        var parser = JSONParser(bytes: Array(data))
        _ = try? parser.parseDocument()
        // The same bytes as a record file: an array read a value at a time, and NDJSON.
        let fields: [(name: String, type: FieldType)] = [("id", .text), ("n", .integer), ("tags", .list)]
        let url = URL(fileURLWithPath: "/dev/null")
        _ = try? JSONRecordSource(url: url, displayName: "fuzz", layout: .array, key: "id", fields: fields).read(data)
        _ = try? JSONRecordSource(url: url, displayName: "fuzz", layout: .lines, key: "id", fields: fields).read(data)
    default:
        fatalError("unknown fuzz target '\(target)'; expected feed, csv, frontmatter, json or html")
    }
}

#if SITEGEN_FUZZ
private let fuzzTarget = ProcessInfo.processInfo.environment["SITEGEN_FUZZ_TARGET"] ?? "feed"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    exercise(fuzzTarget, Data(bytes: bytes, count: count))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

// SwiftPM links an executable's entry point as MODULE_main (so tests can link it); here it starts libFuzzer.
@_cdecl("SourcesFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return runFuzzerDriver(&count, &arguments) { bytes, size in fuzzOneInput(bytes, size) }
}
#else
/// Replays inputs through a reader: `SourcesFuzzer feed FILE...`.
@main
struct Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let target = arguments.first else {
            print("usage: SourcesFuzzer feed|csv|frontmatter|json|html FILE...")
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                exit(1)
            }
            exercise(target, data)
            print("ok \(path)")
        }
    }
}
#endif
