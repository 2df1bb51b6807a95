import Foundation

/// The declared type of a collection field; text from a source is converted to it or rejected.
public enum FieldType: String, Sendable, Hashable, CaseIterable {
    case text, integer, real, date, datetime, bool
    /// Several texts; in CSV separated by `;`.
    case list

    /// Converts `raw` text to this type; an empty string is null. Throws a reason when it does not fit. A
    /// datetime written without an offset is one in `zone` (UTC when nil).
    public func value(from raw: String, zone: TimeZone? = nil) throws(FieldTypeMismatch) -> FieldValue {
        // Blank is null; found without trimming (a body of kilobytes stops at its first character).
        if raw.unicodeScalars.allSatisfy({ $0 == " " || $0 == "\t" }) { return .null }
        if self == .text { return .text(raw) }
        let trimmed = String(raw.trimmingBlanks())
        switch self {
        case .text:
            return .text(raw)
        case .list:
            return .list(raw.split(separator: ";").map { String($0.trimmingBlanks()) }.filter { !$0.isEmpty })
        case .integer:
            guard let digits = Self.withoutGroupSeparators(trimmed), let number = Int64(digits) ?? Self.integral(digits) else {
                throw FieldTypeMismatch(expected: "an integer", found: raw)
            }
            return .integer(number)
        case .real:
            guard let number = Self.withoutGroupSeparators(trimmed).flatMap({ Double($0) }), number.isFinite else {
                throw FieldTypeMismatch(expected: "a number (a comma only between groups of three digits, as in 1,234.5)",
                                        found: raw)
            }
            return .real(number)
        case .bool:
            switch trimmed.lowercased() {
            case "true", "yes", "y", "1": return .bool(true)
            case "false", "no", "n", "0": return .bool(false)
            default: throw FieldTypeMismatch(expected: "true or false", found: raw)
            }
        case .date:
            guard let date = CalendarDate(parsing: trimmed) else {
                throw FieldTypeMismatch(expected: "a date (YYYY-MM-DD, MM/DD/YYYY or DD-Mon-YY)", found: raw)
            }
            return .text(date.iso8601)
        case .datetime:
            guard let date = FeedDate.parse(trimmed, localZone: zone) else {
                throw FieldTypeMismatch(expected: "a date and time (RFC 3339 or RFC 822)", found: raw)
            }
            return .text(FeedDate.rfc3339(date))
        }
    }
}

extension FieldType {
    /// `42.0` or `42.000` as 42: spreadsheets and pandas write whole numbers so when a column has gaps.
    static func integral(_ text: String) -> Int64? {
        guard let point = text.firstIndex(of: "."), text[text.index(after: point)...].allSatisfy({ $0 == "0" }) else { return nil }
        return Int64(text[..<point])
    }

    /// `text` without the commas that group its digits by thousands (`-1,234,567.5`); nil when it has a comma
    /// anywhere else (`1,5` or `1.234,56`, a decimal comma, must not become another number).
    static func withoutGroupSeparators(_ text: String) -> String? {
        guard text.contains(",") else { return text }
        var body = Substring(text)
        var sign = ""
        if let first = body.first, first == "-" || first == "+" {
            sign = String(first)
            body = body.dropFirst()
        }
        let whole = body.prefix { $0 != "." }
        let fraction = body[whole.endIndex...]
        let groups = whole.split(separator: ",", omittingEmptySubsequences: false)
        let digits = { (group: Substring) in group.allSatisfy { $0.isASCII && $0.isNumber } }
        guard let head = groups.first, (1...3).contains(head.count), digits(head),
              groups.dropFirst().allSatisfy({ $0.count == 3 && digits($0) }), !fraction.contains(",")
        else { return nil }
        return sign + groups.joined() + fraction
    }
}

/// A value that does not fit its field's declared type.
public struct FieldTypeMismatch: Error, Sendable {
    /// What the field's type accepts.
    public var expected: String
    /// The text that did not fit.
    public var found: String
}

/// A day of the calendar with no time or zone, as record files write closing dates.
public struct CalendarDate: Sendable, Hashable, Comparable {
    /// The year, four digits.
    public var year: Int
    /// The month, 1–12.
    public var month: Int
    /// The day of the month.
    public var day: Int

    /// Reads `2023-05-01`, `5/1/2023` (US order) or `1-May-23` (FDIC's list); `nil` when none fits or the day does not exist.
    public init?(parsing text: String) {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == "/" }).map(String.init)
        guard parts.count == 3 else { return nil }
        var year: Int?, month: Int?, day: Int?, yearText: String
        if text.contains("/") {
            month = Int(parts[0]); day = Int(parts[1]); yearText = parts[2]
        } else if parts[0].count == 4 {
            yearText = parts[0]; month = Int(parts[1]); day = Int(parts[2])
        } else {
            day = Int(parts[0]); month = FeedDate.monthNumber(parts[1]); yearText = parts[2]
        }
        year = Int(yearText)
        guard var year, let month, let day else { return nil }
        // Only a year written with two digits is one of a century to guess: `0001-01-01` is the year 1. The
        // guess is POSIX's (`strptime`'s `%y`, and Python's): 69–99 are the 1900s, 00–68 the 2000s.
        if yearText.count <= 2 { year += year < 69 ? 2000 : 1900 }
        guard (1...12).contains(month), day >= 1, day <= CalendarDate.daysIn(month: month, year: year) else {
            return nil
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// `YYYY-MM-DD`, which sorts in date order as text.
    public var iso8601: String {
        zeroPadded(year, width: 4) + "-" + zeroPadded(month, width: 2) + "-" + zeroPadded(day, width: 2)
    }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
