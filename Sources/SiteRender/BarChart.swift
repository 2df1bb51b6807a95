/// A horizontal bar chart as inline SVG: no script, no fonts to load, the same bytes for the same data.
///
/// ```swift
/// let svg = BarChart(title: "Banks by state", bars: [.init(label: "CA", value: 11, link: "/states/ca/")]).svg()
/// ```
public struct BarChart: Sendable, Equatable {
    /// One bar.
    public struct Bar: Sendable, Equatable {
        /// The label left of the bar.
        public var label: String
        /// Its length.
        public var value: Int
        /// Where a click on it goes, if anywhere.
        public var link: String?

        /// Makes a bar.
        public init(label: String, value: Int, link: String? = nil) {
            self.label = label
            self.value = value
            self.link = link
        }
    }

    /// What the chart shows (its accessible name).
    public var title: String
    /// The bars, top to bottom.
    public var bars: [Bar]
    /// The drawing's width in pixels.
    public var width: Int

    /// Describes a chart.
    public init(title: String, bars: [Bar], width: Int = 640) {
        self.title = title
        self.bars = bars
        self.width = width
    }

    /// `label` as it fits in `width` pixels of 13-pixel type, by an estimate of its characters' widths (no
    /// font is at hand): whole, or cut with an ellipsis.
    static func fitted(_ label: String, width: Double) -> String {
        func estimate(_ character: Character) -> Double {
            guard let scalar = character.unicodeScalars.first else { return 0 }
            // East Asian scripts and emoji take a whole em; capitals and wide letters more than most.
            if scalar.value >= 0x1100 { return 13 }
            if "MWmw@%".contains(character) { return 11 }
            return character.isUppercase || character.isNumber ? 8.5 : 7
        }
        var used = 0.0
        for (offset, character) in label.enumerated() {
            used += estimate(character)
            guard used > width else { continue }
            var kept = label.prefix(offset)
            var keptWidth = kept.reduce(0) { $0 + estimate($1) }
            while keptWidth + 8 > width, let last = kept.popLast() { keptWidth -= estimate(last) }
            // At a word's end, when one ends in the second half.
            if let space = kept.lastIndex(of: " "), kept.distance(from: kept.startIndex, to: space) >= kept.count / 2 { kept = kept[..<space] }
            return kept.trimmingCharacters(in: .whitespaces) + "…"
        }
        return label
    }

    /// The chart as an `<svg>` element.
    public func svg() -> String {
        let rowHeight = 22, labelWidth = 160, countWidth = 60
        let height = max(1, bars.count) * rowHeight + 8
        let largest = max(1, bars.map(\.value).max() ?? 1)
        let room = width - labelWidth - countWidth
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" width=\"\(width)\" height=\"\(height)\" "
            + "viewBox=\"0 0 \(width) \(height)\" aria-label=\"\(escapeXML(title))\">\n<title>\(escapeXML(title))</title>\n"
        for (index, bar) in bars.enumerated() {
            let y = 4 + index * rowHeight
            let length = bar.value == 0 ? 0 : max(1, bar.value * room / largest)
            // A label wider than its room is cut, whole on hover: it is drawn leftwards from the bar and
            // would run off the chart's edge.
            let shown = Self.fitted(bar.label, width: Double(labelWidth - 12))
            let label = shown == bar.label ? escapeXML(bar.label) : "<title>\(escapeXML(bar.label))</title>" + escapeXML(shown)
            var row = "<text x=\"\(labelWidth - 8)\" y=\"\(y + 15)\" text-anchor=\"end\" font-size=\"13\" fill=\"#1d2330\">"
                + label + "</text>"
            row += "<rect x=\"\(labelWidth)\" y=\"\(y + 3)\" width=\"\(length)\" height=\"\(rowHeight - 6)\" fill=\"#0b5cad\"/>"
            row += "<text x=\"\(labelWidth + length + 6)\" y=\"\(y + 15)\" font-size=\"13\" fill=\"#5b6270\">\(bar.value)</text>"
            // A bar's link is for the pointer alone: inside `role="img"` a link has no name a screen reader
            // could speak, and keyboards would stop at every bar of a chart whose page lists the same links.
            if let link = bar.link { row = "<a href=\"\(escapeXML(link))\" tabindex=\"-1\" aria-hidden=\"true\">" + row + "</a>" }
            svg += row + "\n"
        }
        return svg + "</svg>"
    }
}

