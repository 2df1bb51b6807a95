import Foundation

/// What a listing's subscription feed says, whatever its format: the listing, and an entry per row of
/// its first page.
public struct FeedContent: Sendable, Equatable {
    /// One entry.
    public struct Entry: Sendable, Equatable {
        /// A permanent, unique identity (the entry's page URL, absolute).
        public var id: String
        /// The entry's title.
        public var title: String
        /// The entry's page, absolute.
        public var link: String
        /// When it was published, as RFC 3339 in UTC; `nil` when the row has no date.
        public var date: String?
        /// When it was last changed, as RFC 3339 in UTC, when the record says (an `updated` field) and it
        /// is later than `date`: readers tell an edited entry by it.
        public var updated: String?
        /// Its author's name.
        public var author: String?
        /// A short text summary.
        public var summary: String?
        /// The full content as HTML.
        public var contentHTML: String?

        /// Makes an entry.
        public init(id: String, title: String, link: String, date: String?, updated: String? = nil, author: String? = nil,
                    summary: String? = nil, contentHTML: String? = nil) {
            self.id = id
            self.title = title
            self.link = link
            self.date = date
            self.updated = updated.flatMap { updated in date.map { updated > $0 } ?? true ? updated : nil }
            self.author = author
            self.summary = summary
            self.contentHTML = contentHTML
        }

        /// When it last changed: its update date, else its publication date.
        public var lastChanged: String? { updated ?? date }
    }

    /// The feed's title (the listing's).
    public var title: String
    /// The site's name, the author of record when an entry names none (Atom requires one).
    public var siteTitle: String
    /// The listing's first page, absolute.
    public var link: String
    /// The entries, newest first as the listing orders them.
    public var entries: [Entry]
    /// Where the document sits among a stable archive's (RFC 5005 §4); `nil` for a plain subscription feed.
    public var archive: Archive?

    /// RFC 5005 archive links: the subscription document, and the archive documents either side.
    public struct Archive: Sendable, Equatable {
        /// The subscription document (rel="current").
        public var current: String
        /// Whether this document is an archive (fh:archive), not the subscription document.
        public var isArchive: Bool
        /// The next older archive document (rel="prev-archive").
        public var previous: String?
        /// The next newer archive document (rel="next-archive"); none for the newest archive.
        public var next: String?

        /// Describes a document's place in an archive.
        public init(current: String, isArchive: Bool, previous: String?, next: String?) {
            self.current = current
            self.isArchive = isArchive
            self.previous = previous
            self.next = next
        }

        /// The archive links as `atom:link` elements (`prefix` "atom:" in RSS), and the archive marker.
        func xmlLinks(prefix: String, type: String) -> String {
            var xml = ""
            if isArchive { xml += "<fh:archive/>\n" }
            xml += "<\(prefix)link rel=\"current\" type=\"\(type)\" href=\"\(escapeXML(current))\"/>\n"
            if let previous { xml += "<\(prefix)link rel=\"prev-archive\" type=\"\(type)\" href=\"\(escapeXML(previous))\"/>\n" }
            if let next { xml += "<\(prefix)link rel=\"next-archive\" type=\"\(type)\" href=\"\(escapeXML(next))\"/>\n" }
            return xml
        }
    }

    /// Describes a feed.
    public init(title: String, siteTitle: String, link: String, entries: [Entry]) {
        self.title = title
        self.siteTitle = siteTitle
        self.link = link
        self.entries = entries
    }

    /// The newest entry date, publication or update, the feed's own "updated"; the Unix epoch for a feed
    /// with no dated entry, so that the output stays the same from build to build.
    public var updated: String { entries.compactMap(\.lastChanged).max() ?? "1970-01-01T00:00:00Z" }
}

/// Writes a `FeedContent` as Atom 1.0 (RFC 4287), RSS 2.0 or JSON Feed 1.1, byte for byte the same for
/// the same content.
public enum FeedWriter {
    /// The three formats, with the file each is written to beside the listing's first page.
    public enum Format: String, Sendable, CaseIterable {
        case atom, rss, json

        /// The file name: `atom.xml`, `rss.xml`, `feed.json`.
        public var fileName: String {
            switch self {
            case .atom: return "atom.xml"
            case .rss: return "rss.xml"
            case .json: return "feed.json"
            }
        }

        /// The media type a page's `<link rel="alternate">` announces.
        public var mediaType: String {
            switch self {
            case .atom: return "application/atom+xml"
            case .rss: return "application/rss+xml"
            case .json: return "application/feed+json"
            }
        }
    }

    /// The document for `content` in `format`, which is published at `selfURL`.
    public static func document(_ content: FeedContent, format: Format, selfURL: String) -> String {
        switch format {
        case .atom: return atom(content, selfURL: selfURL)
        case .rss: return rss(content, selfURL: selfURL)
        case .json: return json(content, selfURL: selfURL)
        }
    }

