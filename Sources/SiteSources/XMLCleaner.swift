/// Prepares a feed's UTF-8 bytes for the XML parser, a chunk at a time, in two ways at once:
///
/// - The inside of every comment, and every processing instruction but the XML declaration, is blanked
///   (newlines kept, so every line and column the parser reports stays true). Nothing in them matters to
///   a feed, and FoundationXML traps, killing the process, on some bytes there instead of reporting an error.
/// - HTML named entities (`&nbsp;`, `&eacute;`) outside CDATA sections are rewritten as numeric character
///   references. XML declares only five names, yet feeds written by HTML tools use the others all the
///   time; libxml2 would reject the whole document.
///
/// - References to the general entities the document type declares in its internal subset
///   (`<!ENTITY co "Example Corp">`) are replaced by their text: FoundationXML reports no text for them,
///   so `&co;` would vanish from the item.
///
/// Each decision looks at most `lookahead` bytes ahead, so that many are held back between chunks.
struct XMLCleaner {
    private enum State {
        case text, cdata, comment, instruction
    }

    /// The longest look past a byte: an entity (`&` + a name of up to `longestName` bytes + `;`), or `<![CDATA[`.
    private static let lookahead = longestName + 2
    /// The longest entity name replaced (HTML's are at most 8 letters).
    private static let longestName = 40

    /// The text of each general entity the document declares, by name (`internalEntities(in:)`).
    var declared: [String: [UInt8]] = [:]
    /// Where the document type's internal subset is (`[` to `]`, as byte offsets of the document): blanked,
    /// since its entities are replaced here. libxml2 expanding nested ones itself took minutes a reference.
    var internalSubset: Range<Int>?
    /// The declared entities whose values were cut short (`internalEntities(in:)`).
    private var cutDeclared: Set<String> = []
    /// Those of them the document uses, for a warning.
    private(set) var cutEntities: [String] = []
    /// The entities the document type declares as external (`SYSTEM` or `PUBLIC`: another file), never read.
    private var externalDeclared: Set<String> = []
    /// The first reference left out because replacements reached `expansionLimit`, its line, and how many
    /// references were replaced before it: the budget, not the entity, is what ran out.
    private(set) var firstOverBudget: (name: String, line: Int, replaced: Int)?
    /// References to declared entities replaced so far.
    private var replacedReferences = 0
    /// The first reference to an entity that is neither XML's own, HTML's nor declared with its text, and
    /// its line: libxml2 stops there ("undeclared entity"), without naming it.
    private(set) var firstUnknownReference: (name: String, line: Int)?
    /// The first HTML entity name the document uses (`&nbsp;`, not XML), and its line, for a warning.
    private(set) var firstHTMLEntity: (name: String, line: Int)?
    /// The line of the next byte to clean.
    private var line = 1

    /// What the cleaning changed that a reader should know, as warnings about `file`.
    func warnings(file: String) -> [SourceError] {
        var warnings = cutEntities.map {
            SourceError(file: file, line: 1, reason: "the entity '\($0)' declared in the document type nests too deep or grows past 64 KiB; its references are left out")
        }
        if let (name, line, replaced) = firstOverBudget {
            warnings.append(SourceError(file: file, line: line, reason: "references to the entities the document type declares may add at most "
                + "\(Self.expansionLimit >> 20) MiB to a document; the first \(replaced) were replaced, and from this one (&\(name);) on they are left out"))
        }
        if let (name, line) = firstHTMLEntity {
            warnings.append(SourceError(file: file, line: line, reason: "HTML entity names such as '&\(name);' are not XML; read as the characters they name"))
        }
        return warnings
    }

    /// Reads the document type's declarations at the start of a document (its first chunk).
    mutating func declare<Bytes: Collection<UInt8>>(from bytes: Bytes) {
        let found = Self.declarations(in: bytes)
        declared = found.values
        internalSubset = found.subset
        cutDeclared = Set(found.cut)
        externalDeclared = found.external
    }
    /// The most that replacing declared entities may add to a document: a small value referenced a million
    /// times must not make gigabytes (past it, references are left out, with a warning).
    static let expansionLimit = 16 << 20
    /// How many more bytes replacing them may add to the document.
    private var expansionBudget = expansionLimit

