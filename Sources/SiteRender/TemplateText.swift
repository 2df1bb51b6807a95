import Foundation

/// A record's text as templates see it: rendered as itself (`{{closing_date}}`), with sitegen's helpers
/// as Mustache transforms (`{{date(closing_date)}}`, `{{{markdown(notes)}}}`).
///
/// | transform | gives |
/// |---|---|
/// | `date`, `month`, `year` | `20 February 2024`, `February 2024`, `2024` from `2024-02-20` or an RFC 3339 time |
/// | `number` | `185,500,000` from `185500000` (decimals kept) |
/// | `excerpt` | the text without HTML tags or Markdown marks, cut at a word before 160 characters, with `…` |
/// | `markdown` | the text rendered as GitHub-flavoured Markdown (use `{{{…}}}`) |
/// | `absolute` | a site path (`url`) as a full URL on the site's `baseURL` |
/// | `json`, `xml` | the text as a JSON string literal safe inside `<script>`, or escaped for XML |
/// | `capitalized`, `lowercased`, `uppercased`, `reversed`, `empty` | as for any Mustache string |
public struct TemplateText: CustomStringConvertible, Sendable {
    /// What the helpers need to know of the site.
    ///
    /// A class, so that a text is two words of string and one reference: 24 bytes fit in an `Any`'s
    /// inline buffer, where a 33-byte text was boxed on the heap, once per field of every row presented.
    public final class Site: Sendable {
        /// The site's `baseURL`, ending with `/`.
        public let baseURL: String
        /// Whether Markdown may carry raw HTML through (`unsafe: true`).
        public let allowsRawHTML: Bool
        /// The path of `baseURL`, ending with `/`, under which Markdown's links from the site's root lead.
        public let basePath: String
        /// The zone the date helpers show a `datetime` in (`timeZone:`); UTC, as stored, when nil.
        public let timeZone: TimeZone?
        /// What highlights fenced code in Markdown (`highlight:`); nil when it is off.
        public let highlighter: CodeHighlighter?
        /// A Gregorian calendar in `timeZone`, made once: the date helpers of every row of every page use it.
        let calendar: Calendar?

        /// Describes the site.
        public init(baseURL: String, allowsRawHTML: Bool, timeZone: TimeZone? = nil, basePath: String = "/", highlighter: CodeHighlighter? = nil) {
            self.baseURL = baseURL
            self.allowsRawHTML = allowsRawHTML
            self.highlighter = highlighter
            self.basePath = basePath
            self.timeZone = timeZone
            calendar = timeZone.map { zone in
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = zone
                return calendar
            }
        }

        /// A path on the site's host (`/sub/banks/1/`) as a full URL; as it is when `baseURL` has no host.
        public func absoluteURL(_ path: String) -> String {
            guard path.hasPrefix("/"), let base = URL(string: baseURL), let scheme = base.scheme, let host = base.host else { return path }
            return scheme + "://" + host + (base.port.map { ":\($0)" } ?? "") + path
        }
    }

    /// The text.
    public let text: String
    /// The site it belongs to.
    public let site: Site

    /// Wraps `text` for a template.
    public init(_ text: String, site: Site) {
        self.text = text
        self.site = site
    }

    /// The text itself, which is what `{{field}}` prints.
    public var description: String { text }

    /// What the transform `name` makes of the text (a `String`, or a `Bool` for `empty`); `nil` when there
    /// is no such transform. Inside `{{#field}}…{{/field}}` names are looked up in the page around it.
    public func transform(_ name: String) -> Any? {
        if let helped = helper(name) { return helped }
        switch TemplateValue.transformed(text, name) {
        case .string(let transformed)?: return transformed
        case .boolean(let flag)?: return flag
        default: return nil
        }
    }

    /// The text through one of sitegen's own helpers; `nil` for other names.
    func helper(_ name: String) -> String? {
        Self.helper(name, text, site: site)
    }

    /// sitegen's own helpers, which apply to any value a template prints (`TemplateValue.transformed`).
    static let helperNames: Set<String> = ["date", "month", "year", "number", "excerpt", "markdown", "sanitized", "absolute", "json", "xml", "slug"]

    /// `text` through one of sitegen's own helpers; `nil` for other names. Without a `site`, `absolute`
    /// leaves a path as it is and `markdown` withholds raw HTML.
    static func helper(_ name: String, _ text: String, site: Site?) -> String? {
        switch name {
        case "date", "month", "year": return calendarText(site?.calendar.map { localDay(of: text, in: $0) } ?? text, style: name)
        case "number": return groupedNumber(text)
        case "excerpt": return excerpt(text, limit: 160)
        case "markdown":
            return MarkdownRenderer(allowsRawHTML: site?.allowsRawHTML ?? false, basePath: site?.basePath ?? "/", highlighter: site?.highlighter).html(text)
        // A feed's HTML anywhere a template prints it (`{{{sanitized(summary)}}}`), as `format: sanitized` makes a body.
        case "sanitized": return HTMLSanitizer.sanitize(text)
        case "absolute": return site?.absoluteURL(text) ?? text
        case "json": return scriptSafeJSONString(text)
        case "xml": return escapeXML(text)
        // A path's part as sitegen makes it from a value: a tag's section page is `/tags/{{slug(.)}}/`.
        case "slug": return slugify(text)
        default: return nil
        }
    }

