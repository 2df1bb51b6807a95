import Foundation

/// A feed file (RSS or Atom): each item is a record keyed by its guid / id, else its link.
public struct FeedSource: Source {
    /// Where the file is.
    public let url: URL
    /// The file as messages name it.
    public let displayName: String

    /// Reads the feed at `url`.
    public init(url: URL, displayName: String) {
        self.url = url
        self.displayName = displayName
    }

    /// Reads every item as a record; a repeated id keeps the first item and warns. A feed file is parsed
    /// as it is read (after one pass that checks its encoding), so its items are never all in memory.
    public func read(_ input: inout SourceInput, emit: (Record) throws(SourceError) -> Void) throws(SourceError) -> [SourceError] {
        var filter = ItemFilter(file: displayName)
        func add(_ item: FeedItem) throws(SourceError) {
            if let item = filter.admit(item) { try emit(Self.record(item)) }
        }
        let document: FeedDocument
        if let data = input.dataInMemory {
            _ = input.readAll()
            document = try FeedParser(file: displayName).parse(data)
            for item in document.items { try add(item) }
        } else {
            var prescan = FeedPrescan()
            input.forEachChunk { prescan.feed($0) }
            document = try FeedParser(file: displayName).parse(contentsOf: url, prescan: prescan, emit: add)
        }
        // The document's own warnings come first, in line order, then the repeated ids.
        return document.warnings + filter.warnings
    }

    /// `document` (parsed from `file`) as a load keeps it: a repeated id's later items and links that are
    /// not web addresses left out, with the load's warnings (for `sitegen parse`).
    public static func asLoaded(_ document: FeedDocument, file: String) -> FeedDocument {
        var filter = ItemFilter(file: file), loaded = document
        loaded.items = document.items.compactMap { filter.admit($0) }
        loaded.warnings += filter.warnings
        return loaded
    }

    /// What a load keeps of each item in turn: the first of each id, without a link that is not a web address.
    private struct ItemFilter {
        let file: String
        var warnings: [SourceError] = []
        private var seen: [String: Int] = [:]

        init(file: String) { self.file = file }

        /// The item as loaded, or `nil` when an earlier one has its id.
        mutating func admit(_ item: FeedItem) -> FeedItem? {
            if let earlier = seen[item.id] {
                warnings.append(SourceError(file: file, line: item.line,
                                            reason: "item id '\(item.id)' repeats the item at line \(earlier); the first one is kept"))
                return nil
            }
            seen[item.id] = item.line
            var item = item
            if let link = item.link, !FeedSource.isWebAddress(link) {
                // Templates put the link in an `href`: a `javascript:` one would run in the reader's browser.
                warnings.append(SourceError(file: file, line: item.line,
                                            reason: "item link '\(link.prefix(80))' is not a web address; the item is kept without it"))
                item.link = nil
            }
            if let link = item.sourceLink, !FeedSource.isWebAddress(link) {
                warnings.append(SourceError(file: file, line: item.line,
                                            reason: "the source link '\(link.prefix(80))' of item '\(item.id)' is not a web address; the item is kept without it"))
                item.sourceLink = nil
            }
            return item
        }
    }

    static func record(_ item: FeedItem) -> Record {
        func text(_ value: String?) -> FieldValue { value.map(FieldValue.text) ?? .null }
        return Record(key: item.id, line: item.line, fields: [
            "title": text(item.title),
            "link": text(item.link),
            "published": text(item.published.map(FeedDate.rfc3339)),
            "updated": text(item.updated.map(FeedDate.rfc3339)),
            "author": text(item.author),
            "summary": text(item.summary),
            "content": text(item.content),
            "categories": .list(item.categories),
            "slug": .text(slugSource(item)),
            "source_title": text(item.sourceTitle),
            "source_link": text(item.sourceLink),
        ])
    }

    /// The text an item's page name is made from: the last segment of its link (what the publisher chose),
    /// with the values of its query when it has one (`watch?v=abc`, `article.php?id=7`), else its id.
    static func slugSource(_ item: FeedItem) -> String {
        for candidate in [item.link, item.id].compactMap({ $0 }) {
            let components = URLComponents(string: candidate)
            var segments = (components?.path ?? candidate).split(separator: "/").map(String.init)
            // A page's own extension says nothing (`a.html`); other dots are the name's (`v1.2.3`).
            if let last = segments.last, let dot = last.lastIndex(of: "."),
                webExtensions.contains(last[last.index(after: dot)...].lowercased())
            {
                segments[segments.count - 1] = String(last[..<dot])
            }
            // A folder's index page is named by the folder.
            if let last = segments.last, ["index", "default"].contains(last.lowercased()) { segments.removeLast() }
            let query = (components?.queryItems ?? []).compactMap(\.value).filter(Self.namesSomething)
            // A segment without a letter or digit (`/🎉`, `/..`, a zero-width space) makes no page name: every
            // such item of a feed was `untitled`, and the build failed on a feed its owner cannot change.
            guard let name = segments.last(where: Self.namesSomething) else {
                if !query.isEmpty { return query.joined(separator: "-") }
                continue
            }
            if !query.isEmpty { return ([name] + query).joined(separator: "-") }
            if !["item", "post"].contains(name.lowercased()) { return name }
        }
        return item.id
    }

    /// Whether `text` has a letter or digit, which is what a page name keeps of it.
    private static func namesSomething(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.isAlphabetic || $0.properties.numericType != nil }
    }

    /// Whether `link` leads to a page: an `http`, `https` or `ftp` address, or a relative one (a
    /// feed's own links are resolved against its base before this). Not `javascript:`, `data:`,
    /// `vbscript:` or any other scheme a browser would run or show in place.
    static func isWebAddress(_ link: String) -> Bool {
        // Browsers drop tabs and newlines inside a scheme and ignore leading spaces and controls.
        let cleaned = link.unicodeScalars.filter { $0.value > 0x20 }.map(Character.init)
        guard let colon = cleaned.firstIndex(of: ":") else { return true }
        let scheme = String(cleaned[..<colon])
        // A colon after a slash, `?` or `#` is in a relative path, query or fragment, not a scheme.
        guard scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
              let first = scheme.first, first.isLetter else { return true }
        return ["http", "https", "ftp"].contains(scheme.lowercased())
    }

    /// Extensions of pages, which a link's last segment loses in its slug.
    private static let webExtensions: Set<String> = ["html", "htm", "xhtml", "shtml", "php", "asp", "aspx", "jsp", "cfm", "cgi", "pl", "xml"]
}
