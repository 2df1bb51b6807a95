import Foundation

/// A file that yields records: one conformer per kind of source (CSV, feed, Markdown; a remote one later).
public protocol Source: Sendable {
    /// Where the file is.
    var url: URL { get }
    /// The file as the user names it (relative to the site root), used in every message.
    var displayName: String { get }
    /// Reads every record from the file's bytes; a problem that makes the file unusable throws, lesser
    /// ones come back as warnings.
    func read(_ data: Data) throws(SourceError) -> SourceResult
}

extension Source {
    /// Reads the file and every record in it.
    public func read() throws(SourceError) -> SourceResult {
        try read(readData(url, displayName: displayName))
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

/// The bytes of a source file; a file that cannot be read is a `SourceError` naming it.
func readData(_ url: URL, displayName: String) throws(SourceError) -> Data {
    do {
        return try Data(contentsOf: url)
    } catch {
        throw SourceError(file: displayName, reason: "cannot be read: \(error.localizedDescription)")
    }
}

/// A source file's bytes as text, which must be UTF-8.
func decodeText(_ data: Data, displayName: String) throws(SourceError) -> String {
    guard let text = String(data: data, encoding: .utf8) else {
        throw SourceError(file: displayName, reason: "is not UTF-8 text")
    }
    return text
}
