/// Renders compiled templates into one string: a stack of contexts, names resolved through it, sections,
/// partials with their indentation, and layout blocks, as swift-mustache 2.1.1 renders them.
///
/// The output is a `String` appended to, not bytes turned into one at the end: every piece is already
/// valid UTF-8, and a page's bytes would otherwise be validated again.
struct TemplateRenderer {
    /// Where a list section is in its list, for `{{index()}}`, `{{#first()}}`, `{{#last()}}`, `{{#odd()}}`…
    struct ListPosition {
        let index: Int
        let count: Int

        func transformed(_ name: String) -> TemplateValue? {
            switch name {
            case "first": return .boolean(index == 0)
            case "last": return .boolean(index == count - 1)
            case "index": return .integer(index)
            case "even": return .boolean(index & 1 == 0)
            case "odd": return .boolean(index & 1 == 1)
            default: return nil
            }
        }
    }

    /// What a template is rendered with besides the context stack.
    struct Frame {
        /// The list position, inside a list section only (a nested context or partial has none).
        var position: ListPosition?
        /// Put before each line a node starts (after the first), inside an indented standalone partial or block.
        var indentation = ""
        /// The blocks the pages extending this layout override, the outermost page's winning.
        var overrides: [String: [TemplateNode]]?
        /// Whether `{{name}}` escapes HTML (`{{%CONTENT_TYPE: TEXT}}` turns it off).
        var escapesHTML = true
    }

    private let templates: [String: [TemplateNode]]
    private var output = ""
    private var stack: [TemplateValue] = []
    /// In a strict render, the names the root may lack; `nil` renders leniently.
    private let knownNames: Set<String>?
    /// Known names that only a record has (its fields): at the root with no record open, such a name is
    /// a field used where it can only print nothing.
    private let recordNames: Set<String>
    /// The site for sitegen's helpers on values that do not carry it (`TemplateValue.transformed`).
    private let site: TemplateText.Site?
    /// The pieces a list section of the page is made of, when it is rendered piece by piece.
    var fragments: ItemFragments?
    /// The template whose own tags are preferred when saying where an unknown name is used.
    private let preferredTemplate: String
    /// Names that no scope had, with where each was first used.
    private(set) var unknownNames: [String: SourceLocation] = [:]
    /// Records' fields used with no record open, with where each was first used.
    private(set) var fieldsOutsideRecords: [String: SourceLocation] = [:]
    /// The kind of page rendered, in a strict render that checks it.
    private let page: PageKind?
    /// Values printed by the page's own template, outside any section, that its kind of page never has.
    private(set) var valuesNotOnPage: [String: SourceLocation] = [:]
    /// How many sections the node being rendered is in (a boolean one pushes no context, but counts).
    private var sectionDepth = 0
    /// Whether the tag looked up is a variable printed outside any section.
    private var printingOutsideSections = false

    /// How deep partials and layouts may nest. Mustache lets a partial include itself so long as its data
    /// ends the recursion (a tree's `{{>node}}` inside `{{#children}}`), so no cycle is refused outright
    /// (`TemplateSet` refuses only one that no data can end); data that never ends it, or a tree deeper
    /// than any page shows, is an error at the tag rather than a stack overflow. 100, as other engines allow.
    static let nestingLimit = 100
    private var nesting = 0
    /// The partial or layout tag at which nesting went past `nestingLimit`; nothing renders after it.
    private(set) var runaway: (name: String, location: SourceLocation)?
    /// In a strict render, the templates that dynamic partials (`{{>*layout}}`) named and the folder does
    /// not have, where first named: a misspelt `layout: pots` would otherwise print nothing.
    private(set) var missingPartials: [String: (location: SourceLocation, value: String)] = [:]

    /// A renderer of the templates `templates` (partials are found there by name); strict when `knownNames`
    /// is given, and then `recordNames` are known inside a record only.
    init(templates: [String: [TemplateNode]], knownNames: Set<String>?, recordNames: Set<String> = [], page: PageKind? = nil,
         preferring preferredTemplate: String, site: TemplateText.Site? = nil) {
        self.templates = templates
        self.site = site
        self.knownNames = knownNames
        self.recordNames = recordNames
        self.page = page
        self.preferredTemplate = preferredTemplate
    }

