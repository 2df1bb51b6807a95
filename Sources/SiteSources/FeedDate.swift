import Foundation

/// Parses the dates feeds carry (RFC 822 and RFC 3339, and their common broken variants) and formats RFC 3339.
///
/// Parsing is by hand rather than with `DateFormatter`: it is locale-free, an order of magnitude faster,
/// and accepts what real feeds write (two-digit years, missing seconds, named zones, a missing day name).
public enum FeedDate {
    /// The instant `text` names, or `nil` when it is not a date sitegen recognises. A date or time written
    /// without an offset (`2024-03-10`, `2024-03-10 20:30`) is one in `localZone`, as Hugo reads front matter
    /// in its `timeZone`; in UTC when there is none.
    public static func parse(_ text: String, localZone: TimeZone? = nil) -> Date? {
        let trimmed = String(text.trimmingBlanks(newlines: true))
        guard let first = trimmed.first else { return nil }
        guard let (date, hasOffset) = first.isNumber && trimmed.count >= 10 && trimmed.dropFirst(4).first == "-"
            ? parseRFC3339(trimmed) : parseRFC822(trimmed) else { return nil }
        guard !hasOffset, let localZone else { return date }
        // The wall time read as UTC, moved by the zone's offset at that instant; the offset is looked up
        // again at the moved instant, which is the right one but for the hour a clock change repeats or skips.
        let guess = date.addingTimeInterval(-Double(localZone.secondsFromGMT(for: date)))
        return date.addingTimeInterval(-Double(localZone.secondsFromGMT(for: guess)))
    }

    /// `2024-05-03T14:00:00Z`: RFC 3339 in UTC, whole seconds.
    public static func rfc3339(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        return zeroPadded(Int(year), width: 4) + "-" + zeroPadded(Int(month), width: 2) + "-" + zeroPadded(Int(day), width: 2)
            + "T" + zeroPadded(Int(secondOfDay / 3600), width: 2) + ":" + zeroPadded(Int(secondOfDay % 3600 / 60), width: 2)
            + ":" + zeroPadded(Int(secondOfDay % 60), width: 2) + "Z"
    }

    /// The month number (1–12) of an English month name or abbreviation.
    public static func monthNumber(_ name: String) -> Int? {
        let prefix = name.prefix(3).lowercased()
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    // 2024-05-03T14:00:00Z, 2024-05-03T14:00:00.123+02:00, 2024-05-03 14:00:00, 2024-05-03
    private static func parseRFC3339(_ text: String) -> (Date, hasOffset: Bool)? {
        let scalars = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= scalars.count else { return nil }
            var value = 0
            for byte in scalars[range] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0..<4), scalars[4] == 45, let month = number(5..<7), scalars[7] == 45,
            let day = number(8..<10)
        else { return nil }
        var hour = 0, minute = 0, second = 0.0
        var index = 10
        if index < scalars.count, scalars[index] == 84 || scalars[index] == 116 || scalars[index] == 32 {
            guard let h = number(11..<13), scalars.count > 13, scalars[13] == 58, let m = number(14..<16) else {
                return nil
            }
            hour = h; minute = m; index = 16
            if index < scalars.count, scalars[index] == 58 {
                guard let s = number(17..<19) else { return nil }
                second = Double(s); index = 19
                if index < scalars.count, scalars[index] == 46 || scalars[index] == 44 {
                    var fraction = 0.0, scale = 0.1
                    index += 1
                    while index < scalars.count, scalars[index] >= 48, scalars[index] <= 57 {
                        fraction += Double(scalars[index] - 48) * scale
                        scale /= 10
                        index += 1
                    }
                    second += fraction
                }
            }
        }
        var offset = 0, hasOffset = false
        if index < scalars.count {
            let zone = String(String(decoding: scalars[index...], as: UTF8.self).trimmingBlanks())
            guard let parsed = zoneOffset(zone) else { return nil }
            offset = parsed
            hasOffset = true
        }
        return makeDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset).map { ($0, hasOffset) }
    }

    // Fri, 03 May 2024 14:00:00 GMT; 3 May 24 14:00 +0200; Fri, 3 May 2024 14:00:00 EST
    private static func parseRFC822(_ text: String) -> (Date, hasOffset: Bool)? {
        var tokens = text.replacingOccurrences(of: ",", with: " ").split(separator: " ").map(String.init)
        // A leading day name (possibly misspelled) says nothing the date does not; no day name starts like a month.
        if let first = tokens.first, first.first?.isLetter == true, monthNumber(first) == nil {
            tokens.removeFirst()
        }
        guard tokens.count >= 3 else { return nil }
        var dayText = tokens[0], monthText = tokens[1]
        if Int(dayText) == nil, Int(monthText) != nil { swap(&dayText, &monthText) }  // "May 3 2024"
        guard let day = Int(dayText), let month = monthNumber(monthText), var year = Int(tokens[2]) else {
            return nil
        }
        // RFC 5322's reading of an obsolete two-digit year: 00–49 are the 2000s, 50–99 the 1900s.
        if tokens[2].count <= 2 { year += year < 50 ? 2000 : 1900 }
        var hour = 0, minute = 0, second = 0.0, offset = 0
        if tokens.count >= 4 {
            let clock = tokens[3].split(separator: ":").map { Int($0) }
            guard clock.count >= 2, let h = clock[0], let m = clock[1] else { return nil }
            hour = h; minute = m
            if clock.count >= 3 {
                guard let s = clock[2] else { return nil }
                second = Double(s)
            }
        }
        if tokens.count >= 5 {
            guard let parsed = zoneOffset(tokens[4]) else { return nil }
            offset = parsed
        }
        return makeDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset).map { ($0, tokens.count >= 5) }
    }

    /// Seconds east of UTC for `Z`, `+02:00`, `-0500`, `GMT`, `EST` and the other RFC 822 zone names.
    private static func zoneOffset(_ zone: String) -> Int? {
        let named = ["Z": 0, "UT": 0, "UTC": 0, "GMT": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5,
                     "MST": -7, "MDT": -6, "PST": -8, "PDT": -7]
        if let hours = named[zone.uppercased()] { return hours * 3600 }
        guard let sign = zone.first, sign == "+" || sign == "-" else { return nil }
        let digits = zone.dropFirst().filter { $0 != ":" }
        guard digits.count == 4 || digits.count == 2, let value = Int(digits) else { return nil }
        let seconds = digits.count == 4 ? (value / 100) * 3600 + (value % 100) * 60 : value * 3600
        return sign == "-" ? -seconds : seconds
    }

    private static func makeDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Double, offset: Int) -> Date? {
        guard (1...12).contains(month), day >= 1, day <= CalendarDate.daysIn(month: month, year: year),
            (0...23).contains(hour), (0...59).contains(minute), second >= 0, second < 61
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 - offset) + second
        return Date(timeIntervalSince1970: seconds)
    }

    // Howard Hinnant's days-from-civil: exact proleptic Gregorian arithmetic, no calendar object.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }
}
