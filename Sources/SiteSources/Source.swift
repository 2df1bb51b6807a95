import Foundation

/// A file that yields records: one conformer per kind of source (CSV, feed, Markdown; a remote one later).
public protocol Source: Sendable {
    /// The file as the user names it (relative to the site root), used in every message.
    var displayName: String { get }
    /// Reads every record; a problem that makes the file unusable throws, lesser ones come back as warnings.
    func read() throws(SourceError) -> SourceResult
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

func readText(_ url: URL, displayName: String) throws(SourceError) -> String {
    let data: Data
    do {
        data = try Data(contentsOf: url)
    } catch {
        throw SourceError(file: displayName, reason: "cannot be read: \(error.localizedDescription)")
    }
    guard let text = String(data: data, encoding: .utf8) else {
        throw SourceError(file: displayName, reason: "is not UTF-8 text")
    }
    return text
}
