/// Reads a Mustache template's text into `TemplateNode`s, once per template.
///
/// Pages rendered by swift-mustache 2.1.1 must not change, so this reads templates as it does, including
/// where it departs from the Mustache spec: which whitespace a standalone tag removes (a section's
/// standalone opening tag decides whether the line after its closing tag may hold a standalone tag),
/// the indentation a standalone partial or block carries, a `{{<parent}}` body's blocks losing their
/// first line's indentation, and the same syntax errors. It works on `Character`s, as swift-mustache does,
/// so that text such as `{` followed by a combining mark is not taken for a delimiter either.
struct TemplateParser {
    /// A template that does not parse: what is wrong, at which `Character` offset.
    struct SyntaxError: Error, Equatable {
        let offset: Int
        let reason: String
    }

    private var reader: TemplateReader
    private let template: String
    /// Every partial and parent tag, in the order they appear: what the template depends on.
    private(set) var references: [(name: String, location: SourceLocation)] = []

    /// What the reader knows at a point of the text; each section is read with its own copy, so a
    /// delimiter change inside a section ends with it.
    private struct State {
        /// The open section (or parent tag) that a closing tag must name, with its transforms.
        var sectionName: String?
        var sectionTransforms: [String] = []
        /// The sign that opened it (`#`, `^`, `$`, `<`), to quote its tag in errors as the template has it.
        var sectionSigil: Character = "#"
        /// Where that section opened, for the error when it is never closed.
        var sectionOffset = 0
        /// Whether the reader is at the start of a line, where a tag may stand alone.
        var atLineStart = true
        /// Inside a `{{<parent}}` body, whose overrides' lines lose the indentation of their first line.
        var inParentBody = false
        /// Directly inside a `{{<parent}}` body, where `{{$name}}` defines an override.
        var atParentBodyTop = false
        /// The blanks, in characters, that began the first line read inside an override: as many are
        /// dropped from each later line.
        var parentBodyIndentation: Int?
        var startDelimiter: [Character] = ["{", "{"]
        var endDelimiter: [Character] = ["}", "}"]

        func enteringSection(_ name: String, transforms: [String], at offset: Int, standalone: Bool, sigil: Character = "#") -> State {
            var state = self
            state.sectionName = name
            state.sectionSigil = sigil
            state.sectionTransforms = transforms
            state.sectionOffset = offset
            state.atParentBodyTop = false
            if !standalone { state.atLineStart = false }
            return state
        }

        func enteringParentBody(_ name: String, at offset: Int) -> State {
            var state = self
            state.sectionName = name
            state.sectionSigil = "<"
            state.sectionTransforms = []
            state.sectionOffset = offset
            state.atLineStart = true
            state.inParentBody = true
            state.atParentBodyTop = true
            return state
        }
    }

    /// What one level of the text holds: its nodes with the offset each starts at, and the blocks a
    /// parent body defines.
    private struct Body {
        var nodes: [TemplateNode] = []
        var offsets: [Int] = []
        var blocks: [String: [TemplateNode]] = [:]
        var blockLocations: [String: SourceLocation] = [:]

        mutating func append(_ node: TemplateNode, at offset: Int) {
            nodes.append(node)
            offsets.append(offset)
        }

        mutating func appendText(_ text: String, at offset: Int) {
            append(.text(text), at: offset)
        }
    }

    /// Prepares to read `text`, the template named `template`.
    init(_ text: String, template: String) {
        reader = TemplateReader(text)
        self.template = template
    }

    /// The template's nodes.
    mutating func parse() throws(SyntaxError) -> [TemplateNode] {
        try parseBody(State()).nodes
    }

    /// The line and column (from 1) of a `Character` offset.
    func lineAndColumn(of offset: Int) -> (line: Int, column: Int) {
        reader.lineAndColumn(of: offset)
    }

    private func location(_ offset: Int) -> SourceLocation {
        let (line, column) = lineAndColumn(of: offset)
        return SourceLocation(template: template, line: line, column: column)
    }

    private func error(_ reason: String, at offset: Int) -> SyntaxError {
        SyntaxError(offset: offset, reason: reason)
    }

