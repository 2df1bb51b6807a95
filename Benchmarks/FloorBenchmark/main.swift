// Release benchmark of the physical floors of a full build (issue 8): what the work a build cannot avoid
// costs on this machine, with nothing of sitegen's own in it.
//
//   swift run -c release FloorBenchmark SOURCES OUTPUT WORK [--threads T] [--json FILE]
//   swift run -c release FloorBenchmark --incremental REPORT SOURCES OUTPUT WORK [--threads T] [--json FILE]
//
// SOURCES is a folder of Markdown files with front matter (gen_corpus.py's md/), OUTPUT a built site
// (sitegen's output/ of those sources), WORK a scratch folder, best a new one: it is emptied first and
// left full at the end. (On ext4 the first files made after a large tree is deleted are made several
// times slower; a deletion here, before or after, would fall into this run's or the next one's timing.)
// Three floors, each timed alone, and their sum:
//   write files    OUTPUT's files written again under WORK/output, same paths and bytes, each through a
//                  temporary file and a rename, as sitegen writes pages, without fsync (nor does sitegen);
//                  the bytes are read into memory beforehand, untimed, 64 MiB at a time
//   sqlite insert  every record's front matter fields and body into one table of a fresh database, one
//                  transaction, one prepared statement, in the mode of sitegen's large loads (rollback
//                  journal, which writes a new database's pages once; synchronous = NORMAL; 64 MiB cache)
//   cmark render   every body through cmark-gfm with the options and extensions of sitegen's
//                  MarkdownRenderer (without its heading anchors, which are sitegen's own work), parsed
//                  one at a time as there (cmark-gfm's parser is not safe to run twice at once), rendered
//                  to HTML in parallel
// Reading the sources, with front matter split from body by a plain `---` search and `key: value` lines
// (no YAML: a floor should not pay for parsing it), is timed and printed too but not counted in the sum.
// Writing and rendering use T threads (default: the cores, as sitegen's render workers do); SQLite
// inserts from one. `scripts/bench-vs-hugo` runs this beside full builds of sitegen and Hugo.
//
// With --incremental, the floor of an incremental build instead (IncrementalFloor.swift): REPORT is the
// `sitegen build --report` file of an incremental build of SOURCES into OUTPUT, and WORK a folder that
// an earlier run left full (its output/ holds the site before that build). Two floors and their sum:
//   scan sources   the status (fstatat) of every file under SOURCES: a build in a new process finds what
//                  changed no cheaper
//   replace files  the files REPORT says were written, OUTPUT's bytes, replacing WORK/output's as
//                  sitegen's spare files do (written into files whose blocks are allocated, then swapped
//                  in by renameat2 exchange; decisions.md 12), and the files it deleted, renamed away
import CCmarkGFM
import CSQLite
import Foundation

/// A failure that stops the benchmark, with what went wrong and where.
struct FloorError: Error, CustomStringConvertible {
    /// What went wrong, naming the file or statement at fault.
    let description: String
}

/// Wall and CPU time of one timed step.
struct Timing: Codable {
    /// Elapsed seconds.
    var wallSeconds = 0.0
    /// User plus system seconds of the whole process (every thread) over the step.
    var cpuSeconds = 0.0

    static func + (left: Timing, right: Timing) -> Timing {
        Timing(wallSeconds: left.wallSeconds + right.wallSeconds, cpuSeconds: left.cpuSeconds + right.cpuSeconds)
    }
}

