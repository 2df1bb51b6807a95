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

    /// A real number as a page shows it: in the fewest digits that read back as the same number, written
    /// out in full (`0.00001`, `10000000000000000`: readers of a report should not meet `1e-05`), a whole one
    /// without `.0` (a `real` field read from `10` shows `10`, as the data has it).
    public static func text(of real: Double) -> String {
        if real == real.rounded(.towardZero), abs(real) < 1e15 { return String(Int64(real)) }
        let shortest = String(real)
        guard real.isFinite else { return shortest }
        let negative = shortest.hasPrefix("-")
        let unsigned = negative ? shortest.dropFirst() : Substring(shortest)
        let parts = unsigned.split(separator: "e", maxSplits: 1)
        let mantissa = parts[0], exponent = parts.count == 2 ? Int(parts[1]) ?? 0 : 0
        let digits = mantissa.filter { $0 != "." }
        // Where the point goes among the digits once the exponent is applied.
        let point = (mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) } ?? mantissa.count) + exponent
        var text: String
        if point <= 0 {
            text = "0." + String(repeating: "0", count: -point) + digits
        } else if point >= digits.count {
            text = digits + String(repeating: "0", count: point - digits.count)
        } else {
            text = String(digits.prefix(point)) + "." + digits.dropFirst(point)
        }
        // `1000000000000000.0` is whole; `0.50` cannot occur (the shortest form has no trailing zeros).
        if text.hasSuffix(".0") { text.removeLast(2) }
        while text.count > 1, text.hasPrefix("0"), !text.hasPrefix("0.") { text.removeFirst() }
        return (negative ? "-" : "") + text
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
