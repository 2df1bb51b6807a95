import Foundation

/// How far the load of one large source has come, reported about twice a second while it is streamed,
/// so that a load of minutes shows it is moving and how long it has left.
public struct LoadProgress: Sendable, Equatable {
    /// The source file, as sitegen.yml's patterns name it.
    public var file: String
    /// Bytes read so far, and the file's size.
    public var bytesRead: Int64, totalBytes: Int64
    /// Records written to the store so far.
    public var rows: Int
    /// Seconds since the file's load began.
    public var elapsed: Double
    /// Whether this is the last report for the file.
    public var finished: Bool
    /// For the load of a collection's many files (`file` is then the collection's name): the files read so
    /// far, and how many the load reads.
    public var files: (read: Int, total: Int)?

    /// Describes the load of `file` so far.
    public init(file: String, bytesRead: Int64, totalBytes: Int64, rows: Int, elapsed: Double, finished: Bool,
                files: (read: Int, total: Int)? = nil) {
        self.file = file
        self.bytesRead = bytesRead
        self.totalBytes = totalBytes
        self.rows = rows
        self.elapsed = elapsed
        self.finished = finished
        self.files = files
    }

    public static func == (a: LoadProgress, b: LoadProgress) -> Bool {
        a.file == b.file && a.bytesRead == b.bytesRead && a.totalBytes == b.totalBytes && a.rows == b.rows
            && a.elapsed == b.elapsed && a.finished == b.finished && a.files?.read == b.files?.read && a.files?.total == b.files?.total
    }

    /// The fraction read, 0 to 1.
    public var fraction: Double { totalBytes > 0 ? min(1, Double(bytesRead) / Double(totalBytes)) : 1 }

    /// Seconds left at the rate so far, once there is a rate to go by.
    public var secondsLeft: Double? {
        guard bytesRead > 0, elapsed > 0.5, !finished else { return nil }
        return elapsed * Double(totalBytes - bytesRead) / Double(bytesRead)
    }

    /// One line: `data/records.ndjson  41%  1.3 of 3.1 GB  412,000 rows  18,200 rows/s  52 s left`, or for a
    /// collection's files `posts  41%  20,500 of 50,000 files  20,500 rows  2,100 files/s  14 s left`.
    public var line: String {
        if let files { return filesLine(files) }
        let percent = Int((fraction * 100).rounded(.down))
        var parts = [file, "\(percent)%", "\(Self.size(bytesRead)) of \(Self.size(totalBytes))", "\(Self.grouped(rows)) rows"]
        if elapsed > 0 { parts.append("\(Self.grouped(Int(Double(rows) / elapsed))) rows/s") }
        if let secondsLeft { parts.append("\(Int(secondsLeft.rounded(.up))) s left") }
        if finished { parts.append("done in \(Int(elapsed.rounded())) s") }
        return parts.joined(separator: "  ")
    }

    private func filesLine(_ files: (read: Int, total: Int)) -> String {
        let fraction = files.total > 0 ? Double(files.read) / Double(files.total) : 1
        var parts = [file, "\(Int((fraction * 100).rounded(.down)))%", "\(Self.grouped(files.read)) of \(Self.grouped(files.total)) files",
                     "\(Self.grouped(rows)) rows"]
        if elapsed > 0 { parts.append("\(Self.grouped(Int(Double(files.read) / elapsed))) files/s") }
        if finished {
            parts.append("done in \(Int(elapsed.rounded())) s")
        } else if files.read > 0, elapsed > 0.5 {
            parts.append("\(Int((elapsed * Double(files.total - files.read) / Double(files.read)).rounded(.up))) s left")
        }
        return parts.joined(separator: "  ")
    }

