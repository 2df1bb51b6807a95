import Foundation
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


/// A URL path segment made from `text`: lower-case ASCII letters and digits joined by single hyphens.
func slugify(_ text: String) -> String {
    // Most keys are slugs already: one scan of the bytes says so, and the text is its own slug. Other
    // ASCII text is made a byte at a time; the rest goes through Unicode lower-casing, which can turn a
    // non-ASCII letter into an ASCII one (K, the Kelvin sign, into k).
    var text = text
    text.makeContiguousUTF8()
    return text.utf8.withContiguousStorageIfAvailable { bytes in
        switch SlugShape(of: bytes) {
        case .slug: return text
        case .ascii: return asciiSlug(bytes)
        case .unicode: return unicodeSlug(text)
        }
    } ?? unicodeSlug(text)
}

/// What a text's bytes need to become a slug.
private enum SlugShape {
    /// Nothing: lower-case letters and digits, single hyphens between them.
    case slug
    /// ASCII, but not a slug as it stands.
    case ascii
    /// Some bytes are not ASCII.
    case unicode

    init(of bytes: UnsafeBufferPointer<UInt8>) {
        var isSlug = !bytes.isEmpty
        // A hyphen before the start makes a leading hyphen, like a doubled one, disqualify the text.
        var previous = UInt8(ascii: "-")
        for byte in bytes {
            if byte >= 0x80 {
                self = .unicode
                return
            }
            let letterOrDigit = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            isSlug = isSlug && (letterOrDigit || (byte == UInt8(ascii: "-") && previous != UInt8(ascii: "-")))
            previous = byte
        }
        self = isSlug && previous != UInt8(ascii: "-") ? .slug : .ascii
    }
}

/// `slugify` for ASCII bytes.
private func asciiSlug(_ text: UnsafeBufferPointer<UInt8>) -> String {
    var length = 0
    let slug = String(unsafeUninitializedCapacity: text.count) { slug in
        var pendingHyphen = false
        for byte in text {
            let lower = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(lower) {
                // A hyphen stands for a run of other bytes between two kept ones, so the slug is never longer than the text.
                if pendingHyphen, length > 0 {
                    slug[length] = UInt8(ascii: "-")
                    length += 1
                }
                slug[length] = lower
                length += 1
                pendingHyphen = false
            } else {
                pendingHyphen = true
            }
        }
        return length
    }
    return length == 0 ? "untitled" : slug
}

/// `slugify` for any text: lower-cased as Unicode, then the letters and digits kept, a Latin letter with
/// marks as its ASCII letter.
func unicodeSlug(_ text: String) -> String {
    var slug = ""
    var pendingHyphen = false
    // Whether the last scalar kept is another script's letter, whose marks (Devanagari's vowel signs) it keeps.
    var afterOtherScript = false
    for scalar in text.lowercased().unicodeScalars {
        // A mark belongs to the letter before it (a decomposed ü): it is not a break between words.
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark:
            if afterOtherScript { slug.unicodeScalars.append(scalar) }
            continue
        default: break
        }
        afterOtherScript = false
        // A Latin letter with a mark keeps its letter (café is cafe, not caf), as do letters spelt in ASCII.
        let letters = scalar.isASCII ? String(scalar) : latinLetters[scalar] ?? String(scalar).decomposedStringWithCanonicalMapping
        var kept = false
        for letter in letters.unicodeScalars where letter.isASCII && (letter.properties.isAlphabetic || ("0"..."9").contains(letter)) {
            if !kept, pendingHyphen, !slug.isEmpty { slug.append("-") }
            slug.unicodeScalars.append(letter)
            kept = true
        }
        // Other scripts' letters and digits stay as they are (`東京`, `москва`), as Hugo keeps them: dropped,
        // every Cyrillic or Chinese title was `untitled`, and two of them one page.
        if !kept, !scalar.isASCII, scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
            if pendingHyphen, !slug.isEmpty { slug.append("-") }
            slug.unicodeScalars.append(scalar)
            kept = true
            afterOtherScript = true
        }
        if kept {
            pendingHyphen = false
        } else {
            pendingHyphen = true
        }
    }
    return slug.isEmpty ? "untitled" : slug
}

/// Latin letters that are not an ASCII letter with marks, and the ASCII letters they are written with.
private let latinLetters: [Unicode.Scalar: String] = [
    "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "ł": "l", "þ": "th", "ı": "i", "ħ": "h", "ŧ": "t",
]
