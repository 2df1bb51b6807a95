/// A problem in one source file, located to the line (and column where known).
public struct SourceError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file, as the user named it (relative to the site root).
    public var file: String
    /// 1-based line, `nil` when the problem is the whole file (unreadable, empty).
    public var line: Int?
    /// 1-based column, when known.
    public var column: Int?
    /// What was found and what was expected.
    public var reason: String
    /// Further problems of the same file found by the same read, in file order: a file fails on its first
    /// bad record, but the next ones are reported with it so that one round of edits fixes them all.
    public var more: [SourceError] = []

    /// How many further problems the read found past `moreLimit`: counted, not listed.
    public var unlisted = 0

    /// The most further problems a read reports with its first.
    public static let moreLimit = 9

    /// Makes an error located in `file`.
    public init(file: String, line: Int? = nil, column: Int? = nil, reason: String) {
        self.file = file
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// This problem and the further ones of its file (`more`), each on its own.
    /// The last listed says how many past the limit there are.
    public var all: [SourceError] {
        var first = self
        first.more = []
        first.unlisted = 0
        var listed = [first] + more
        if unlisted > 0 {
            // On the last within the limit (a read's stopping error may follow it).
            listed[min(listed.count - 1, Self.moreLimit)].reason += " (and \(unlisted) more problem\(unlisted == 1 ? "" : "s") after this line, not listed; "
                + "fix these and build again to see them)"
        }
        return listed
    }

    /// How many problems the read found: the first, the further ones listed, and those past the limit.
    public var count: Int { 1 + more.count + unlisted }

    /// Adds `problem` to `more`, up to `moreLimit` of them; the others are counted.
    public mutating func add(_ problem: SourceError) {
        if more.count < Self.moreLimit { more.append(problem) } else { unlisted += 1 }
    }

    /// Notes `problem` in a read's `failure`: its first problem, or one more.
    static func note(_ problem: SourceError, in failure: inout SourceError?) {
        if failure == nil { failure = problem } else { failure!.add(problem) }
    }

    /// What a read that `failure` had failed and that `error` then stopped throws: the problems noted
    /// before, then `error`, which ends the list (nothing after it could be read).
    static func stopped(_ failure: SourceError?, at error: SourceError) -> SourceError {
        guard var failure else { return error }
        // Listed past the limit too: nothing after it was read, so it explains what the file lacks.
        failure.more.append(error)
        return failure
    }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let line = self.line, let column { location = "\(file):\(line):\(column)" }
        return "\(location): \(reason)"
    }
}
