import Foundation
import SiteRender
import SiteStore

/// A page path with `{name}` placeholders, filled from a record's fields.
struct PathPattern {
    let pattern: String
    /// The pattern cut at its placeholders: literal text, then a placeholder's name, and so on
    /// (a page per record fills it: it is parsed once).
    private let parts: [(literal: String, name: String?)]

    init(_ pattern: String) {
        self.pattern = pattern
        var parts: [(literal: String, name: String?)] = []
        var rest = pattern[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            parts.append((String(rest[..<open]), String(rest[rest.index(after: open)..<close])))
            rest = rest[rest.index(after: close)...]
        }
        parts.append((String(rest), nil))
        self.parts = parts
    }

    /// The placeholder names, in order.
    var placeholders: [String] { parts.compactMap(\.name) }

    /// The path with each placeholder replaced by the slug of `value(n)`, for the n-th placeholder
    /// (`placeholders[n]` names it).
    func fill(_ value: (Int) -> String?) -> String {
        var path = ""
        var placeholder = 0
        for part in parts {
            path += part.literal
            if part.name != nil {
                path += slugify(value(placeholder) ?? "")
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