    /// Renders `nodes` with `root` as the bottom of the context stack.
    mutating func render(_ nodes: [TemplateNode], root: TemplateValue) -> String {
        output.reserveCapacity(16_384)
        stack.reserveCapacity(8)
        stack.append(root)
        render(nodes, Frame())
        return output
    }

    // MARK: Nodes

    private mutating func render(_ nodes: [TemplateNode], _ initial: Frame) {
        var frame = initial
        guard !frame.indentation.isEmpty else {
            for node in nodes { render(node, &frame) }
            return
        }
        // swift-mustache indents a node's output when what this template has rendered so far ends with a
        // line feed (a CR LF is one Character, so it does not count); nodes are whole lines or parts of one.
        let start = output.utf8.count
        for node in nodes {
            let nodeStart = output.utf8.count
            render(node, &frame)
            guard output.utf8.count > nodeStart, nodeStart > start, byte(at: nodeStart - 1) == 0x0A,
                nodeStart - 1 == start || byte(at: nodeStart - 2) != 0x0D
            else { continue }
            output.insert(contentsOf: frame.indentation, at: output.utf8.index(output.utf8.startIndex, offsetBy: nodeStart))
        }
    }

    private mutating func render(_ node: TemplateNode, _ frame: inout Frame) {
        switch node {
        case .text(let text):
            output.append(text)
        case .variable(let tag, let escaped):
            printingOutsideSections = sectionDepth == 0
            defer { printingOutsideSections = false }
            guard let value = lookUp(tag, frame.position) else { return }
            if escaped && frame.escapesHTML, Self.mayStartAttributeValue(output), !Self.isSafeURL(value), Self.startsURLAttributeValue(after: output) {
                // As Go's html/template (so Hugo) does: the address is replaced by one that goes nowhere. What
                // the page has printed so far decides, not the template's text before the tag: a section, a
                // partial or an empty value may stand between `href="` and the tag.
                output.append("about:invalid#sitegen-unsafe-url")
                return
            }
            append(value, escapingHTML: escaped && frame.escapesHTML)
        case .section(let section):
            let value = lookUp(section.tag, frame.position)
            sectionDepth += 1
            defer { sectionDepth -= 1 }
            if let fragments, !fragments.applied, !section.inverted, stack.count == 1, frame.indentation.isEmpty,
               section.tag.start == .anyScope, section.tag.transforms.isEmpty, section.tag.path == [fragments.section],
               case .list(let list)? = value, list.count == fragments.cached.count {
                renderPieces(of: list, section.body, frame, fragments)
            } else if section.inverted {
                renderInvertedSection(value, section.body, frame)
            } else {
                renderSection(value, section.body, frame)
            }
        case .partial(let reference):
            renderPartial(reference, frame)
        case .block(let block):
            var inner = frame
            inner.position = nil
            inner.indentation = frame.indentation + block.indentation
            if let override = frame.overrides?[block.name] {
                // Inside its own override, a block of the same name is its own default: looked up again, the
                // override would render itself without end (a stack overflow, the whole build lost).
                inner.overrides?[block.name] = nil
                render(override, inner)
            } else {
                render(block.body, inner)
            }
        case .contentType(let escapesHTML):
            frame.escapesHTML = escapesHTML
        }
    }

    private mutating func renderSection(_ value: TemplateValue?, _ body: [TemplateNode], _ frame: Frame) {
        switch value {
        case .none:
            return
        case .list(let list)?:
            var inner = frame
            for position in 0..<list.count {
                stack.append(list[position])
                inner.position = ListPosition(index: position, count: list.count)
                render(body, inner)
                stack.removeLast()
            }
        case .boolean(let flag)?:
            if flag { render(body, frame) }
        case let value?:
            stack.append(value)
            var inner = frame
            inner.position = nil
            render(body, inner)
            stack.removeLast()
        }
    }

    /// A list section item by item: an item's piece rendered before is put in as it is, the others are
    /// rendered and kept (`ItemFragments`). The section is at the page's scope with no indentation, so an
    /// item prints the same bytes whatever page it is on.
    private mutating func renderPieces(of list: TemplateList, _ body: [TemplateNode], _ frame: Frame, _ fragments: ItemFragments) {
        fragments.applied = true
        var inner = frame
        for position in 0..<list.count {
            if let piece = fragments.cached[position] {
                output.append(piece)
                continue
            }
            let start = output.utf8.count
            stack.append(list[position])
            inner.position = ListPosition(index: position, count: list.count)
            render(body, inner)
            stack.removeLast()
            fragments.rendered[position] = String(output[output.utf8.index(output.utf8.startIndex, offsetBy: start)...])
        }
    }

