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

/// A source file's bytes as text, which must be UTF-8.
func decodeText(_ data: Data, displayName: String) throws(SourceError) -> String {
    guard let text = String(data: data, encoding: .utf8) else {
        throw SourceError(file: displayName, reason: "is not UTF-8 text")
    }
    return text
}
