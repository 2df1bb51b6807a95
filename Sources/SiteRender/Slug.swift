import Foundation

/// A URL path segment made from `text`: lower-case ASCII letters and digits joined by single hyphens.
public func slugify(_ text: String) -> String {
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

/// `slugify` for any text: composed (NFC) and lower-cased as Unicode, then the letters and digits kept, a
/// Latin letter with marks as its ASCII letter.
public func unicodeSlug(_ text: String) -> String {
    var slug = ""
    var pendingHyphen = false
    // Whether the last scalar kept is another script's letter, whose marks (Devanagari's vowel signs) it keeps.
    var afterOtherScript = false
    // Composed first: a name typed on a Mac (decomposed, NFD) and the same name typed elsewhere must make
    // one address, as the two compare equal everywhere else (RFC 3987 makes IRIs of NFC text).
    for scalar in composedCanonically(text).lowercased().unicodeScalars {
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

/// `text` in Unicode Normalization Form C. Swift compares strings by canonical equivalence, SQLite and
/// file systems by bytes: keys, sections and addresses are composed so that both agree.
public func composedCanonically(_ text: String) -> String {
    // Every character below U+0300 (a lead byte below 0xCC) is its own composition, and no mark follows it
    // there: ASCII and Latin-1 text is returned as it is, without going through Foundation.
    guard text.utf8.contains(where: { $0 >= 0xCC }) else { return text }
    // Typographic punctuation (’ “ ” – — … •) and currency signs (€) are as common in titles as accented
    // letters, and compose with nothing either: Foundation's normalization costs microseconds a string.
    guard text.unicodeScalars.contains(where: { scalar in
        !(scalar.value < 0x300 || (0x2010...0x2027).contains(scalar.value) || (0x2030...0x205E).contains(scalar.value)
            || (0x20A0...0x20C0).contains(scalar.value))
    }) else { return text }
    return text.precomposedStringWithCanonicalMapping
}
