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

    /// Makes an error located in `file`.
    public init(file: String, line: Int? = nil, column: Int? = nil, reason: String) {
        self.file = file
        self.line = line
        self.column = column
        self.reason = reason
    }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let line = self.line, let column { location = "\(file):\(line):\(column)" }
        return "\(location): \(reason)"
    }
}
