import Foundation

/// A file that yields records: one conformer per kind of source (CSV, feed, Markdown; a remote one later).
public protocol Source: Sendable {
    /// Where the file is.
    var url: URL { get }
    /// The file as the user names it (relative to the site root), used in every message.
    var displayName: String { get }
    /// Reads the records in `input`, handing each to `emit` in file order, and returns the warnings. A
    /// problem that makes the file unusable throws, even after records were emitted: the caller keeps
    /// none of them. Record files are read a chunk at a time, so memory does not grow with the file.
    func read(_ input: inout SourceInput, emit: (Record) throws(SourceError) -> Void) throws(SourceError) -> [SourceError]
}

extension Source {
    /// Reads every record from the file's bytes.
    public func read(_ data: Data) throws(SourceError) -> SourceResult {
        var input = SourceInput(data: data, displayName: displayName)
        return try collect(&input)
    }

    /// Reads the file and every record in it.
    public func read() throws(SourceError) -> SourceResult {
        var input = try SourceInput(contentsOf: url, displayName: displayName)
        return try collect(&input)
    }

    private func collect(_ input: inout SourceInput) throws(SourceError) -> SourceResult {
        var records: [Record] = []
        let warnings = try read(&input) { records.append($0) }
        return SourceResult(records: records, warnings: warnings)
    }
}

/// What a source yielded.
public struct SourceResult: Sendable {
    /// The records, in file order.
    public var records: [Record]
    /// Problems that did not stop the file from being read.
    public var warnings: [SourceError]

    /// Makes a result.
    public init(records: [Record], warnings: [SourceError] = []) {
        self.records = records
        self.warnings = warnings
    }
}

/// Remembers the line of each key a file has given, so a repeated key names both lines.
struct KeyLines {
    private var lines: [String: Int] = [:]

    /// Records that `key` appears at `line`; returns the earlier line when it appeared before.
    mutating func insert(_ key: String, line: Int) -> Int? {
        if let earlier = lines[key] { return earlier }
        lines[key] = line
        return nil
    }
}

/// Fails a file of UTF-16 text (Windows' "Unicode text"), which every reader but XML's would otherwise
/// report as a first character or column it does not expect.
func rejectUTF16(_ input: borrowing SourceInput) throws(SourceError) {
    guard isUTF16(input.head) else { return }
    throw SourceError(file: input.displayName, line: 1, reason: "is UTF-16 text, not UTF-8; save the file as UTF-8")
}

/// Whether `head`, a file's first bytes, is UTF-16: a byte order mark, or text with a NUL byte on one side
/// of every pair and none on the other (ASCII in UTF-16 without a mark, either byte order).
public func isUTF16(_ head: [UInt8]) -> Bool {
    if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) { return true }
    let pairs = head.count / 2
    guard pairs >= 2 else { return false }
    let evenNUL = (0..<pairs).map { head[2 * $0] == 0 }, oddNUL = (0..<pairs).map { head[2 * $0 + 1] == 0 }
    return evenNUL.allSatisfy { $0 } && !oddNUL.contains(true) || oddNUL.allSatisfy { $0 } && !evenNUL.contains(true)
}

/// A source file's bytes as text, which must be UTF-8.
func decodeText(_ data: Data, displayName: String) throws(SourceError) -> String {
    guard let text = String(data: data, encoding: .utf8) else {
        // Where, as a CSV field's error says it: the line and the first byte that is no UTF-8 (Latin-1's é
        // is 0xE9); a file that opens with UTF-16's byte order mark is named as that.
        let bytes = [UInt8](data)
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            throw SourceError(file: displayName, line: 1, reason: "is UTF-16 text, not UTF-8; save the file as UTF-8")
        }
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while case .valid(let encoded) = parser.parseScalar(from: &iterator) { offset += encoded.count }
        let start = min(offset, bytes.count - 1)
        let line = bytes[..<start].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        let lineStart = bytes[..<start].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        let before = String(decoding: bytes[max(lineStart, start - 20)..<start], as: UTF8.self)
        throw SourceError(file: displayName, line: line, reason: "is not UTF-8 text (byte " + String(format: "0x%02X", bytes[start])
                          + (before.isEmpty ? "" : " after '\(before)'") + "); save the file as UTF-8")
    }
    return text
}