    /// What to say of libxml2's "undeclared entity" error at `line`: the entity it stopped at, by name, and
    /// why it is not known; nil when the cleaner saw no such reference there.
    func undeclaredEntityReason(atLine line: Int) -> String? {
        guard let (name, referenceLine) = firstUnknownReference, referenceLine == line else { return nil }
        if externalDeclared.contains(name) {
            return "the entity '&\(name);' is declared in the document type as external (SYSTEM or PUBLIC: another file's text), "
                + "which sitegen never reads; declare its text (<!ENTITY \(name) \"...\">), or write &amp;\(name); for the characters '&\(name);'"
        }
        return "the entity '&\(name);' is not declared (XML has only &amp; &lt; &gt; &quot; &apos;; HTML's names are read too); "
            + "declare it in the document type, or write &amp;\(name); for the characters '&\(name);'"
    }
    private var state = State.text
    private var held: [UInt8] = []
    /// Bytes consumed before `held` begins (the XML declaration is kept only at offset 0).
    private var offset = 0

    /// Cleans the next `chunk`, appending what is ready to `output`.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, into output: inout [UInt8]) {
        held.append(contentsOf: chunk)
        process(into: &output, final: false)
    }

    /// Cleans what was held back at the end of the document.
    mutating func finish(into output: inout [UInt8]) {
        process(into: &output, final: true)
    }

    /// The whole of `bytes`, cleaned.
    static func cleaned(_ bytes: [UInt8]) -> [UInt8] {
        cleanedWithWarnings(bytes, file: "").bytes
    }

    /// `cleaned(_:)`, and what a reader of `file` should be warned of (`warnings(file:)`).
    static func cleanedWithWarnings(_ bytes: [UInt8], file: String) -> (bytes: [UInt8], warnings: [SourceError]) {
        let (cleaned, cleaner) = cleaning(bytes)
        return (cleaned, cleaner.warnings(file: file))
    }

    /// `cleaned(_:)`, and the cleaner, which knows what it changed and saw.
    static func cleaning(_ bytes: [UInt8]) -> (bytes: [UInt8], cleaner: XMLCleaner) {
        var cleaner = XMLCleaner()
        cleaner.declare(from: bytes.prefix(SourceInput.chunkSize))
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        bytes.withUnsafeBytes { cleaner.feed($0, into: &output) }
        cleaner.finish(into: &output)
        return (output, cleaner)
    }

    private mutating func process(into output: inout [UInt8], final: Bool) {
        let bytes = held
        let end = final ? bytes.count : bytes.count - Self.lookahead
        var index = 0
        func matches(_ marker: StaticString, at position: Int) -> Bool {
            let count = marker.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            for step in 0..<count where bytes[position + step] != marker.utf8Start[step] { return false }
            return true
        }
        func blank(_ byte: UInt8) -> UInt8 { byte == 0x0A ? 0x0A : 0x20 }
        while index < end {
            let byte = bytes[index]
            if byte == 0x0A { line += 1 }
            if let subset = internalSubset, subset.contains(offset + index) {
                output.append(blank(byte))
                index += 1
                continue
            }
            switch state {
            case .cdata:
                if matches("]]>", at: index) {
                    output += [0x5D, 0x5D, 0x3E]
                    index += 3
                    state = .text
                } else {
                    output.append(byte)
                    index += 1
                }
            case .comment:
                if matches("-->", at: index) {
                    output += [0x2D, 0x2D, 0x3E]
                    index += 3
                    state = .text
                } else {
                    output.append(blank(byte))
                    index += 1
                }
            case .instruction:
                if matches("?>", at: index) {
                    output += [0x20, 0x20]
                    index += 2
                    state = .text
                } else {
                    output.append(blank(byte))
                    index += 1
                }
            case .text:
                if byte == UInt8(ascii: "<") {
                    if matches("<![CDATA[", at: index) {
                        output += Array("<![CDATA[".utf8)
                        index += 9
                        state = .cdata
                        continue
                    }
                    if matches("<!--", at: index) {
                        output += Array("<!--".utf8)
                        index += 4
                        state = .comment
                        continue
                    }
                    // The XML declaration stays (at the very start, `<?xml` then a space); anything else that
                    // looks like one, `<?xml\u{B4}` say, is an instruction whose target FoundationXML would trap on.
                    if matches("<?", at: index), !(offset + index == 0 && isDeclaration(bytes, at: index)) {
                        output += [0x20, 0x20]
                        index += 2
                        state = .instruction
                        continue
                    }
                }
                if byte == UInt8(ascii: "&"), let (code, length) = entity(in: bytes, at: index) {
                    if firstHTMLEntity == nil {
                        firstHTMLEntity = (String(decoding: bytes[(index + 1)..<(index + length - 1)], as: UTF8.self), line)
                    }
                    output += Array("&#\(code);".utf8)
                    index += length
                    continue
                }
                if byte == UInt8(ascii: "&"), !declared.isEmpty, let (name, text, length) = declaredEntity(in: bytes, at: index) {
                    // Past the budget a reference is left out, and said to be.
                    if cutDeclared.contains(name) {
                        if !cutEntities.contains(name) { cutEntities.append(name) }
                    } else if text.count <= expansionBudget {
                        expansionBudget -= text.count
                        replacedReferences += 1
                        output += text
                    } else if firstOverBudget == nil {
                        firstOverBudget = (name, line, replacedReferences)
                    }
                    index += length
                    continue
                }
                if byte == UInt8(ascii: "&"), firstUnknownReference == nil, let name = unknownEntity(in: bytes, at: index) {
                    firstUnknownReference = (name, line)
                }
                output.append(byte)
                index += 1
            }
        }
        offset += index
        held = Array(bytes[index...])
    }

    private func isDeclaration(_ bytes: [UInt8], at index: Int) -> Bool {
        let marker = Array("<?xml".utf8)
        guard index + marker.count < bytes.count, Array(bytes[index..<(index + marker.count)]) == marker else { return false }
        return [0x20, 0x09, 0x0D, 0x0A].contains(bytes[index + marker.count])
    }

    /// The code point and length of the HTML named entity at `index`, when that is one.
    private func entity(in bytes: [UInt8], at index: Int) -> (UInt32, Int)? {
        var end = index + 1
        while end < bytes.count, end - index <= 10, bytes[end].isASCIILetterOrDigit { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";"), end > index + 1,
            let code = HTMLEntities.codePoints[String(decoding: bytes[(index + 1)..<end], as: UTF8.self)]
        else { return nil }
        return (code, end + 1 - index)
    }
}

