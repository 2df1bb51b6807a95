import CLibXML2

/// libxml2's HTML parser, the one place sitegen calls it: a fragment of untrusted HTML parsed into a tree
/// that `HTMLSanitizer` walks. The tree lives only inside `parse`'s body, which frees it.
enum HTMLFragmentParser {
    /// Parses `html` as the body of a page and hands `body` the first of the document's top-level nodes,
    /// or nil when there is nothing to parse. Never fails: libxml2 recovers from any input, as browsers do.
    static func parse<Result>(_ html: String, _ body: (HTMLNode?) -> Result) -> Result {
        initialize
        // In a `<body>`, text before any tag is the body's: without one, libxml2 puts it in an implied `<p>`.
        // NUL is no character of HTML's (browsers drop or replace it), and would end libxml2's C strings.
        var bytes = Array("<body>".utf8) + html.utf8.map { $0 == 0 ? UInt8(ascii: " ") : $0 }
        // "Huge": past 256 nested elements libxml2 otherwise stops, and the rest of the text is lost.
        let options = Int32(bitPattern: HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
            | HTML_PARSE_NONET.rawValue | XML_PARSE_HUGE.rawValue)
        let document = bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { start in
                htmlReadMemory(start, Int32(buffer.count), nil, "UTF-8", options)
            }
        }
        guard let document else { return body(nil) }
        defer { xmlFreeDoc(document) }
        return body(document.pointee.children.map(HTMLNode.init))
    }

    /// libxml2 must set up its globals once before threads parse at the same time.
    private static let initialize: Void = xmlInitParser()
}

/// One node of a tree `HTMLFragmentParser` made, valid inside its `parse` only.
struct HTMLNode {
    /// What a sanitizer tells apart.
    enum Kind { case element, text, other }

    private let pointer: xmlNodePtr

    fileprivate init(_ pointer: xmlNodePtr) { self.pointer = pointer }

    /// Whether it is an element, text (CDATA counts: a script's text is CDATA to libxml2), or anything else
    /// (a comment, a processing instruction, a document type).
    var kind: Kind {
        switch pointer.pointee.type {
        case XML_ELEMENT_NODE: return .element
        case XML_TEXT_NODE, XML_CDATA_SECTION_NODE: return .text
        default: return .other
        }
    }

    /// An element's name, in lower case as the parser leaves HTML names.
    var name: String { pointer.pointee.name.map { String(cString: $0) } ?? "" }

    /// A text node's characters, its references decoded.
    var text: String { pointer.pointee.content.map { String(cString: $0) } ?? "" }

    /// An element's attributes in document order, their values' references decoded.
    var attributes: [(name: String, value: String)] {
        var attributes: [(name: String, value: String)] = []
        var attribute = pointer.pointee.properties
        while let current = attribute {
            var value = ""
            var part = current.pointee.children
            while let text = part {
                if let content = text.pointee.content { value += String(cString: content) }
                part = text.pointee.next
            }
            attributes.append((String(cString: current.pointee.name), value))
            attribute = current.pointee.next
        }
        return attributes
    }

    /// The first child, if any.
    var firstChild: HTMLNode? { pointer.pointee.children.map(HTMLNode.init) }

    /// The next sibling, if any.
    var next: HTMLNode? { pointer.pointee.next.map(HTMLNode.init) }
}