    private mutating func renderInvertedSection(_ value: TemplateValue?, _ body: [TemplateNode], _ frame: Frame) {
        switch value {
        case .none:
            render(body, frame)
        case .list(let list)?:
            // An empty list is the context of its inverted section, as swift-mustache has it.
            guard list.count == 0 else { return }
            stack.append(.list(list))
            var inner = frame
            inner.position = nil
            render(body, inner)
            stack.removeLast()
        case .boolean(let flag)?:
            if !flag { render(body, frame) }
        case .some:
            return
        }
    }

    private mutating func renderPartial(_ reference: PartialReference, _ frame: Frame) {
        guard runaway == nil else { return }
        var name = reference.name
        if let dynamicName = reference.dynamicName {
            // A record's field is text too (`{{>*kind}}` in a list's rows).
            switch lookUp(dynamicName, frame.position) {
            case .string(let chosen)?: name = chosen
            case .text(let chosen)?: name = chosen.text
            default: return
            }
            // An empty value chooses no template, as a missing one does.
            if name.isEmpty { return }
        }
        guard let nodes = templates[name] else {
            // A plain partial's template was checked when the templates were read; a dynamic one's only now.
            if knownNames != nil, missingPartials[name] == nil { missingPartials[name] = (reference.location, reference.name) }
            return
        }
        guard nesting < Self.nestingLimit else {
            runaway = (name, reference.location)
            return
        }
        var inner = Frame()
        inner.indentation = reference.indentation.map { frame.indentation + $0 } ?? frame.indentation
        if let overrides = reference.overrides {
            inner.overrides = frame.overrides?.merging(overrides) { outer, _ in outer } ?? overrides
        } else {
            inner.overrides = frame.overrides
        }
        nesting += 1
        render(nodes, inner)
        nesting -= 1
    }

    // MARK: Names

    /// The value a tag names, its transforms applied; `nil` when there is none.
    private mutating func lookUp(_ tag: TagName, _ position: ListPosition?) -> TemplateValue? {
        var value: TemplateValue
        var transformsApplied = 0
        switch tag.start {
        case .current:
            value = stack[stack.count - 1]
        case .position:
            guard let position, let transformed = position.transformed(tag.transforms[0]) else { return nil }
            value = transformed
            transformsApplied = 1
        case .innermost:
            guard let first = child(ofScope: stack.count - 1, named: tag.path[0], tag) else { return nil }
            value = first
        case .anyScope:
            var scope = stack.count - 1
            while true {
                if let first = child(ofScope: scope, named: tag.path[0], tag) {
                    value = first
                    break
                }
                guard scope > 0 else { return nil }
                scope -= 1
            }
        }
        var depth = 1
        while depth < tag.path.count {
            guard let child = value.child(named: tag.path[depth]) else {
                // `site.titl`, `date.foo`: a name under another that no page has there is misspelt too.
                if let knownNames, !knownNames.contains(tag.path[depth]), !value.isNull {
                    recordUnknown(tag.path[0...depth].joined(separator: "."), at: tag.location)
                }
                return nil
            }
            value = child
            depth += 1
        }
        if case .other = value, value.isNull { return nil }
        while transformsApplied < tag.transforms.count {
            guard let transformed = value.transformed(tag.transforms[transformsApplied], site: site) else { return nil }
            value = transformed
            transformsApplied += 1
        }
        return value
    }

