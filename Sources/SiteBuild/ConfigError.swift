/// A problem in `sitegen.yml`, located to the line and column, saying what was expected.
public struct ConfigError: Error, CustomStringConvertible, Equatable, Sendable {
    public var file: String
    public var line: Int?
    public var column: Int?
    public var reason: String

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