/// Times `body` by the monotonic clock and the process's CPU accounting.
func timed<T>(_ body: () throws -> T) rethrows -> (T, Timing) {
    func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
    func cpu() -> Double {
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
    let (wall, processor) = (now(), cpu())
    let result = try body()
    return (result, Timing(wallSeconds: now() - wall, cpuSeconds: cpu() - processor))
}

/// Runs `work(worker)` on `threads` threads at once and waits for all of them.
func onThreads(_ threads: Int, _ work: @Sendable (Int) -> Void) {
    DispatchQueue.concurrentPerform(iterations: threads, execute: work)
}

/// One slot per worker thread, each written by its own worker only.
final class PerWorker<Value>: @unchecked Sendable {
    private var values: [Value]

    init(_ count: Int, _ initial: Value) {
        values = Array(repeating: initial, count: count)
    }

    subscript(worker: Int) -> Value {
        get { values.withUnsafeBufferPointer { $0[worker] } }
        set { values.withUnsafeMutableBufferPointer { $0[worker] = newValue } }
    }

    var all: [Value] { values }
}

// MARK: - Sources

/// A Markdown source split into its front matter's `key: value` lines and its body.
struct SourceRecord: Sendable {
    /// The file's name without `.md`, the record's key as in sitegen.
    var key: String
    /// The front matter's `key: value` lines in file order, values as written (quotes and brackets kept).
    var fields: [(name: String, value: String)]
    /// The Markdown after the closing `---`.
    var body: [UInt8]
}

let newline = UInt8(ascii: "\n")

/// Splits a file at its `---` lines without parsing YAML: the floor should not pay for what it does not need.
func split(_ bytes: [UInt8], key: String) -> SourceRecord {
    let fence: [UInt8] = Array("---\n".utf8)
    guard bytes.starts(with: fence) else { return SourceRecord(key: key, fields: [], body: bytes) }
    var fields: [(name: String, value: String)] = []
    var lineStart = fence.count
    while lineStart < bytes.count {
        let lineEnd = bytes[lineStart...].firstIndex(of: newline) ?? bytes.count
        let line = bytes[lineStart..<lineEnd]
        if line.elementsEqual(fence.dropLast()) {
            return SourceRecord(key: key, fields: fields, body: Array(bytes[min(lineEnd + 1, bytes.count)...]))
        }
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            let value = line[(colon + 1)...].drop { $0 == UInt8(ascii: " ") }
            fields.append((String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        lineStart = lineEnd + 1
    }
    return SourceRecord(key: key, fields: fields, body: [])
}

/// Reads every `*.md` file of `folder`, in name order.
func readSources(in folder: String) throws -> [SourceRecord] {
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".md") }.sorted()
    return try names.map { name in
        guard let data = FileManager.default.contents(atPath: folder + "/" + name) else {
            throw FloorError(description: "\(folder)/\(name): cannot be read")
        }
        return split([UInt8](data), key: String(name.dropLast(3)))
    }
}

// MARK: - Floor: write files

/// A file of the built site: its path relative to the site's folder and its size.
struct OutputFile {
    var path: String
    var size: Int
}

/// What writing the site again did.
struct WriteFigures: Codable {
    var files = 0
    var bytes = 0
    var folders = 0
}

/// Every regular file under `root`, in path order.
func listFiles(under root: String) throws -> [OutputFile] {
    guard let walker = FileManager.default.enumerator(atPath: root) else {
        throw FloorError(description: "\(root): cannot be listed")
    }
    var files: [OutputFile] = []
    while let path = walker.nextObject() as? String {
        guard walker.fileAttributes?[.type] as? FileAttributeType == .typeRegular else { continue }
        files.append(OutputFile(path: path, size: (walker.fileAttributes?[.size] as? NSNumber)?.intValue ?? 0))
    }
    return files.sorted { $0.path < $1.path }
}

/// Writes `bytes` to a temporary file beside `path` and renames it over `path`, as sitegen's OutputWriter
/// does, with plain system calls and no fsync.
func replace(_ path: String, with bytes: [UInt8], worker: Int) -> Bool {
    let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
    let temporary = "\(path[..<slash]).\(path[slash...]).floor-\(getpid())-\(worker).tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return false }
    let complete = bytes.withUnsafeBytes { buffer -> Bool in
        var offset = 0
        while offset < buffer.count {
            let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
    close(descriptor)
    return complete && rename(temporary, path) == 0
}

/// Writes `source`'s files again under `destination` (made anew): folders first, then the files a batch
/// at a time. Only the folder making and the writing are timed, not reading a batch into memory.
func writeFloor(from source: String, to destination: String, threads: Int) throws -> (WriteFigures, Timing) {
    let files = try listFiles(under: source)
    var folders = Set<String>()
    for file in files {
        var folder = (file.path as NSString).deletingLastPathComponent
        while !folder.isEmpty, folders.insert(folder).inserted {
            folder = (folder as NSString).deletingLastPathComponent
        }
    }
    // Parents sort before their children, so each mkdir finds its parent made.
    let orderedFolders = folders.sorted()
    var timing = Timing()
    let (_, folderTiming) = try timed {
        guard mkdir(destination, 0o755) == 0 else { throw FloorError(description: "\(destination): cannot be made") }
        for folder in orderedFolders where mkdir(destination + "/" + folder, 0o755) != 0 {
            throw FloorError(description: "\(destination)/\(folder): cannot be made")
        }
    }
    timing = timing + folderTiming
    let batchBytes = 64 << 20
    var start = 0
    while start < files.count {
        var end = start
        var size = 0
        while end < files.count, end == start || size + files[end].size <= batchBytes {
            size += files[end].size
            end += 1
        }
        let batch = files[start..<end].map(\.path)
        let contents = try batch.map { path -> [UInt8] in
            guard let data = FileManager.default.contents(atPath: source + "/" + path) else {
                throw FloorError(description: "\(source)/\(path): cannot be read")
            }
            return [UInt8](data)
        }
        let failures = PerWorker<String?>(threads, nil)
        let (_, batchTiming) = timed {
            onThreads(threads) { worker in
                for index in stride(from: worker, to: batch.count, by: threads)
                where !replace(destination + "/" + batch[index], with: contents[index], worker: worker) {
                    failures[worker] = "\(destination)/\(batch[index]): cannot be written: \(String(cString: strerror(errno)))"
                    return
                }
            }
        }
        if let failure = failures.all.compactMap({ $0 }).first { throw FloorError(description: failure) }
        timing = timing + batchTiming
        start = end
    }
    return (WriteFigures(files: files.count, bytes: files.reduce(0) { $0 + $1.size }, folders: folders.count), timing)
}

// MARK: - Floor: SQLite


/// The SQLite C API's result `code`, or a thrown error with the database's message.
func check(_ code: Int32, _ database: OpaquePointer?, _ what: String, expecting expected: Int32 = SQLITE_OK) throws {
    guard code == expected else {
        throw FloorError(description: "\(what): \(database.map { String(cString: sqlite3_errmsg($0)) } ?? "code \(code)")")
    }
}

/// Inserts every record (key, front matter fields, body) into a new table of a new database at `path`,
/// in one transaction through one prepared statement; the time includes opening and closing it.
func sqliteFloor(_ records: [SourceRecord], fields: [String], path: String) throws -> Timing {
    for suffix in ["", "-journal", "-wal", "-shm"] { unlink(path + suffix) }
    // SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
    let SQLITE_TRANSIENT = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
    let (_, timing) = try timed {
        var database: OpaquePointer?
        try check(sqlite3_open(path, &database), database, "open \(path)")
        defer { sqlite3_close(database) }
        let columns = fields.map { "\"\($0)\" TEXT" }.joined(separator: ", ")
        try check(sqlite3_exec(database, """
            PRAGMA journal_mode = DELETE; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;
            CREATE TABLE records (_id INTEGER PRIMARY KEY, _key TEXT NOT NULL UNIQUE, \(columns), body TEXT);
            BEGIN;
            """, nil, nil, nil), database, "create the table")
        let sql = "INSERT INTO records (_key, \(fields.map { "\"\($0)\"" }.joined(separator: ", ")), body) VALUES (?\(String(repeating: ", ?", count: fields.count + 1)))"
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(database, sql, -1, &statement, nil), database, sql)
        defer { sqlite3_finalize(statement) }
        for record in records {
            // A Swift string's C form lives only through the call: SQLite copies it (SQLITE_TRANSIENT).
            sqlite3_bind_text(statement, 1, record.key, -1, SQLITE_TRANSIENT)
            for (index, field) in fields.enumerated() {
                if let value = record.fields.first(where: { $0.name == field })?.value {
                    sqlite3_bind_text(statement, Int32(index + 2), value, -1, SQLITE_TRANSIENT)
                } else {
                    sqlite3_bind_null(statement, Int32(index + 2))
                }
            }
            try record.body.withUnsafeBufferPointer { body in
                try body.withMemoryRebound(to: CChar.self) { text in
                    // SQLITE_STATIC (nil): the body outlives the step, so SQLite need not copy it first.
                    sqlite3_bind_text(statement, Int32(fields.count + 2), text.baseAddress, Int32(text.count), nil)
                    try check(sqlite3_step(statement), database, "insert \(record.key)", expecting: SQLITE_DONE)
                }
            }
            sqlite3_reset(statement)
        }
        try check(sqlite3_exec(database, "COMMIT", nil, nil, nil), database, "commit")
    }
    return timing
}