    private static func atom(_ content: FeedContent, selfURL: String) -> String {
        var xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom" xmlns:fh="http://purl.org/syndication/history/1.0">
            <title>\(escapeXML(content.title))</title>
            <link rel="alternate" type="text/html" href="\(escapeXML(content.link))"/>
            <link rel="self" type="application/atom+xml" href="\(escapeXML(selfURL))"/>
            <id>\(escapeXML(content.link))</id>
            <updated>\(content.updated)</updated>
            <author><name>\(escapeXML(content.siteTitle))</name></author>

            """
        xml += content.archive?.xmlLinks(prefix: "", type: "application/atom+xml") ?? ""
        for entry in content.entries {
            xml += "<entry>\n<title>\(escapeXML(entry.title))</title>\n"
            xml += "<link rel=\"alternate\" type=\"text/html\" href=\"\(escapeXML(entry.link))\"/>\n"
            xml += "<id>\(escapeXML(entry.id))</id>\n"
            // Atom requires updated: a row with no date takes the feed's.
            xml += "<updated>\(entry.lastChanged ?? content.updated)</updated>\n"
            if let date = entry.date { xml += "<published>\(date)</published>\n" }
            if let author = entry.author { xml += "<author><name>\(escapeXML(author))</name></author>\n" }
            if let summary = entry.summary { xml += "<summary>\(escapeXML(summary))</summary>\n" }
            if let html = entry.contentHTML { xml += "<content type=\"html\">\(escapeXML(html))</content>\n" }
            xml += "</entry>\n"
        }
        return xml + "</feed>\n"
    }

    private static func rss(_ content: FeedContent, selfURL: String) -> String {
        var xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:fh="http://purl.org/syndication/history/1.0">
            <channel>
            <title>\(escapeXML(content.title))</title>
            <link>\(escapeXML(content.link))</link>
            <description>\(escapeXML(escapeXML(content.title + " · " + content.siteTitle)))</description>
            <atom:link href="\(escapeXML(selfURL))" rel="self" type="application/rss+xml"/>

            """
        // Optional in RSS: a feed with no dated entry has no date to give (Atom, which requires one, gets the epoch).
        if content.entries.contains(where: { $0.lastChanged != nil }) { xml += "<lastBuildDate>\(rfc822(content.updated))</lastBuildDate>\n" }
        xml += content.archive?.xmlLinks(prefix: "atom:", type: "application/rss+xml") ?? ""
        for entry in content.entries {
            xml += "<item>\n<title>\(escapeXML(entry.title))</title>\n<link>\(escapeXML(entry.link))</link>\n"
            xml += "<guid isPermaLink=\"\(entry.id == entry.link)\">\(escapeXML(entry.id))</guid>\n"
            if let date = entry.date { xml += "<pubDate>\(rfc822(date))</pubDate>\n" }
            // RSS's own <author> must be an e-mail address; a name goes in Dublin Core's creator.
            if let author = entry.author { xml += "<dc:creator>\(escapeXML(author))</dc:creator>\n" }
            // The summary as the description (readers show it in lists), the whole HTML as content:encoded.
            // Readers take a description as HTML: a text summary is escaped as HTML first, so `<b>` in it shows.
            if let description = entry.summary.map(escapeXML) ?? entry.contentHTML { xml += "<description>\(escapeXML(description))</description>\n" }
            if let html = entry.contentHTML { xml += "<content:encoded>\(escapeXML(html))</content:encoded>\n" }
            xml += "</item>\n"
        }
        return xml + "</channel>\n</rss>\n"
    }

    private static func json(_ content: FeedContent, selfURL: String) -> String {
        var items: [String] = []
        for entry in content.entries {
            var members = ["\"id\": \(jsonString(entry.id))", "\"url\": \(jsonString(entry.link))", "\"title\": \(jsonString(entry.title))"]
            if let html = entry.contentHTML { members.append("\"content_html\": \(jsonString(html))") }
            if let summary = entry.summary { members.append("\"summary\": \(jsonString(summary))") }
            if let date = entry.date { members.append("\"date_published\": \(jsonString(date))") }
            if let updated = entry.updated { members.append("\"date_modified\": \(jsonString(updated))") }
            if let author = entry.author { members.append("\"authors\": [{\"name\": \(jsonString(author))}]") }
            // JSON Feed requires content_html or content_text.
            if entry.contentHTML == nil { members.append("\"content_text\": \(jsonString(entry.summary ?? entry.title))") }
            items.append("    {" + members.joined(separator: ", ") + "}")
        }
        return """
            {
              "version": "https://jsonfeed.org/version/1.1",
              "title": \(jsonString(content.title)),
              "home_page_url": \(jsonString(content.link)),
              "feed_url": \(jsonString(selfURL)),\(content.archive?.previous.map { "\n  \"next_url\": " + jsonString($0) + "," } ?? "")
              "authors": [{"name": \(jsonString(content.siteTitle))}],
              "items": [
            \(items.joined(separator: ",\n"))
              ]
            }

            """
    }