extension XMLCleaner {
    /// The entities XML declares itself.
    private static let predefinedNames: [[UInt8]] = ["amp", "lt", "gt", "quot", "apos"].map { Array($0.utf8) }

    /// The name of the entity referenced at `index` when it is none that XML, HTML or the document's own
    /// declarations with text know (a character reference `&#…;` is none).
    private func unknownEntity(in bytes: [UInt8], at index: Int) -> String? {
        var end = index + 1
        while end < bytes.count, end - index <= Self.longestName, bytes[end].isNameByte { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";"), end > index + 1 else { return nil }
        // XML's own five, compared as bytes: feeds escape HTML with thousands of them, and a name made for each
        // would cost the load.
        let nameBytes = bytes[(index + 1)..<end]
        for predefined in Self.predefinedNames where nameBytes.elementsEqual(predefined) { return nil }
        let name = String(decoding: nameBytes, as: UTF8.self)
        return declared[name] == nil ? name : nil
    }

    /// The text and length of the reference to a declared entity at `index`, when that is one.
    private func declaredEntity(in bytes: [UInt8], at index: Int) -> (String, [UInt8], Int)? {
        var end = index + 1
        while end < bytes.count, end - index <= Self.longestName, bytes[end].isNameByte { end += 1 }
        let name = String(decoding: bytes[(index + 1)..<min(end, bytes.count)], as: UTF8.self)
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";"), end > index + 1, let text = declared[name] else { return nil }
        return (name, text, end + 1 - index)
    }

    /// The general entities declared with a literal value in the internal subset of the document type
    /// at the start of `bytes` (`<!DOCTYPE rss [ <!ENTITY co "Example Corp"> ]>`), each value with the
    /// references to the others it makes replaced, a few levels deep and within a bound, so that no
    /// declaration can make the document grow without end. Parameter and external entities are left out.
    static func internalEntities<Bytes: Collection<UInt8>>(in bytes: Bytes) -> [String: [UInt8]] {
        declarations(in: bytes).values
    }

    /// What the internal subset at the start of `bytes` declares: the entities' values, the names of those
    /// cut short (nested deeper than three levels, or past 64 KiB), and where the subset is.
    static func declarations<Bytes: Collection<UInt8>>(in bytes: Bytes)
        -> (values: [String: [UInt8]], cut: [String], external: Set<String>, subset: Range<Int>?)
    {
        // Most feeds have no document type: the bytes are searched before any text is made of them.
        let all = Array(bytes)
        guard let found = all.firstRange(of: Array("<!DOCTYPE".utf8)),
            // Only a document type before the root element is one: `<!DOCTYPE` in an item's CDATA is text.
            !all[..<found.lowerBound].indices.contains(where: { all[$0] == UInt8(ascii: "<") && $0 + 1 < all.count && all[$0 + 1].isASCIILetter }),
            let open = all[found.upperBound...].firstIndex(where: { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: ">") }),
            all[open] == UInt8(ascii: "["), let close = all[open...].firstIndex(of: UInt8(ascii: "]"))
        else { return ([:], [], [], nil) }
        let text = String(decoding: all[open..<close], as: UTF8.self)
        var declared: [String: String] = [:]
        var external = Set<String>()
        var rest = text[...]
        while let start = rest.range(of: "<!ENTITY") {
            rest = rest[start.upperBound...]
            let afterSpace = rest.drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            guard afterSpace.first != "%" else { continue }
            let name = afterSpace.prefix { !" \t\r\n\"'>".contains($0) }
            let value = afterSpace.dropFirst(name.count).drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            if value.hasPrefix("SYSTEM") || value.hasPrefix("PUBLIC"), !name.isEmpty { external.insert(String(name)) }
            guard let quote = value.first, quote == "\"" || quote == "'", let end = value.dropFirst().firstIndex(of: quote),
                !name.isEmpty, name.count <= longestName, declared[String(name)] == nil
            else { continue }
            declared[String(name)] = String(value[value.index(after: value.startIndex)..<end])
        }
        // References to other declared entities, replaced three levels deep and to 64 KiB at most per value;
        // past either, the value is empty and its name is reported (the parser never sees a declaration,
        // so a reference left in would be one to an undeclared entity). Built a byte at a time with the bound
        // checked as it grows, so a value costs a few times 64 KiB at most: replacing whole strings level by
        // level made nested declarations, never used, take minutes and gigabytes.
        let values = declared.mapValues { Array($0.utf8) }
        var cut = Set<String>()
        // Each value at each depth is worked out once: a hundred declarations naming each other a hundred
        // times would otherwise be visited a hundred million times.
        var known: [String: [UInt8]?] = [:]
        func expanded(_ name: String, depth: Int) -> [UInt8]? {
            let key = "\(depth) \(name)"
            if let done = known[key] { return done }
            let result = expanding(name, depth: depth)
            known[key] = result
            return result
        }
        func expanding(_ name: String, depth: Int) -> [UInt8]? {
            let value = values[name]!
            guard value.contains(UInt8(ascii: "&")) else { return value }
            var result: [UInt8] = []
            var index = 0
            while index < value.count {
                if value[index] == UInt8(ascii: "&"), let semicolon = value[index...].prefix(longestName + 2).firstIndex(of: UInt8(ascii: ";")) {
                    let other = String(decoding: value[(index + 1)..<semicolon], as: UTF8.self)
                    if other != name, values[other] != nil {
                        guard depth < 3, let inner = expanded(other, depth: depth + 1), result.count + inner.count <= 64 << 10 else { return nil }
                        result += inner
                        index = semicolon + 1
                        continue
                    }
                }
                result.append(value[index])
                index += 1
            }
            return result
        }
        var expandedValues: [String: [UInt8]] = [:]
        for name in values.keys {
            if let value = expanded(name, depth: 0) {
                expandedValues[name] = value
            } else {
                expandedValues[name] = []
                cut.insert(name)
            }
        }
        return (expandedValues, cut.sorted(), external, open..<(close + 1))
    }
}

private extension UInt8 {
    /// A byte of an XML name as sitegen replaces it: ASCII letters, digits, `-`, `_`, `.`, or any byte of a
    /// character past ASCII.
    var isNameByte: Bool {
        isASCIILetterOrDigit || self == UInt8(ascii: "-") || self == UInt8(ascii: "_") || self == UInt8(ascii: ".") || self >= 0x80
    }

    var isASCIILetter: Bool { (self >= 0x61 && self <= 0x7A) || (self >= 0x41 && self <= 0x5A) }

    var isASCIILetterOrDigit: Bool {
        (self >= 0x61 && self <= 0x7A) || (self >= 0x41 && self <= 0x5A) || (self >= 0x30 && self <= 0x39)
    }
}
