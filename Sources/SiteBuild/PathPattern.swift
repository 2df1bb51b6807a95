/// A page path with `{name}` placeholders, filled from a record's fields.
struct PathPattern {
    let pattern: String

    init(_ pattern: String) {
        self.pattern = pattern
    }

    /// The placeholder names, in order.
    var placeholders: [String] {
        var names: [String] = []
        var rest = pattern[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// The path with each placeholder replaced by the slug of `value(name)`, in one pass (a page per
    /// record makes this hot: Foundation's search and replace was a tenth of rendering a listing).
    func fill(_ value: (String) -> String?) -> String {
        var path = ""
        var rest = pattern[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            path += rest[..<open]
            path += slugify(value(String(rest[rest.index(after: open)..<close])) ?? "")
            rest = rest[rest.index(after: close)...]
        }
        return path + rest
    }
}

/// A URL path segment made from `text`: lower-case ASCII letters and digits joined by single hyphens.
func slugify(_ text: String) -> String {
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