/// Pieces of GitHub-flavoured Markdown for reports: tables and links with their text escaped.
public enum MarkdownReport {
    /// A GFM table; the columns in `rightAligned` (numbers) are aligned right.
    public static func table(headers: [String], rightAligned: Set<Int> = [], rows: [[String]]) -> String {
        var lines = ["| " + headers.map(cell).joined(separator: " | ") + " |"]
        lines.append("|" + headers.indices.map { rightAligned.contains($0) ? "---:" : "---" }.joined(separator: "|") + "|")
        for row in rows { lines.append("| " + row.joined(separator: " | ") + " |") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as a table cell: on one line, its pipes escaped, and Markdown's own characters taken literally;
    /// a web address as an autolink (`<https://…>`), where a backslash would be part of the address.
    public static func cell(_ text: String) -> String { cell(text, autolinks: true) }

    /// `text` as a cell, its web addresses autolinks unless it is a link's text (a link holds no link).
    private static func cell(_ text: String, autolinks: Bool) -> String {
        var escaped = ""
        var words = text.split(omittingEmptySubsequences: false) { $0 == " " || $0.isNewline }[...]
        while let word = words.popFirst() {
            if autolinks, let (before, address, after) = webAddress(in: word) {
                escapeCharacters(of: before, into: &escaped)
                escaped += "<" + address.replacingOccurrences(of: "|", with: "\\|") + ">"
                escapeCharacters(of: after, into: &escaped)
            } else {
                escapeCharacters(of: word, into: &escaped)
            }
            if !words.isEmpty { escaped.append(" ") }
        }
        return escaped
    }

    /// Appends `text` with every character GitHub's Markdown would take as syntax escaped: emphasis,
    /// strikethrough (`~~`), code, links, HTML, headings, entities (`&amp;` stays as written) and math (`$`).
    private static func escapeCharacters(of text: Substring, into escaped: inout String) {
        for character in text {
            switch character {
            case "|", "\\", "*", "_", "`", "[", "]", "<", ">", "#", "~", "&", "$": escaped += "\\" + String(character)
            default: escaped.append(character)
            }
        }
    }

    /// The web address a word holds (`https://data.example.gov/raw_data/`), apart from the brackets and
    /// punctuation of the sentence around it (`(see https://x.org/a_b).`), as GitHub finds one; nil when the
    /// word holds none.
    private static func webAddress(in word: Substring) -> (before: Substring, address: Substring, after: Substring)? {
        let start = word.firstIndex { $0 != "(" } ?? word.endIndex
        let rest = word[start...]
        guard rest.hasPrefix("https://") || rest.hasPrefix("http://"),
              !rest.contains(where: { $0 == "<" || $0 == ">" || $0.unicodeScalars.contains { $0.properties.generalCategory == .control } })
        else { return nil }
        var end = rest.endIndex
        while end > rest.startIndex {
            let last = rest[rest.index(before: end)]
            let unbalanced = last == ")" && rest[..<end].filter { $0 == ")" }.count > rest[..<end].filter { $0 == "(" }.count
            guard ".,;:!?".contains(last) || unbalanced else { break }
            end = rest.index(before: end)
        }
        guard rest.distance(from: rest.startIndex, to: end) > (rest.hasPrefix("https://") ? 8 : 7) else { return nil }
        return (word[..<start], rest[..<end], rest[end...])
    }

    /// A link whose text is `text` (escaped as a cell) and whose target is `url` (spaces and parentheses encoded).
    public static func link(_ text: String, _ url: String) -> String {
        let target = url.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "(", with: "%28")
            .replacingOccurrences(of: ")", with: "%29")
        return "[\(cell(text, autolinks: false))](\(target))"
    }
}
