/// A value stored in, or bound to, an SQLite column.
public enum DatabaseValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// SQLite's five storage classes, the kinds of value a column of a row holds.
    public enum StorageClass: Sendable {
        case null, integer, real, text, blob
    }

    /// The value as text, for templates and messages; `nil` when NULL or a blob.
    public var stringValue: String? {
        switch self {
        case .null, .blob: return nil
        case .integer(let value): return String(value)
        case .real(let value): return Self.text(of: value)
        case .text(let value): return value
        }
    }

    /// A real number as a page shows it: a whole one without `.0` (a `real` field read from `10` shows
    /// `10`, as the data has it), others in Swift's shortest form (`0.5`, `1e+21`).
    public static func text(of real: Double) -> String {
        if real == real.rounded(.towardZero), abs(real) < 1e15 { return String(Int64(real)) }
        return String(real)
    }

    /// The value as an integer when it is one (or integral text).
    public var int64Value: Int64? {
        switch self {
        case .integer(let value): return value
        case .real(let value): return Int64(exactly: value)
        case .text(let value): return Int64(value)
        case .null, .blob: return nil
        }
    }

    /// Whether the value is SQL NULL.
    public var isNull: Bool { self == .null }

    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let bytes): return "<\(bytes.count) bytes>"
        }
    }
}

// No ExpressibleByNilLiteral: `nil` must keep meaning "no value" for `DatabaseValue?`, never SQL NULL.
extension DatabaseValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
}
