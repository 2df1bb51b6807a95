import Foundation

/// Reads JSON Feed 1.0 and 1.1 documents (https://jsonfeed.org/version/1.1).
struct JSONFeedParser {
    let file: String

    func parse(_ data: Data) throws(SourceError) -> FeedDocument {
        var input = SourceInput(data: data, displayName: file)
        var items: [FeedItem] = []
        var document = try parse(&input) { items.append($0) }
        document.items = items
        return document
    }

    /// Reads the feed a chunk at a time, handing each item to `emit` as it is read (the document returned
    /// holds no items). Whether it is a JSON Feed at all is known only at the end (`version` may come
    /// last), so a caller keeps the items only when this returns.
    func parse(_ input: inout SourceInput, emit: (FeedItem) throws(SourceError) -> Void) throws(SourceError) -> FeedDocument {
        try rejectUTF16(input)
        var version: String?, title: String?, link: String?
        var warnings: [SourceError] = []
        var reader = JSONStreamReader(layout: .object(streamedMember: "items"))
        func handle(_ part: JSONStreamReader.Part) throws(SourceError) {
            switch part {
            case .element(let value, let line):
                // Without a home page, a feed fetched from the web (named by its address) is its own base.
                let address = URL(string: file).flatMap { ["http", "https"].contains($0.scheme?.lowercased() ?? "") ? $0 : nil }
                switch item(value, line: line, home: link.flatMap { URL(string: $0) } ?? address) {
                case .success(let item): try emit(item)
                case .failure(let warning): warnings.append(warning)
                }
            case .member("version", let value): version = value.string
            case .member("title", let value): title = value.string
            case .member("home_page_url", let value): link = value.string
            case .member: break
            }
        }
        let located = { (error: JSONParser.SyntaxError) in
            SourceError(file: file, line: error.line, column: error.column, reason: "not valid JSON: \(error.reason)")
        }
        try input.forEachChunk { (chunk: UnsafeRawBufferPointer) throws(SourceError) in
            try reader.feed(chunk, emit: handle, error: located)
        }
        try reader.finish(emit: handle, error: located)
        guard let version, version.hasPrefix("https://jsonfeed.org/version/") || version.hasPrefix("http://jsonfeed.org/version/") else {
            throw SourceError(file: file, line: 1, reason: "not a JSON Feed: expected \"version\": \"https://jsonfeed.org/version/1.1\"")
        }
        let kind: FeedDocument.Kind = version.hasSuffix("/1") ? .json10 : .json11
        return FeedDocument(kind: kind, title: title, link: link, items: [], warnings: warnings)
    }

    /// The item `value`; its relative addresses are resolved against `home`, the feed's `home_page_url`
    /// when it came before the items (a feed read as a stream may give it after them).
    private func item(_ value: JSONValue, line: Int, home: URL?) -> Result<FeedItem, SourceError> {
        guard case .object = value else {
            return .failure(SourceError(file: file, line: line, reason: "an item that is not an object was skipped"))
        }
        func text(_ key: String) -> String? { value[key]?.scalarText.flatMap { $0.isEmpty ? nil : $0 } }
        var warnings: [String] = []
        func date(_ key: String) -> Date? {
            guard let raw = text(key) else { return nil }
            guard let date = FeedDate.parse(raw) else { warnings.append(key); return nil }
            return date
        }
        var link = text("url") ?? text("external_url")
        if let relative = link, URL(string: relative)?.scheme == nil, let home, home.scheme != nil {
            link = URL(string: relative, relativeTo: home)?.absoluteString ?? relative
        }
        // Relative links in the HTML lead where they led on the item's page.
        let base = link.flatMap { URL(string: $0) }.flatMap { $0.scheme == nil ? nil : $0 } ?? home
        func html(_ text: String?) -> String? {
            guard let text, let base else { return text }
            return HTMLLinks.resolving(text, against: base)
        }
        // JSON Feed requires an id; a feed that leaves it out still has items worth keeping, known by their url.
        guard let id = text("id") ?? link else {
            return .failure(SourceError(file: file, line: line, reason: "an item with no id and no url was skipped"))
        }
        let authors = value["authors"]?.array ?? value["author"].map { [$0] } ?? []
        let author = authors.compactMap { $0["name"]?.string }.joined(separator: ", ")
        // An item with only an update date is published then too, as in RSS and Atom.
        let updated = date("date_modified")
        let item = FeedItem(
            id: id, title: text("title"), link: link, published: date("date_published") ?? updated, updated: updated,
            author: author.isEmpty ? nil : author, summary: text("summary"),
            content: html(text("content_html")) ?? text("content_text").map(escapedParagraphs),
            categories: (value["tags"]?.array ?? []).compactMap(\.string),
            enclosures: (value["attachments"]?.array ?? []).compactMap { attachment in
                attachment["url"]?.string.map {
                    Enclosure(url: $0, type: attachment["mime_type"]?.string,
                              length: { if case .number(_, let integer)? = attachment["size_in_bytes"] { return integer } else { return nil } }())
                }
            },
            line: line)
        return .success(item)
    }

    /// Plain `content_text` as HTML: escaped, a paragraph per blank-line-separated block.
    private func escapedParagraphs(_ text: String) -> String {
        text.components(separatedBy: "\n\n").filter { !$0.isEmpty }.map { paragraph in
            "<p>" + paragraph.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;") + "</p>"
        }.joined(separator: "\n")
    }
}
