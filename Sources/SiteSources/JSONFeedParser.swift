import Foundation

/// Reads JSON Feed 1.0 and 1.1 documents (https://jsonfeed.org/version/1.1).
struct JSONFeedParser {
    let file: String

    func parse(_ data: Data) throws(SourceError) -> FeedDocument {
        var parser = JSONParser(bytes: Array(data))
        var version: String?, title: String?, link: String?
        var items: [FeedItem] = []
        var warnings: [SourceError] = []
        do throws(JSONParser.SyntaxError) {
            try parser.expect(UInt8(ascii: "{"), "'{': a JSON Feed is one object")
            if !parser.consume(UInt8(ascii: "}")) {
                repeat {
                    guard case .string(let key) = try parser.parseValue() else {
                        throw JSONParser.SyntaxError(line: parser.currentLine, column: 1, reason: "expected a quoted member name")
                    }
                    try parser.expect(UInt8(ascii: ":"), "':' after the member name")
                    if key == "items" {
                        // Items one at a time, so each keeps the line it starts on.
                        try parser.expect(UInt8(ascii: "["), "'[': items is an array")
                        if !parser.consume(UInt8(ascii: "]")) {
                            repeat {
                                _ = parser.hasMoreContent()
                                let line = parser.currentLine
                                let value = try parser.parseValue()
                                switch item(value, line: line) {
                                case .success(let item): items.append(item)
                                case .failure(let warning): warnings.append(warning)
                                }
                            } while parser.consume(UInt8(ascii: ","))
                            try parser.expect(UInt8(ascii: "]"), "',' or ']' in items")
                        }
                    } else {
                        let value = try parser.parseValue()
                        switch key {
                        case "version": version = value.string
                        case "title": title = value.string
                        case "home_page_url": link = value.string
                        default: break
                        }
                    }
                } while parser.consume(UInt8(ascii: ","))
                try parser.expect(UInt8(ascii: "}"), "',' or '}' after a member")
            }
            if parser.hasMoreContent() {
                throw JSONParser.SyntaxError(line: parser.currentLine, column: 1, reason: "unexpected text after the feed object")
            }
        } catch {
            throw SourceError(file: file, line: error.line, column: error.column, reason: "not valid JSON: \(error.reason)")
        }
        guard let version, version.hasPrefix("https://jsonfeed.org/version/") || version.hasPrefix("http://jsonfeed.org/version/") else {
            throw SourceError(file: file, line: 1, reason: "not a JSON Feed: expected \"version\": \"https://jsonfeed.org/version/1.1\"")
        }
        let kind: FeedDocument.Kind = version.hasSuffix("/1") ? .json10 : .json11
        return FeedDocument(kind: kind, title: title, link: link, items: items, warnings: warnings)
    }

    private func item(_ value: JSONValue, line: Int) -> Result<FeedItem, SourceError> {
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
        let link = text("url") ?? text("external_url")
        // JSON Feed requires an id; a feed that leaves it out still has items worth keeping, known by their url.
        guard let id = text("id") ?? link else {
            return .failure(SourceError(file: file, line: line, reason: "an item with no id and no url was skipped"))
        }
        let authors = value["authors"]?.array ?? value["author"].map { [$0] } ?? []
        let author = authors.compactMap { $0["name"]?.string }.joined(separator: ", ")
        let item = FeedItem(
            id: id, title: text("title"), link: link, published: date("date_published"), updated: date("date_modified"),
            author: author.isEmpty ? nil : author, summary: text("summary"),
            content: text("content_html") ?? text("content_text").map(escapedParagraphs),
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