    /// `text` as a JSON string literal that can stand inside an HTML `<script>` element (JSON-LD): `<`, `>`
    /// and `&` are escaped as `\u003c`, `\u003e`, `\u0026`, as Hugo's `jsonify` does, so text holding
    /// `</script>` or `<!--` cannot end or change the element, and U+2028 and U+2029 too, which JavaScript
    /// before ES2019 took for line ends.
    static func scriptSafeJSONString(_ text: String) -> String {
        jsonString(text, escapingHTML: true)
    }

    private static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August",
                                     "September", "October", "November", "December"]

    /// `2024-02-20` (or `2024-02-20T…`) as `20 February 2024`, `February 2024` or `2024`; other text, and a
    /// day no calendar has (`2024-02-30`), as it is.
    static func calendarText(_ text: String, style: String) -> String {
        let parts = text.prefix(10).split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 3, text.count >= 10, let year = parts[0], let month = parts[1], let day = parts[2], (1...12).contains(month),
              day >= 1, day <= daysIn(month: month, year: year)
        else { return text }
        switch style {
        case "year": return String(year)
        case "month": return "\(monthNames[month - 1]) \(year)"
        default: return "\(day) \(monthNames[month - 1]) \(year)"
        }
    }

    /// The day a UTC datetime as stored (`2024-01-01T00:30:00Z`, fractions allowed) falls on in `zone`, as
    /// `YYYY-MM-DD`: a post dated half past midnight in Paris is dated that day, not the one before. Other
    /// text, dates without a time among it, as it is.
    static func localDay(of text: String, in local: Calendar) -> String {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[10] == UInt8(ascii: "T"), bytes.last == UInt8(ascii: "Z") else { return text }
        func number(_ range: Range<Int>) -> Int? { Int(String(decoding: bytes[range], as: UTF8.self)) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
              let minute = number(14..<16), let second = number(17..<19), (1...12).contains(month),
              day >= 1, day <= daysIn(month: month, year: year) else { return text }
        guard year >= 1, let instant = utcCalendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
        else { return text }
        let parts = local.dateComponents([.year, .month, .day], from: instant)
        guard let localYear = parts.year, let localMonth = parts.month, let localDay = parts.day else { return text }
        return String(format: "%04d-%02d-%02d", localYear, localMonth, localDay)
    }

    /// The calendar datetimes are stored in.
    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The days of `month` (1–12) in `year`, leap years' February 29 included.
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `185500000` as `185,500,000`, `-1234.5` as `-1,234.5`; text that is not a number as it is, and so is
    /// a code with leading zeros (`02134`, a ZIP code, is no quantity).
    static func groupedNumber(_ text: String) -> String {
        // Digits, a sign and a point only: `1e+20`, `inf` and `nan` are numbers to Double but have no groups.
        guard Double(text) != nil, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }) else { return text }
        let negative = text.hasPrefix("-")
        let unsigned = negative ? text.dropFirst() : Substring(text)
        let whole = unsigned.prefix { $0 != "." }
        if whole.count > 1, whole.hasPrefix("0") { return text }
        let fraction = unsigned.dropFirst(whole.count)
        var grouped = ""
        for (index, digit) in whole.enumerated() {
            if index > 0, (whole.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (negative ? "-" : "") + grouped + fraction
    }

    /// `text` with the marks of whole Markdown lines taken out: a table's rule rows and pipes, thematic
    /// breaks, code fences, footnote definitions, and list and task markers.
    private static func markdownLinesWithoutMarks(_ text: String) -> String {
        guard text.contains(where: { "|-*+_=`~[".contains($0) || $0.isNumber }) else { return text }
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var rest = line.drop { $0 == " " }
            let marks = rest.filter { $0 != " " }
            // `|---|:--:|`, `---`, `***`, `===`: rules of a table, a thematic break or a heading's underline.
            if !marks.isEmpty, marks.allSatisfy({ "|-:".contains($0) }) && marks.contains("-") && (marks.contains("|") || marks.count >= 3)
                || marks.count >= 3 && Set(marks).count == 1 && "*_=".contains(marks.first!) {
                continue
            }
            if rest.hasPrefix("```") || rest.hasPrefix("~~~") { continue }
            if rest.hasPrefix("[^"), let close = rest.firstIndex(of: "]"), rest[close...].hasPrefix("]:") { continue }
            // A list item's marker, then a task's box.
            if let first = rest.first, "-*+".contains(first), rest.dropFirst().first == " " {
                rest = rest.dropFirst(2)
            } else if let digits = Optional(rest.prefix { $0.isASCII && $0.isNumber }), !digits.isEmpty, digits.count < 10,
                      let after = rest.dropFirst(digits.count).first, after == "." || after == ")", rest.dropFirst(digits.count + 1).first == " " {
                rest = rest.dropFirst(digits.count + 2)
            }
            for box in ["[ ] ", "[x] ", "[X] "] where rest.hasPrefix(box) { rest = rest.dropFirst(box.count) }
            // A table row's cells, without the pipes between them.
            if rest.hasPrefix("|") {
                lines.append(Substring(rest.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")))
                continue
            }
            lines.append(rest)
        }
        return lines.joined(separator: "\n")
    }

    /// The character a reference names (`amp`, `nbsp`, `#233`, `#xE9`; XML's five names and `nbsp`), if it is one.
    private static func characterReference(_ name: Substring) -> Unicode.Scalar? {
        let named: [Substring: UInt32] = ["amp": 38, "lt": 60, "gt": 62, "quot": 34, "apos": 39, "nbsp": 0x20]
        if name.hasPrefix("#x") || name.hasPrefix("#X") { return UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init) }
        if name.hasPrefix("#") { return UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init) }
        return named[name].flatMap(Unicode.Scalar.init)
    }

    /// The text without HTML tags or Markdown's marks (emphasis, strikethrough, code, heading, list and task
    /// marks, a link's address, a table's pipes and rules, footnotes), cut at a word boundary before `limit`
    /// characters. Marks are dropped only where Markdown reads them: `snake_case`, `C#` and `5 < 6` keep
    /// their characters.
    static func excerpt(_ text: String, limit: Int) -> String {
        let characters = Array(markdownLinesWithoutMarks(text))
        var plain = ""
        var index = 0
        var lineStart = true
        func isWordCharacter(_ offset: Int) -> Bool {
            offset >= 0 && offset < characters.count && (characters[offset].isLetter || characters[offset].isNumber)
        }
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            defer { lineStart = character.isNewline || (lineStart && (character == " " || character == "#" || character == ">")) }
            // A tag starts with a letter, `/`, `!` or `?` after its `<`; any other `<` is text.
            if character == "<", let next, next.isLetter || "/!?".contains(next),
                let close = characters[(index + 1)...].firstIndex(of: ">")
            {
                index = close + 1
                continue
            }
            // HTML's references stand for their characters: the excerpt is text, escaped again where it is shown.
            if character == "&", let semicolon = characters[(index + 1)...].prefix(10).firstIndex(of: ";"),
                let decoded = characterReference(Substring(String(characters[(index + 1)..<semicolon])))
            {
                plain.unicodeScalars.append(decoded)
                index = semicolon + 1
                continue
            }
            // A link or image, `[text](address)`: its text stays.
            if character == "]" {
                index = next == "(" ? (characters[(index + 1)...].firstIndex(of: ")") ?? index) + 1 : index + 1
                continue
            }
            // A footnote's reference, `[^1]`, is no text of its own.
            if character == "[", next == "^", let close = characters[(index + 1)...].prefix(40).firstIndex(of: "]") {
                index = close + 1
                continue
            }
            if character == "[" || (character == "!" && next == "[") { index += 1; continue }
            if character == "`" { index += 1; continue }
            // Emphasis marks sit at a word's edge (`*a*`, `__b__`); inside a word (`snake_case`) they are text.
            // `~~` is GitHub's strikethrough; a lone `~` (`~30 °C`) is text.
            if character == "*" || character == "_" || (character == "~" && (next == "~" || (index > 0 && characters[index - 1] == "~"))),
                !(isWordCharacter(index - 1) && isWordCharacter(index + 1)),
                isWordCharacter(index - 1) || isWordCharacter(index + 1) || next == character || (index > 0 && characters[index - 1] == character)
            {
                index += 1
                continue
            }
            // Heading and quote marks open a line.
            if lineStart, character == "#" || character == ">" { index += 1; continue }
            plain.append(character.isWhitespace ? " " : character)
            index += 1
        }
        let words = plain.split(separator: " ")
        var excerpt = ""
        for word in words {
            if excerpt.count + word.count + 1 > limit {
                // One word longer than the whole excerpt is cut, rather than leaving nothing.
                return (excerpt.isEmpty ? String(word.prefix(limit)) : excerpt) + "…"
            }
            excerpt += (excerpt.isEmpty ? "" : " ") + word
        }
        return excerpt
    }
}