    /// `2024-05-03T14:00:00Z` as RFC 822 (with a four-digit year, as RFC 1123 has it): `Fri, 03 May 2024 14:00:00 +0000`.
    static func rfc822(_ rfc3339: String) -> String {
        let digits = rfc3339.split { !$0.isNumber }.compactMap { Int($0) }
        guard digits.count >= 6 else { return rfc3339 }
        let (year, month, day) = (digits[0], digits[1], digits[2])
        // Zeller-style weekday from the civil date (0 = Sunday).
        let shifted = month < 3 ? year - 1 : year
        let weekday = (shifted + shifted / 4 - shifted / 100 + shifted / 400 + [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4][month - 1] + day) % 7
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[weekday]), \(two(day)) \(months[month - 1]) \(year) \(two(digits[3])):\(two(digits[4])):\(two(digits[5])) +0000"
    }
}

/// `text` with the characters XML gives meaning to escaped, for element text and attribute values.
public func escapeXML(_ text: String) -> String {
    var text = text
    // Byte by byte: the characters replaced or dropped are ASCII, or U+FFFE and U+FFFF (EF BF BE, EF BF BF),
    // and the runs between them are copied whole. Scalar by scalar, a feed archive's bodies spent two
    // fifths of a stable-archive build here (decisions.md, 38).
    let escaped = text.withUTF8 { bytes -> [UInt8]? in
        var output: [UInt8]?
        var copied = 0, index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let replacement: StaticString
            var length = 1
            switch byte {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case UInt8(ascii: "\""): replacement = "&quot;"
            // Control characters, U+FFFE and U+FFFF are not allowed in XML 1.0 at all; they are dropped.
            case 0..<0x20 where byte != UInt8(ascii: "\n") && byte != UInt8(ascii: "\t") && byte != UInt8(ascii: "\r"):
                replacement = ""
            case 0xEF where index + 2 < bytes.count && bytes[index + 1] == 0xBF && bytes[index + 2] >= 0xBE:
                replacement = ""
                length = 3
            default:
                index += 1
                continue
            }
            if output == nil { output = []; output!.reserveCapacity(bytes.count + bytes.count / 8) }
            output!.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<index]))
            output!.append(contentsOf: UnsafeBufferPointer(start: replacement.utf8Start, count: replacement.utf8CodeUnitCount))
            index += length
            copied = index
        }
        output?.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied...]))
        return output
    }
    // Most text has nothing to escape: it is returned as it came.
    return escaped.map { String(decoding: $0, as: UTF8.self) } ?? text
}

/// `text` as a JSON string literal; `escapingHTML` also escapes `<`, `>`, `&`, U+2028 and U+2029 as
/// `\u003c`… so that it can stand inside an HTML `<script>` element.
func jsonString(_ text: String, escapingHTML: Bool = false) -> String {
    var text = text
    // Byte by byte, as `escapeXML`: what is escaped is ASCII, or U+2028 and U+2029 (E2 80 A8, E2 80 A9).
    return text.withUTF8 { bytes in
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 16 + 2)
        output.append(UInt8(ascii: "\""))
        var copied = 0, index = 0
        while index < bytes.count {
            let byte = bytes[index]
            var length = 1
            // Escaped as a backslash and this letter, else as `\u` and four hexadecimal digits.
            var letter: UInt8?
            var code: UInt32 = 0
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): letter = byte
            case UInt8(ascii: "\n"): letter = UInt8(ascii: "n")
            case UInt8(ascii: "\r"): letter = UInt8(ascii: "r")
            case UInt8(ascii: "\t"): letter = UInt8(ascii: "t")
            case 0..<0x20: code = UInt32(byte)
            case UInt8(ascii: "<") where escapingHTML, UInt8(ascii: ">") where escapingHTML, UInt8(ascii: "&") where escapingHTML:
                code = UInt32(byte)
            case 0xE2 where escapingHTML && index + 2 < bytes.count && bytes[index + 1] == 0x80
                && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                code = 0x2028 + UInt32(bytes[index + 2] - 0xA8)
                length = 3
            default:
                index += 1
                continue
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<index]))
            output.append(UInt8(ascii: "\\"))
            if let letter {
                output.append(letter)
            } else {
                output.append(UInt8(ascii: "u"))
                for shift in stride(from: 12, through: 0, by: -4) { output.append(hexDigits[Int(code >> UInt32(shift) & 0xF)]) }
            }
            index += length
            copied = index
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied...]))
        output.append(UInt8(ascii: "\""))
        return String(decoding: output, as: UTF8.self)
    }
}

/// Lower-case hexadecimal digits, as `\u00e9` writes them.
private let hexDigits = Array("0123456789abcdef".utf8)
