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

    /// The path with each placeholder replaced by the slug of `value(name)`.
    func fill(_ value: (String) -> String?) -> String {
        var path = ""
        for part in parts {
            path += part.literal
            if let name = part.name { path += slugify(value(name) ?? "") }
        }
        return path
    }
}

/// A URL path segment made from `text`: lower-case ASCII letters and digits joined by single hyphens.
func slugify(_ text: String) -> String {
    // ASCII text (nearly every key and field) a byte at a time; the rest through Unicode lower-casing,
    // which can turn a non-ASCII letter into an ASCII one (K, the Kelvin sign, into k).
    if text.utf8.allSatisfy({ $0 < 0x80 }) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var pendingHyphen = false
        for byte in text.utf8 {
            let lower = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(lower) {
                if pendingHyphen, !bytes.isEmpty { bytes.append(UInt8(ascii: "-")) }
                bytes.append(lower)
                pendingHyphen = false
            } else {
                pendingHyphen = true
            }
        }
        return bytes.isEmpty ? "untitled" : String(decoding: bytes, as: UTF8.self)
    }
    return unicodeSlug(text)
}

/// `slugify` for any text: lower-cased as Unicode, then the ASCII letters and digits kept.
func unicodeSlug(_ text: String) -> String {
    var slug = ""
    var pendingHyphen = false
    for scalar in text.lowercased().unicodeScalars {
        if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
            if pendingHyphen, !slug.isEmpty { slug.append("-") }
            slug.unicodeScalars.append(scalar)
            pendingHyphen = false
        } else {
            pendingHyphen = true
        }
    }
    return slug.isEmpty ? "untitled" : slug
}