    private static func size(_ bytes: Int64) -> String {
        let units = [(1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")]
        for (scale, unit) in units where bytes >= Int64(scale) {
            let value = Double(bytes) / Double(scale)
            return (value < 10 ? String(Int(value * 10) / 10) + "." + String(Int(value * 10) % 10) : String(Int(value))) + " " + unit
        }
        return "\(bytes) B"
    }

    /// `412000` as `412,000`.
    static func grouped(_ number: Int) -> String {
        let digits = String(number)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return result
    }
}

/// How far the rendering of one listing's or collection's pages has come, reported about twice a
/// second while it goes on (a collection of a hundred thousand records renders for a while).
public struct RenderProgress: Sendable, Equatable {
    /// What is rendered: `listing states` or `detail pages of banks`.
    public var step: String
    /// Pages handed to the renderers so far, and how many the step has.
    public var pages: Int, totalPages: Int
    /// Seconds since the step began.
    public var elapsed: Double
    /// Whether this is the step's last report.
    public var finished: Bool
    /// Rows read in order before any page (a listing fetched afresh), when that is what is reported.
    public var rowsRead: Int?
    /// What is counted: `pages`, or `files` for the files a build publishes.
    public var unit = "pages"

    /// Describes a step's progress.
    public init(step: String, pages: Int, totalPages: Int, elapsed: Double, finished: Bool, rowsRead: Int? = nil) {
        self.step = step
        self.pages = pages
        self.totalPages = totalPages
        self.elapsed = elapsed
        self.finished = finished
        self.rowsRead = rowsRead
    }

    /// One line: `detail pages of banks  41%  41,000 of 100,000 pages  1,850 pages/s  32 s left`, or, while a
    /// listing's rows are read in order, `listing home  reading its rows in order  410,000 so far`.
    public var line: String {
        if let rowsRead { return [step, "reading its rows in order", "\(LoadProgress.grouped(rowsRead)) so far"].joined(separator: "  ") }
        let fraction = totalPages > 0 ? Double(pages) / Double(totalPages) : 1
        var parts = [step, "\(Int((fraction * 100).rounded(.down)))%",
                     "\(LoadProgress.grouped(pages)) of \(LoadProgress.grouped(totalPages)) \(unit)"]
        if elapsed > 0 { parts.append("\(LoadProgress.grouped(Int(Double(pages) / elapsed))) \(unit)/s") }
        if finished {
            parts.append("done in \(Int(elapsed.rounded())) s")
        } else if pages > 0, elapsed > 0.5 {
            parts.append("\(Int((elapsed * Double(totalPages - pages) / Double(pages)).rounded(.up))) s left")
        }
        return parts.joined(separator: "  ")
    }
}

/// Reports a step's progress at most twice a second, and once when it ends if it took long enough to
/// have reported before (a small site's build prints no progress at all).
final class ProgressThrottle {
    private let step: String
    private let total: Int
    /// What is counted, as `RenderProgress.unit`.
    var unit = "pages"
    private let report: ((RenderProgress) -> Void)?
    private var clock: ReportClock
    private var reported = false

    /// `interval`: the seconds between reports (tests make it 0).
    init(step: String, total: Int, report: ((RenderProgress) -> Void)?, interval: Double = 0.5) {
        self.step = step
        self.total = total
        self.report = report
        clock = ReportClock(interval: interval)
    }

    func advance(to pages: Int) {
        guard let elapsed = due() else { return }
        reported = true
        var progress = RenderProgress(step: step, pages: pages, totalPages: total, elapsed: elapsed, finished: false)
        progress.unit = unit
        report?(progress)
    }

    /// Reports the rows a fetch has read so far, at most twice a second: a listing of a million rows is
    /// read and ordered for seconds before its first page.
    func readRows(_ rows: Int) {
        guard let elapsed = due() else { return }
        report?(RenderProgress(step: step, pages: 0, totalPages: 0, elapsed: elapsed, finished: false, rowsRead: rows))
    }

    /// The seconds since the step began when a report is due, else nil.
    private func due() -> Double? {
        report == nil ? nil : clock.due()
    }

    func finish() {
        guard reported else { return }
        var progress = RenderProgress(step: step, pages: total, totalPages: total, elapsed: clock.elapsed, finished: true)
        progress.unit = unit
        report?(progress)
    }
}

/// Reports the load of a collection's files at most twice a second, and once when it ends if it reported
/// before: a load of a few files prints nothing, one of fifty thousand shows it is moving.
final class FilesProgress {
    private let collection: String
    private let total: Int
    private let report: ((LoadProgress) -> Void)?
    private var clock: ReportClock
    private var reported = false
    private var rows = 0

    /// `interval`: the seconds between reports (tests make it 0).
    init(collection: String, total: Int, report: ((LoadProgress) -> Void)?, interval: Double = 0.5) {
        self.collection = collection
        self.total = total
        self.report = report
        clock = ReportClock(interval: interval)
    }

    /// `files` files are read, the last of them with `rows` rows.
    func advance(to files: Int, adding rows: Int) {
        self.rows += rows
        guard report != nil, let elapsed = clock.due() else { return }
        reported = true
        report?(progress(files: files, elapsed: elapsed, finished: false))
    }

    func finish() {
        guard reported else { return }
        report?(progress(files: total, elapsed: clock.elapsed, finished: true))
    }

    private func progress(files: Int, elapsed: Double, finished: Bool) -> LoadProgress {
        LoadProgress(file: collection, bytesRead: 0, totalBytes: 0, rows: rows, elapsed: elapsed, finished: finished, files: (files, total))
    }
}

/// When a progress report is due: at most one every `interval` seconds, counted from the step's start.
struct ReportClock {
    private let start = DispatchTime.now().uptimeNanoseconds
    private var last: UInt64
    private let interval: UInt64

    /// A clock started now, due every `interval` seconds.
    init(interval: Double) {
        self.interval = UInt64(interval * 1e9)
        last = start
    }

    /// The seconds since the start.
    var elapsed: Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

    /// The seconds since the start when a report is due (and it is counted as made), else nil.
    mutating func due() -> Double? {
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - last >= interval else { return nil }
        last = now
        return Double(now - start) / 1e9
    }
}