    // MARK: The text, level by level

    private mutating func parseBody(_ initial: State) throws(SyntaxError) -> Body {
        var state = initial
        var body = Body()
        // The blanks that start the current line: text unless a standalone tag takes the line.
        var blanksBefore = ""
        var blanksOffset = reader.position
        while !reader.isAtEnd {
            if state.atLineStart {
                blanksOffset = reader.position
                let blanks = reader.read(while: TemplateReader.blanks)
                if state.inParentBody, !state.atParentBodyTop {
                    if let indentation = state.parentBodyIndentation {
                        blanksBefore = String(blanks.dropFirst(indentation))
                    } else {
                        state.parentBodyIndentation = blanks.count
                    }
                } else {
                    blanksBefore = String(blanks)
                }
            }
            let textOffset = reader.position
            let text = try reader.readText(upTo: state.startDelimiter)
            if let lineBreak = reader.current, lineBreak.isNewline {
                body.appendText(blanksBefore + text + String(lineBreak), at: textOffset)
                state.atLineStart = true
                reader.position += 1
                continue
            }
            if !text.isEmpty {
                body.appendText(blanksBefore + text, at: textOffset)
                blanksBefore = ""
                state.atLineStart = false
            }
            // A start delimiter as the very last characters opens no tag.
            guard let sigil = reader.current else { break }
            let tagOffset = reader.position - state.startDelimiter.count
            let tagLocation = location(tagOffset)
            func flushBlanks(_ body: inout Body) {
                if !blanksBefore.isEmpty { body.appendText(blanksBefore, at: blanksOffset) }
            }
            var standalone = false
            switch sigil {
            case "#", "^":
                reader.position += 1
                let (name, transforms) = try reader.readName(endDelimiter: state.endDelimiter)
                if isStandalone(state) {
                    standalone = true
                } else {
                    flushBlanks(&body)
                    blanksBefore = ""
                }
                let section = try parseBody(state.enteringSection(name, transforms: transforms, at: tagOffset, standalone: standalone, sigil: sigil))
                let tag = TagName(name: name, transforms: transforms, location: tagLocation)
                body.append(.section(SectionNode(tag: tag, body: section.nodes, inverted: sigil == "^")), at: tagOffset)

            case "/":
                reader.position += 1
                let (name, transforms) = try reader.readName(endDelimiter: state.endDelimiter)
                guard name == state.sectionName, transforms == state.sectionTransforms else {
                    throw error(closingReason(name: name, transforms: transforms, state: state), at: tagOffset)
                }
                if !isStandalone(state) { flushBlanks(&body) }
                return body

            case "!":
                reader.position += 1
                try reader.skipComment(endDelimiter: state.endDelimiter)
                standalone = isStandalone(state)

            case "{", "&":
                flushBlanks(&body)
                blanksBefore = ""
                reader.position += 1
                let (name, transforms) = try reader.readName(endDelimiter: state.endDelimiter)
                if sigil == "{" {
                    guard let closing = reader.current else { throw error("the template ends inside the tag", at: tagOffset) }
                    guard closing == "}" else { throw error("expected '}' to close '{{{\(name)'", at: tagOffset) }
                    reader.position += 1
                }
                body.append(.variable(TagName(name: name, transforms: transforms, location: tagLocation), escaped: false), at: tagOffset)

            case ">":
                reader.position += 1
                reader.skipWhitespace()
                let dynamic = reader.current == "*"
                if dynamic { reader.position += 1 }
                let name = try reader.readPartialName(endDelimiter: state.endDelimiter)
                references.append(((dynamic ? "*" : "") + name, tagLocation))
                flushBlanks(&body)
                let indentation: String?
                if isStandalone(state) {
                    standalone = true
                    indentation = blanksBefore
                } else {
                    indentation = nil
                }
                blanksBefore = ""
                body.append(.partial(partialReference(name, dynamic: dynamic, indentation: indentation, overrides: nil, at: tagLocation)),
                            at: tagOffset)

            case "<":
                reader.position += 1
                reader.skipWhitespace()
                let written = try reader.readPartialName(endDelimiter: state.endDelimiter)
                references.append((written, tagLocation))
                let dynamic = written.first == "*"
                flushBlanks(&body)
                standalone = isStandalone(state)
                let parentBody = try parseBody(state.enteringParentBody(written, at: tagOffset))
                for (node, offset) in zip(parentBody.nodes, parentBody.offsets) {
                    if case .text = node { continue }
                    throw error("only blocks ({{$name}}…{{/name}}) may stand inside {{<\(written)}}…{{/\(written)}}", at: offset)
                }
                let name = dynamic ? String(written.dropFirst()) : written
                let reference = partialReference(name, dynamic: dynamic, indentation: blanksBefore, overrides: parentBody.blocks,
                                                 overrideLocations: parentBody.blockLocations, at: tagLocation)
                blanksBefore = ""
                body.append(.partial(reference), at: tagOffset)

            case "$":
                reader.position += 1
                let (name, transforms) = try reader.readName(endDelimiter: state.endDelimiter)
                guard transforms.isEmpty else { throw error("a block ({{$\(name)}}) cannot take a transform", at: tagOffset) }
                if state.atParentBodyTop {
                    standalone = isStandalone(state)
                    let block = try parseBody(state.enteringSection(name, transforms: [], at: tagOffset, standalone: standalone, sigil: "$"))
                    body.blocks[name] = block.nodes
                    body.blockLocations[name] = tagLocation
                } else {
                    flushBlanks(&body)
                    standalone = isStandalone(state)
                    let block = try parseBody(state.enteringSection(name, transforms: [], at: tagOffset, standalone: standalone, sigil: "$"))
                    body.append(.block(BlockNode(name: name, body: block.nodes, indentation: blanksBefore)), at: tagOffset)
                    blanksBefore = ""
                }

            case "=":
                reader.position += 1
                (state.startDelimiter, state.endDelimiter) = try reader.readDelimiters(endDelimiter: state.endDelimiter, tagOffset: tagOffset)
                state.atParentBodyTop = false
                standalone = isStandalone(state)

            case "%":
                reader.position += 1
                let escapesHTML = try reader.readContentType(endDelimiter: state.endDelimiter, tagOffset: tagOffset)
                body.append(.contentType(escapesHTML: escapesHTML), at: tagOffset)
                standalone = isStandalone(state)

            default:
                flushBlanks(&body)
                blanksBefore = ""
                let (name, transforms) = try reader.readName(endDelimiter: state.endDelimiter)
                body.append(.variable(TagName(name: name, transforms: transforms, location: tagLocation), escaped: true), at: tagOffset)
            }
            state.atLineStart = standalone
        }
        if let name = state.sectionName {
            let opened = state.sectionTransforms.reduce(name) { "\($1)(\($0))" }
            throw error("{{\(state.sectionSigil)\(opened)}} is never closed; expected {{/\(opened)}}", at: state.sectionOffset)
        }
        return body
    }

    /// Whether the tag just read stands alone on its line (reading the line's end if so).
    private mutating func isStandalone(_ state: State) -> Bool {
        state.atLineStart && reader.readLineEnd()
    }

    private func partialReference(_ name: String, dynamic: Bool, indentation: String?, overrides: [String: [TemplateNode]]?,
                                  overrideLocations: [String: SourceLocation] = [:], at location: SourceLocation) -> PartialReference {
        PartialReference(name: name, dynamicName: dynamic ? TagName(name: name, transforms: [], location: location) : nil,
                         indentation: indentation, overrides: overrides, overrideLocations: overrideLocations, location: location)
    }

    private func closingReason(name: String, transforms: [String], state: State) -> String {
        let written = transforms.reduce(name) { "\($1)(\($0))" }
        guard let open = state.sectionName else { return "{{/\(written)}} closes no open section" }
        let opened = state.sectionTransforms.reduce(open) { "\($1)(\($0))" }
        // Where the open one began: a section left open far above is what to look for, not this tag.
        let (line, column) = lineAndColumn(of: state.sectionOffset)
        return "{{/\(written)}} does not close the open section {{\(state.sectionSigil)\(opened)}} (line \(line), column \(column)); expected {{/\(opened)}} first"
    }
}
