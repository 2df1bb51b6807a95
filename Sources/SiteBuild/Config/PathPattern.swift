import Foundation
import SiteRender
import SiteStore

/// A page path with `{name}` placeholders, filled from a record's fields; `{date:yyyy}`, `{date:MM}` and
/// `{date:dd}` take the year, month or day of a date field (`/{date:yyyy}/{date:MM}/{slug}/`).
struct PathPattern {
    let pattern: String
    /// The pattern cut at its placeholders: literal text, then a placeholder's name (and the date part it
    /// takes, if any), and so on (a page per record fills it: it is parsed once).
    private let parts: [(literal: String, name: String?, datePart: DatePart?)]

    /// A part of a date (`2024-03-10`, as date and datetime fields hold it): its characters in that text.
    enum DatePart: String, CaseIterable {
        case year = "yyyy", month = "MM", day = "dd"

        var range: Range<Int> {
            switch self {
            case .year: 0..<4
            case .month: 5..<7
            case .day: 8..<10
            }
        }

        /// The part of `value`, or nil when the value does not start with a date.
        func of(_ value: String) -> String? {
            let characters = Array(value.utf8.prefix(10))
            let digits = [0, 1, 2, 3, 5, 6, 8, 9]
            guard characters.count == 10, characters[4] == UInt8(ascii: "-"), characters[7] == UInt8(ascii: "-"),
                  digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(characters[$0]) }) else { return nil }
            return String(decoding: characters[range], as: UTF8.self)
        }
    }

    init(_ pattern: String) {
        self.pattern = pattern
        var parts: [(literal: String, name: String?, datePart: DatePart?)] = []
        var rest = pattern[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            let inside = rest[rest.index(after: open)..<close]
            let halves = inside.split(separator: ":", maxSplits: 1).map(String.init)
            let datePart = halves.count == 2 ? DatePart(rawValue: halves[1]) : nil
            parts.append((String(rest[..<open]), datePart == nil ? String(inside) : halves[0], datePart))
            rest = rest[rest.index(after: close)...]
        }
        parts.append((String(rest), nil, nil))
        self.parts = parts
    }

    /// The placeholder names, in order (`date` for `{date:yyyy}`).
    var placeholders: [String] { parts.compactMap(\.name) }

    /// The names of the placeholders that take a date part.
    var datePlaceholders: [String] { parts.filter { $0.datePart != nil }.compactMap(\.name) }

    /// The path with each placeholder replaced by the slug of `value(n)`, for the n-th placeholder
    /// (`placeholders[n]` names it).
    func fill(_ value: (Int) -> String?) -> String {
        var path = ""
        var placeholder = 0
        for part in parts {
            path += part.literal
            if part.name != nil {
                let text = value(placeholder) ?? ""
                path += slugify(part.datePart.map { $0.of(text) ?? "" } ?? text)
                placeholder += 1
            }
        }
        // No part is longer than the whole.
        guard path.utf8.count > Self.longestSegment else { return path }
        return path.split(separator: "/", omittingEmptySubsequences: false).map(Self.shortened).joined(separator: "/")
    }

    /// The most bytes a part of a page's path keeps. File systems allow 255 a name, and a page is written
    /// through a temporary file named after it with some 40 more: a record titled at length failed the build.
    static let longestSegment = 200

    /// `segment` cut to `longestSegment` bytes, at a hyphen where one is near the end, and given a hash of
    /// the whole so that two long titles that begin alike stay two pages; as it is when short enough.
    static func shortened(_ segment: Substring) -> String {
        guard segment.utf8.count > longestSegment else { return String(segment) }
        let suffix = "-" + String(format: "%08x", UInt32(truncatingIfNeeded: SiteStore.pathKey(String(segment))))
        var kept = Substring(""), bytes = 0
        for character in segment {
            let size = character.utf8.count
            guard bytes + size <= longestSegment - suffix.utf8.count else { break }
            kept.append(character)
            bytes += size
        }
        if let hyphen = kept.lastIndex(of: "-"), kept.distance(from: kept.startIndex, to: hyphen) >= kept.count / 2 {
            kept = kept[..<hyphen]
        }
        while kept.hasSuffix("-") { kept.removeLast() }
        return kept + suffix
    }
}