    /// The value named `name` in the context at `scope` on the stack; in a strict render, a name the page's
    /// own context lacks is recorded unless it is known.
    private mutating func child(ofScope scope: Int, named name: String, _ tag: TagName) -> TemplateValue? {
        // Switching on the stack's element in place binds its payload alone, without copying the value.
        switch stack[scope] {
        case .dictionary(let values):
            return values[name].map(TemplateValue.init)
        case .record(let record):
            guard let index = record.names.firstIndex(of: name) else { return nil }
            // An empty field is the record's: a page's value of that name (`site`, `section`) is not.
            return record.values[index].map(TemplateValue.init) ?? .null
        case .root(let values):
            if let found = values[name] { return TemplateValue(found) }
            if let knownNames {
                if !knownNames.contains(name) {
                    recordUnknown(name, at: tag.location)
                } else if recordNames.contains(name), !hasOpenRecord {
                    // A record lacking the field falls through to here too; with no record open, nothing could have it.
                    record(name, at: tag.location, in: &fieldsOutsideRecords)
                } else if let page, printingOutsideSections, scope == 0, stack.count == 1, !page.values.contains(name),
                          tag.location.template == preferredTemplate {
                    // Only where nothing could be meant for another kind of page: partials and layouts are
                    // shared, and a section may hold what only some pages show.
                    record(name, at: tag.location, in: &valuesNotOnPage)
                }
            }
            return nil
        case .string, .text, .integer, .boolean, .list:
            return nil
        default:
            return stack[scope].child(named: name)
        }
    }

    private mutating func recordUnknown(_ name: String, at location: SourceLocation) {
        record(name, at: location, in: &unknownNames)
    }

    /// Notes `name` at `location` in `names`, preferring a use in the page's own template to the first use.
    private func record(_ name: String, at location: SourceLocation, in names: inout [String: SourceLocation]) {
        if let recorded = names[name] {
            if recorded.template != preferredTemplate, location.template == preferredTemplate { names[name] = location }
        } else {
            names[name] = location
        }
    }

    /// Whether a record's scope is on the stack (a list's row, `{{#record}}`, a related record), or a
    /// pair of an enumeration, whose value may be a related record made a dictionary.
    private var hasOpenRecord: Bool {
        stack.contains {
            switch $0 {
            case .record, .pair: true
            default: false
            }
        }
    }

    // MARK: Output

    private func byte(at offset: Int) -> UInt8 {
        output.utf8[output.utf8.index(output.utf8.startIndex, offsetBy: offset)]
    }

    /// The schemes an address printed into `href` or `src` may have, each packed as `isSafeURL` packs the
    /// one it reads; an address without a scheme is relative.
    private static let safeSchemes: Set<UInt64> = Set(["http", "https", "mailto", "tel", "ftp"].map { $0.utf8.reduce(0) { $0 << 8 | UInt64($1) } })

    /// Whether `value`, printed as an address, cannot run script: relative, or one of `safeSchemes`.
    /// Browsers skip blanks and control characters before the scheme and ignore tabs and line breaks
    /// inside it; a scheme starts with a letter, so `2019-03-10T14:22` has none.
    static func isSafeURL(_ value: TemplateValue) -> Bool {
        switch value {
        case .string(let string): return isSafeURL(string)
        case .text(let value): return isSafeURL(value.text)
        case .integer, .boolean: return true
        default: return isSafeURL(value.description)
        }
    }