// MARK: - Floor: cmark-gfm

/// Renders every body to HTML with cmark-gfm on `threads` threads, parsing one body at a time as sitegen
/// does; returns the bytes of HTML made.
///
/// The options and extensions are those of SiteRender's MarkdownRenderer for a site without `unsafe: true`
/// (the benchmark site): footnotes, tables, strikethrough, autolinks, task lists and the tag filter.
func cmarkFloor(_ records: [SourceRecord], threads: Int) -> (Int, Timing) {
    cmark_gfm_core_extensions_ensure_registered()
    let options = CMARK_OPT_FOOTNOTES | CMARK_OPT_TABLE_PREFER_STYLE_ATTRIBUTES
    let extensionNames = ["table", "strikethrough", "autolink", "tasklist", "tagfilter"]
    let htmlBytes = PerWorker(threads, 0)
    let parsing = NSLock()
    let (_, timing) = timed {
        onThreads(threads) { worker in
            let extensions = extensionNames.compactMap { cmark_find_syntax_extension($0) }
            for index in stride(from: worker, to: records.count, by: threads) {
                guard let parser = cmark_parser_new(options) else { continue }
                defer { cmark_parser_free(parser) }
                for handle in extensions { cmark_parser_attach_syntax_extension(parser, handle) }
                // cmark-gfm's inline parser shares a process-wide special-character table that concurrent parses
                // corrupt (dropping strikethrough and autolinks), so sitegen parses one document at a time and
                // renders in parallel; so does the floor.
                let parsed = parsing.withLock { () -> OpaquePointer? in
                    records[index].body.withUnsafeBufferPointer { body in
                        body.withMemoryRebound(to: CChar.self) { cmark_parser_feed(parser, $0.baseAddress, $0.count) }
                    }
                    return cmark_parser_finish(parser)
                }
                guard let document = parsed else { continue }
                defer { cmark_node_free(document) }
                guard let html = cmark_render_html(document, options, cmark_parser_get_syntax_extensions(parser)) else { continue }
                htmlBytes[worker] += strlen(html)
                free(html)
            }
        }
    }
    return (htmlBytes.all.reduce(0, +), timing)
}

