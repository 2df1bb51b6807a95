// Release benchmark of loading (issue 5):
//   swift run -c release LoadBenchmark [ROWS] [CORPUS_FOLDER]
// Loads ROWS (default 1,000,000) NDJSON records of ../shared/bench/gen_corpus.py into a fresh store, then
// reloads the unchanged file, then reloads it touched (same bytes, new time), each in its own process, and
// prints wall time, rows/s, CPU time and peak memory of each, beside the floor: the same file's lines
// inserted as they are (one text column, no parsing) into a fresh SQLite table in one transaction.
// The corpus is generated into CORPUS_FOLDER (default $TMPDIR/sitegen-bench/data-ROWS) when it is missing.
import Foundation
import SiteBuild
import SiteSources
import SiteStore

/// What a child process measured of itself.
struct Measurement: Codable {
    var rows = 0
    var cpuSeconds = 0.0
    var peakMiB = 0.0
    var detail = ""
}

func selfUsage(rows: Int, detail: String) -> Measurement {
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    return Measurement(rows: rows, cpuSeconds: cpu, peakMiB: Double(usage.ru_maxrss) / 1024, detail: detail)
}

func printJSON(_ measurement: Measurement) {
    print(String(decoding: try! JSONEncoder().encode(measurement), as: UTF8.self))
}

let arguments = CommandLine.arguments

// Child: load the site, or insert the floor.
if arguments.count == 4, arguments[1] == "--child" {
    let site = URL(fileURLWithPath: arguments[3])
    switch arguments[2] {
    case "load":
        let summary = try SiteBuilder(root: site).loadSources()
        guard summary.succeeded else { fatalError("load failed: \(summary.problems)") }
        printJSON(selfUsage(rows: summary.rowsInserted + summary.rowsUpdated,
                            detail: "files read \(summary.sourcesRead), unchanged \(summary.sourcesUnchanged)"))
    default:
        let path = site.appendingPathComponent("floor.sqlite").path
        let store = try SiteStore(path: path)
        try store.database.execute("CREATE TABLE floor (_id INTEGER PRIMARY KEY, _key TEXT NOT NULL UNIQUE, line TEXT NOT NULL)")
        var rows = 0
        try store.bulkWriting {
            try store.transaction {
                let insert = try store.database.makeStatement("INSERT INTO floor (_key, line) VALUES (?, ?)")
                var input = try SourceInput(contentsOf: site.appendingPathComponent("records.ndjson"), displayName: "records.ndjson")
                var failure: (any Error)?
                input.forEachLine { line, number in
                    guard failure == nil else { return }
                    rows += 1
                    do {
                        try insert.execute([.text("r\(number)"), .text(String(decoding: line, as: UTF8.self))])
                    } catch {
                        failure = error
                    }
                }
                if let failure { throw failure }
            }
        }
        printJSON(selfUsage(rows: rows, detail: "raw lines"))
    }
    exit(0)
}

let rowCount = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let temporary = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
let corpus = URL(fileURLWithPath: arguments.count > 2 ? arguments[2] : "\(temporary)/sitegen-bench/data-\(rowCount)")
let records = corpus.appendingPathComponent("records.ndjson")

func run(_ executable: String, _ arguments: [String]) throws -> (seconds: Double, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    let start = DispatchTime.now().uptimeNanoseconds
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    guard process.terminationStatus == 0 else { fatalError("\(executable) \(arguments) exited \(process.terminationStatus)") }
    return (seconds, String(decoding: output, as: UTF8.self))
}

let generated = (try? JSONSerialization.jsonObject(with: Data(contentsOf: corpus.appendingPathComponent("corpus.json")))) as? [String: Any]
if !FileManager.default.fileExists(atPath: records.path) || generated?["n"] as? Int != rowCount {
    let generator = ProcessInfo.processInfo.environment["SITEGEN_CORPUS_GENERATOR"] ?? "../shared/bench/gen_corpus.py"
    FileHandle.standardError.write(Data("generating \(rowCount) records into \(corpus.path) (minutes for a million)\n".utf8))
    _ = try run("/usr/bin/env", ["python3", generator, corpus.path, String(rowCount), "--forms", "data"])
}

let site = URL(fileURLWithPath: "\(temporary)/sitegen-load-bench-\(getpid())")
try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: site) }
try FileManager.default.createSymbolicLink(at: site.appendingPathComponent("records.ndjson"), withDestinationURL: records)
try """
    title: Load benchmark
    collections:
      records:
        kind: ndjson
        sources: records.ndjson
        key: id
        fields: {id: text, title: text, date: datetime, state: text, city: text, tags: list, url: text, summary: text, body: text, slug: text}
    listings:
      home: {from: records, sort: [-date], path: /}
    """.write(to: site.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)

let bytes = (try FileManager.default.attributesOfItem(atPath: records.path)[.size] as? NSNumber)?.int64Value ?? 0
let executable = CommandLine.arguments[0].hasPrefix("/") ? CommandLine.arguments[0]
    : FileManager.default.currentDirectoryPath + "/" + CommandLine.arguments[0]
print(String(format: "corpus: %d NDJSON records, %.1f MiB (%@)", rowCount, Double(bytes) / 1_048_576, records.path))

func report(_ name: String, _ result: (seconds: Double, output: String), rows expected: Int? = nil) -> Measurement {
    let measurement = try! JSONDecoder().decode(Measurement.self, from: Data(result.output.utf8))
    let rate = expected.map { Double($0) / result.seconds } ?? Double(measurement.rows) / result.seconds
    print(String(format: "%@: %.2f s wall, %.2f s CPU, %.0f rows/s, peak %.0f MiB (%@, %d rows written)",
                 name, result.seconds, measurement.cpuSeconds, rate, measurement.peakMiB, measurement.detail, measurement.rows))
    return measurement
}

let first = try run(executable, ["--child", "load", site.path])
_ = report("load into a fresh store", first)
let unchanged = try run(executable, ["--child", "load", site.path])
_ = report("reload, file unchanged", unchanged, rows: rowCount)
var times = [timeval(tv_sec: time(nil), tv_usec: 0), timeval(tv_sec: time(nil), tv_usec: 0)]
utimes(records.path, &times)
let touched = try run(executable, ["--child", "load", site.path])
_ = report("reload, file touched (same bytes)", touched, rows: rowCount)
let floor = try run(executable, ["--child", "floor", site.path])
_ = report("floor: the lines inserted as they are", floor)
print(String(format: "load / floor: %.2f", first.seconds / floor.seconds))
