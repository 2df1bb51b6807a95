// Release benchmark of the results controller (issue 4): `swift run -c release ControllerBenchmark [rows]`.
// Prints performFetch time for N rows sectioned by a 50-value key, apply times for 1, 100 and 10,000-row
// changesets (median of several rounds), the restore of a cached snapshot and a one-row catch-up after
// it (as a build does), and memory.
import Foundation
import ResultsController
import SiteStore

let rowCount = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1_000_000 : 1_000_000
let path = FileManager.default.temporaryDirectory.appendingPathComponent("controller-bench-\(getpid()).sqlite").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func residentMiB() -> Double {
    // VmRSS from /proc: the memory held now; ru_maxrss gives the peak.
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

func peakMiB() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_maxrss) / 1024
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let states = (0..<50).map { String(format: "S%02d", $0) }
var generator = SystemRandomNumberGenerator()
let database = try Database(path: path)
try database.executeScript("""
    CREATE TABLE records (id INTEGER PRIMARY KEY, state TEXT NOT NULL, date TEXT NOT NULL, title TEXT NOT NULL, version INTEGER NOT NULL);
    """)
let loadTime = try seconds {
    try database.transaction {
        let insert = try database.makeStatement("INSERT INTO records (id, state, date, title, version) VALUES (?, ?, ?, ?, 0)")
        for id in 1...rowCount {
            let day = Int.random(in: 0..<9000, using: &generator)
            try insert.execute([.integer(Int64(id)), .text(states[Int.random(in: 0..<50, using: &generator)]),
                                .text(String(format: "%04d-%02d-%02d", 2000 + day / 365, day % 12 + 1, day % 28 + 1)),
                                .text("Record \(id)")])
        }
    }
    // Covering: the keys query reads state, date, version and the rowid from the index alone.
    try database.execute("CREATE INDEX records_state_date ON records (state, date DESC, version)")
}
print(String(format: "setup: %d rows inserted and indexed in %.2f s", rowCount, loadTime))

let request = FetchRequest(table: "records", sortDescriptors: [SortDescriptor(key: "state"), SortDescriptor(key: "date", ascending: false)],
                           sectionKey: "state", versionColumn: "version", batchSize: 20)
// SQLite's share of a fetch: the same query, stepping and reading the columns without building anything.
let rawScan = try seconds {
    let statement = try database.makeStatement(
        "SELECT id, version, state, date FROM records ORDER BY state ASC NULLS FIRST, date DESC NULLS LAST, id ASC")
    var checksum: Int64 = 0
    try statement.forEachRow { row in checksum &+= row.int64(at: 0) &+ Int64(row.string(at: 2)?.utf8.count ?? 0) &+ Int64(row.string(at: 3)?.utf8.count ?? 0) }
    precondition(checksum != 0)
}
print(String(format: "the keys query alone (SQLite stepping, columns read): %.3f s", rawScan))
let baseline = residentMiB()
var fetchTimes: [Double] = []
var controller: ResultsController!
for _ in 0..<3 {
    controller = nil
    let fresh = try ResultsController(database: database, request: request)
    fetchTimes.append(try seconds { try fresh.performFetch() })
    controller = fresh
}
let afterFetch = residentMiB()
print(String(format: "performFetch of %d ids in %d sections: median %.3f s (runs: %@)", controller.count, controller.sections.count,
             median(fetchTimes), fetchTimes.map { String(format: "%.3f", $0) }.joined(separator: ", ")))
print(String(format: "memory held by the controller after the fetch: %.0f MiB (%.0f bytes per row)", afterFetch - baseline,
             (afterFetch - baseline) * 1_048_576 / Double(rowCount)))

var nextID = Int64(rowCount + 1)
for size in [1, 100, 10_000] {
    var times: [Double] = []
    var changed = 0
    for _ in 0..<(size == 10_000 ? 5 : 21) {
        // A mix: a third move (new date and state), a third change in place, a sixth inserted, a sixth deleted.
        let changeset = try database.trackingChanges {
            for index in 0..<size {
                let id = Int64.random(in: 1...Int64(rowCount), using: &generator)
                switch index % 6 {
                case 0, 1:
                    try database.execute("UPDATE records SET state = ?, date = ?, version = version + 1 WHERE id = ?",
                                         [.text(states.randomElement(using: &generator)!), .text(String(format: "20%02d-06-15", Int.random(in: 0..<25, using: &generator))), .integer(id)])
                case 2, 3:
                    try database.execute("UPDATE records SET title = title || '!', version = version + 1 WHERE id = ?", [.integer(id)])
                case 4:
                    try database.execute("INSERT INTO records (id, state, date, title, version) VALUES (?, ?, '2024-01-01', 'New', 0)",
                                         [.integer(nextID), .text(states.randomElement(using: &generator)!)])
                    nextID += 1
                default:
                    try database.execute("DELETE FROM records WHERE id = ?", [.integer(id)])
                }
            }
        }.changeset
        var delta = Delta()
        times.append(try seconds { delta = try controller.apply(changeset) })
        changed = delta.rowChangeCount
    }
    print(String(format: "apply of a %d-row changeset: median %.3f ms over %d rounds (last delta: %d row changes)",
                 size, median(times) * 1000, times.count, changed))
}

// A build's way: a new controller restores the cached snapshot, and catches up with one changed row.
try ResultsController(database: database, request: request, cacheName: "bench").performFetch()
var restoreTimes: [Double] = [], catchUpTimes: [Double] = []
for _ in 0..<11 {
    let restored = try ResultsController(database: database, request: request, cacheName: "bench")
    restoreTimes.append(try seconds { try restored.performFetch() })
    let id = Int64.random(in: 1...Int64(rowCount), using: &generator)
    let changeset = try database.trackingChanges {
        try database.execute("UPDATE records SET state = ?, version = version + 1 WHERE id = ?",
                             [.text(states.randomElement(using: &generator)!), .integer(id)])
    }.changeset
    let catchingUp = try ResultsController(database: database, request: request, cacheName: "bench")
    var delta: Delta?
    catchUpTimes.append(try seconds { delta = try catchingUp.performFetch(catchingUpWith: changeset) })
    precondition(delta != nil, "the cache was restored")
    try catchingUp.persistCache()
    try controller.apply(changeset)
}
print(String(format: "restore of the cached snapshot: median %.3f ms; restore and one-row catch-up: median %.3f ms (%d rounds)",
             median(restoreTimes) * 1000, median(catchUpTimes) * 1000, restoreTimes.count))

// The oracle, once: the controller after all those changesets equals a fresh fetch.
let fresh = try ResultsController(database: database, request: request)
try fresh.performFetch()
print("after every changeset the controller equals a fresh fetch: \(fresh.snapshot == controller.snapshot)")
print(String(format: "peak resident memory of the process: %.0f MiB", peakMiB()))
