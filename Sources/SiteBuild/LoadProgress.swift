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

    /// Describes the load of `file` so far.
    public init(file: String, bytesRead: Int64, totalBytes: Int64, rows: Int, elapsed: Double, finished: Bool) {
        self.file = file
        self.bytesRead = bytesRead
        self.totalBytes = totalBytes
        self.rows = rows
        self.elapsed = elapsed
        self.finished = finished
    }

    /// The fraction read, 0 to 1.
    public var fraction: Double { totalBytes > 0 ? min(1, Double(bytesRead) / Double(totalBytes)) : 1 }

    /// Seconds left at the rate so far, once there is a rate to go by.
    public var secondsLeft: Double? {
        guard bytesRead > 0, elapsed > 0.5, !finished else { return nil }
        return elapsed * Double(totalBytes - bytesRead) / Double(bytesRead)
    }

    /// One line: `data/records.ndjson  41%  1.3 of 3.1 GB  412,000 rows  18,200 rows/s  52 s left`.
    public var line: String {
        let percent = Int((fraction * 100).rounded(.down))
        var parts = [file, "\(percent)%", "\(Self.size(bytesRead)) of \(Self.size(totalBytes))", "\(Self.grouped(rows)) rows"]
        if elapsed > 0 { parts.append("\(Self.grouped(Int(Double(rows) / elapsed))) rows/s") }
        if let secondsLeft { parts.append("\(Int(secondsLeft.rounded(.up))) s left") }
        if finished { parts.append("done in \(Int(elapsed.rounded())) s") }
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