    /// Runs for every value printed where an attribute may start (most stop at their first space or slash),
    /// so the scheme is packed into a word as it is read, lower-cased, rather than collected.
    private static func isSafeURL(_ text: String) -> Bool {
        var packed: UInt64 = 0, length = 0
        for byte in text.utf8 {
            if byte == 0x09 || byte == 0x0A || byte == 0x0D || byte <= 0x20 && length == 0 { continue }
            // A space or another control character inside: no scheme at all, so a relative address.
            if byte <= 0x20 { return true }
            if byte == UInt8(ascii: ":") { return length <= 8 && safeSchemes.contains(packed) }
            let lowered = byte | 0x20
            let isLetter = lowered >= UInt8(ascii: "a") && lowered <= UInt8(ascii: "z")
            let isOther = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: ".")
            guard isLetter || length > 0 && isOther else { return true }
            if length < 8 { packed = packed << 8 | UInt64(isLetter ? lowered : byte) }
            length += 1
        }
        return true
    }

    /// Whether `printed` ends with a quote, `=` or a blank, as it must where an attribute's value starts: most
    /// values follow a tag's `>`, and are printed without a look at their scheme.
    private static func mayStartAttributeValue(_ printed: String) -> Bool {
        switch printed.utf8.last {
        case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "="), 0x20, 0x09, 0x0A, 0x0D, 0x0C: return true
        default: return false
        }
    }

    /// The attributes whose value is an address a browser follows or loads.
    private static let urlAttributes: Set<String> = ["href", "src", "action", "formaction", "poster", "cite", "background",
                                                     "xlink:href", "data", "srcset"]

    /// Whether `printed` ends where the value of an attribute holding an address starts: `<a href="`,
    /// `<img src='`, `<a href=`, blanks after the quote allowed (a browser skips them), as Go's html/template
    /// and so Hugo find them.
    static func startsURLAttributeValue(after printed: String) -> Bool {
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C }
        var bytes = printed.utf8.reversed().makeIterator()
        var next = bytes.next()
        while let blank = next, isBlank(blank) { next = bytes.next() }
        if next == UInt8(ascii: "\"") || next == UInt8(ascii: "'") { next = bytes.next() }
        while let blank = next, isBlank(blank) { next = bytes.next() }
        guard next == UInt8(ascii: "=") else { return false }
        next = bytes.next()
        while let blank = next, isBlank(blank) { next = bytes.next() }
        var name: [UInt8] = []
        while let byte = next, name.count <= 16,
              (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-") {
            name.append(byte | (byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-") ? 0 : 0x20))
            next = bytes.next()
        }
        // The name must start an attribute: after a blank inside a tag.
        guard let before = next, isBlank(before) else { return false }
        return urlAttributes.contains(String(decoding: name.reversed(), as: UTF8.self))
    }

    private mutating func append(_ value: TemplateValue, escapingHTML: Bool) {
        switch value {
        case .string(let string): append(string, escapingHTML: escapingHTML)
        case .text(let text): append(text.text, escapingHTML: escapingHTML)
        case .integer(let number): output.append(String(number))
        case .boolean(let flag): output.append(flag ? "true" : "false")
        default: append(value.description, escapingHTML: escapingHTML)
        }
    }

    private mutating func append(_ string: String, escapingHTML: Bool) {
        guard escapingHTML, let firstSpecial = Self.firstHTMLSpecialCharacter(in: string) else {
            output.append(string)
            return
        }
        // Runs between special characters are copied whole; the special characters are ASCII, so every
        // run starts and ends on a character boundary.
        let utf8 = string.utf8
        var runStart = utf8.startIndex
        var index = utf8.index(utf8.startIndex, offsetBy: firstSpecial)
        while index != utf8.endIndex {
            let entity: String
            switch utf8[index] {
            case 0x22: entity = "&quot;"
            case 0x26: entity = "&amp;"
            case 0x27: entity = "&#39;"
            case 0x3C: entity = "&lt;"
            case 0x3E: entity = "&gt;"
            case 0x00...0x08, 0x0B, 0x0C, 0x0E...0x1F: entity = ""
            default:
                utf8.formIndex(after: &index)
                continue
            }
            output.append(contentsOf: Substring(utf8[runStart..<index]))
            output.append(entity)
            utf8.formIndex(after: &index)
            runStart = index
        }
        output.append(contentsOf: Substring(utf8[runStart...]))
    }

    /// The five characters swift-mustache escapes (`"`, `&`, `'`, `<`, `>`), and the control characters HTML
    /// does not allow in text (all below a space but tab, line feed and carriage return: a NUL from a CSV field
    /// is a parse error, and a browser shows it as U+FFFD), which are dropped, as feeds drop them; as bits of
    /// the bytes below 64.
    private static let escapedBytes: UInt64 = 1 << 0x22 | 1 << 0x26 | 1 << 0x27 | 1 << 0x3C | 1 << 0x3E
        | (1 << 0x20 - 1) & ~(1 << 0x09 | 1 << 0x0A | 1 << 0x0D)

    /// The UTF-8 offset of the first character HTML escapes in `string`, found a byte at a time without
    /// decoding; `nil` for the usual text, which needs no escaping at all.
    private static func firstHTMLSpecialCharacter(in string: String) -> Int? {
        func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if byte < 64, escapedBytes >> UInt64(byte) & 1 == 1 { return index }
            }
            return nil
        }
        if let found = string.utf8.withContiguousStorageIfAvailable(scan) { return found }
        return Array(string.utf8).withUnsafeBufferPointer(scan)
    }
}