// MARK: - Main

/// Every figure of one run, as `--json` writes it.
struct FloorReport: Codable {
    var threads: Int
    var sources: Int
    var sourceBytes: Int
    var read: Timing
    var write: Timing
    var written: WriteFigures
    var sqlite: Timing
    var sqliteRows: Int
    var cmark: Timing
    var htmlBytes: Int
    var sumSeconds: Double
}

func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }

func line(_ label: String, _ timing: Timing, _ detail: String) {
    print(label.padding(toLength: 15, withPad: " ", startingAt: 0)
          + String(format: "%8.3f s wall %8.3f s cpu   ", timing.wallSeconds, timing.cpuSeconds) + detail)
}

func run(_ arguments: [String]) throws {
    var positional: [String] = []
    var threads = ProcessInfo.processInfo.activeProcessorCount
    var jsonPath: String?
    var incrementalReport: String?
    var index = 0
    while index < arguments.count {
        switch arguments[index] {
        case "--threads" where index + 1 < arguments.count:
            guard let count = Int(arguments[index + 1]), count > 0 else {
                throw FloorError(description: "--threads takes a positive number, not \(arguments[index + 1])")
            }
            threads = count
            index += 1
        case "--json" where index + 1 < arguments.count:
            jsonPath = arguments[index + 1]
            index += 1
        case "--incremental" where index + 1 < arguments.count:
            incrementalReport = arguments[index + 1]
            index += 1
        default:
            positional.append(arguments[index])
        }
        index += 1
    }
    guard positional.count == 3 else {
        throw FloorError(description: "usage: FloorBenchmark [--incremental REPORT] SOURCES OUTPUT WORK [--threads T] [--json FILE]")
    }
    let (sources, output, work) = (positional[0], positional[1], positional[2])
    if let incrementalReport {
        return try runIncremental(report: incrementalReport, sources: sources, output: output, work: work,
                                  threads: threads, jsonPath: jsonPath)
    }
    try? FileManager.default.removeItem(atPath: work)
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)

    let (records, readTiming) = try timed { try readSources(in: sources) }
    let sourceBytes = records.reduce(0) { $0 + $1.body.count }
    print("floor benchmark: \(records.count) sources in \(sources), \(threads) threads")
    line("read sources", readTiming, "\(records.count) files, bodies \(megabytes(sourceBytes)) (not in the sum)")

    let (written, writeTiming) = try writeFloor(from: output, to: work + "/output", threads: threads)
    line("write files", writeTiming, "\(written.files) files, \(megabytes(written.bytes)), \(written.folders) folders")

    // The columns are the first record's fields; the corpus's records all have the same.
    let fields = records.first?.fields.map(\.name) ?? []
    let sqliteTiming = try sqliteFloor(records, fields: fields, path: work + "/floor.sqlite")
    line("sqlite insert", sqliteTiming, "\(records.count) rows of \(fields.count + 2) columns, one transaction")

    let (htmlBytes, cmarkTiming) = cmarkFloor(records, threads: threads)
    line("cmark render", cmarkTiming, "\(records.count) bodies, \(megabytes(htmlBytes)) of HTML")

    let sum = writeTiming + sqliteTiming + cmarkTiming
    line("floor sum", sum, "write + sqlite + cmark")
    if let jsonPath {
        let report = FloorReport(threads: threads, sources: records.count, sourceBytes: sourceBytes, read: readTiming,
                                 write: writeTiming, written: written, sqlite: sqliteTiming, sqliteRows: records.count,
                                 cmark: cmarkTiming, htmlBytes: htmlBytes, sumSeconds: sum.wallSeconds)
        try JSONEncoder().encode(report).write(to: URL(fileURLWithPath: jsonPath))
    }
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("FloorBenchmark: \(error)\n".utf8))
    exit(1)
}
