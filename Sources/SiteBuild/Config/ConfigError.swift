/// A problem in `sitegen.yml`, located to the line and column, saying what was expected.
public struct ConfigError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The configuration file, as the user names it.
    public var file: String
    /// The 1-based line, when the problem has one.
    public var line: Int?
    /// The 1-based column, when known.
    public var column: Int?
    /// What was found and what was expected.
    public var reason: String

    /// Makes an error located in `file`.
    public init(file: String, line: Int? = nil, column: Int? = nil, reason: String) {
        self.file = file
        self.line = line
        self.column = column
        self.reason = reason
    }

    public var description: String {
        switch (line, column) {
        case let (line?, column?): return "\(file):\(line):\(column): \(reason)"
        case let (line?, nil): return "\(file):\(line): \(reason)"
        default: return "\(file): \(reason)"
        }
    }
}

/// Where a value was written in `sitegen.yml`, kept so that problems found after reading it (a template the
/// folder lacks, a `where` that SQLite rejects) can point at the line.
public struct ConfigMark: Sendable, Hashable {
    /// The 1-based line, when known.
    public var line: Int?
    /// The 1-based column, when known.
    public var column: Int?

    /// Makes a mark at `line` and `column`.
    public init(line: Int?, column: Int?) {
        self.line = line
        self.column = column
    }
}

extension ConfigError {
    /// Makes an error in `file` at `mark` (no line when there is no mark).
    public init(file: String, at mark: ConfigMark?, reason: String) {
        self.init(file: file, line: mark?.line, column: mark?.column, reason: reason)
    }
}
