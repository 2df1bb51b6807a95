import Foundation

/// Makes the links of a feed's HTML absolute: content republished on another site keeps pointing where its
/// author meant (`<img src="pic.png">` in an item of `https://e.com/2024/post.html` is
/// `https://e.com/2024/pic.png`), as feed readers make them.
public enum HTMLLinks {
    /// The attributes that hold a URL a reader follows or loads.
    private static let urlAttributes: Set<String> = ["href", "src", "poster", "cite", "action", "background"]
    /// The attributes that hold a list of image candidates, each a URL and its width or density
    /// (`srcset="a.png 1x, a@2x.png 2x"`).
    private static let candidateAttributes: Set<String> = ["srcset", "imagesrcset"]

    /// `html` with every relative URL of a link attribute (`href`, `src`, each of a `srcset`'s…) resolved against `base`; the rest
    /// of the text and URLs with a scheme are left as they are, and so are fragments (`#top`) unless
    /// `fragments` says the HTML leaves its page (a feed sitegen writes: `#fn-1` is on the entry's page,
    /// not the reader's).
    public static func resolving(_ html: String, against base: URL, fragments: Bool = false) -> String {
        guard html.contains("=") else { return html }
        let bytes = Array(html.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 64)
        var index = 0
        var copied = 0
        func isNameByte(_ byte: UInt8) -> Bool {
            !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C || byte == UInt8(ascii: "=")
                || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/"))
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C }
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else { index += 1; continue }
            if bytes[index...].starts(with: Array("<!--".utf8)) {
                // A comment's text is not markup.
                var end = index + 4
                while end < bytes.count, !bytes[end...].starts(with: Array("-->".utf8)) { end += 1 }
                index = end
                continue
            }
            guard index + 1 < bytes.count, (bytes[index + 1] | 0x20) >= UInt8(ascii: "a"), (bytes[index + 1] | 0x20) <= UInt8(ascii: "z") else {
                index += 1
                continue
            }
            // A start tag: its name, then its attributes up to `>`.
            index += 1
            while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
            while index < bytes.count, bytes[index] != UInt8(ascii: ">") {
                if isSpace(bytes[index]) || bytes[index] == UInt8(ascii: "/") { index += 1; continue }
                let nameStart = index
                while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
                let name = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
                while index < bytes.count, isSpace(bytes[index]) { index += 1 }
                guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { continue }
                index += 1
                while index < bytes.count, isSpace(bytes[index]) { index += 1 }
                guard index < bytes.count else { break }
                let quote = bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") ? bytes[index] : nil
                if quote != nil { index += 1 }
                let valueStart = index
                while index < bytes.count, quote.map({ bytes[index] != $0 }) ?? !(isSpace(bytes[index]) || bytes[index] == UInt8(ascii: ">")) {
                    index += 1
                }
                let valueEnd = index
                if quote != nil, index < bytes.count { index += 1 }
                let isList = candidateAttributes.contains(name)
                guard isList || urlAttributes.contains(name) else { continue }
                let value = String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self)
                guard let absolute = isList ? resolvedCandidates(value, against: base) : resolved(value, against: base, fragments: fragments)
                else { continue }
                output += bytes[copied..<valueStart]
                output += Array(absolute.utf8)
                copied = valueEnd
            }
        }
        guard copied > 0 else { return html }
        output += bytes[copied...]
        return String(decoding: output, as: UTF8.self)
    }

    /// A `srcset` with each candidate's URL made absolute against `base`, its descriptors and separators as
    /// they were; nil when none changed. Split as the HTML standard splits it: a URL runs to the next space
    /// (commas at its end close the candidate), and descriptors run to a comma outside parentheses.
    private static func resolvedCandidates(_ value: String, against base: URL) -> String? {
        // Scalars, not characters: "\r\n" is one character, and a combining mark joins the character before it.
        let characters = Array(value.unicodeScalars)
        var output = String.UnicodeScalarView(), index = 0, changed = false
        func isSpace(_ character: Unicode.Scalar) -> Bool { character == " " || character == "\t" || character == "\n" || character == "\r" || character == "\u{0C}" }
        while index < characters.count {
            while index < characters.count, isSpace(characters[index]) || characters[index] == "," {
                output.append(characters[index])
                index += 1
            }
            guard index < characters.count else { break }
            let start = index
            while index < characters.count, !isSpace(characters[index]) { index += 1 }
            var end = index
            while end > start, characters[end - 1] == "," { end -= 1 }
            let url = String(String.UnicodeScalarView(characters[start..<end]))
            if let absolute = resolved(url, against: base, fragments: false) {
                output.append(contentsOf: absolute.unicodeScalars)
                changed = true
            } else {
                output.append(contentsOf: url.unicodeScalars)
            }
            output.append(contentsOf: characters[end..<index])
            guard end == index else { continue }
            var depth = 0
            while index < characters.count {
                let character = characters[index]
                if character == "(" { depth += 1 } else if character == ")" { depth = max(0, depth - 1) } else if character == ",", depth == 0 { break }
                output.append(character)
                index += 1
            }
        }
        return changed ? String(output) : nil
    }

    /// `value` made absolute against `base`, or nil when it is absolute already, a fragment (unless
    /// `fragments`), empty, or no URL.
    private static func resolved(_ value: String, against base: URL, fragments: Bool) -> String? {
        let trimmed = trimmingSpaces(value)
        guard !trimmed.isEmpty, fragments || !trimmed.hasPrefix("#") else { return nil }
        // A scheme (`https:`, `mailto:`, `data:`) comes before any `/`, `?` or `#`.
        if let colon = trimmed.firstIndex(of: ":"), !trimmed[..<colon].contains(where: { "/?#".contains($0) }) { return nil }
        guard let url = URL(string: trimmed, relativeTo: base)?.absoluteURL, url.scheme != nil else { return nil }
        return url.absoluteString
    }

    /// `value` without the spaces and tabs at its ends (what `CharacterSet.whitespaces` holds here: tab, the
    /// space separators and U+200B, every scalar compared), in Swift: Foundation's `trimmingCharacters` went
    /// through NSString, and was a tenth of a build that wrote feed archives (decisions.md, 38).
    static func trimmingSpaces(_ value: String) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = value.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = scalars.lastIndex { !isSpace($0) }!
        if first == scalars.startIndex && last == scalars.index(before: scalars.endIndex) { return value }
        return String(scalars[first...last])
    }
}
