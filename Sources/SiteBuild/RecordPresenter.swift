import Foundation
import SiteRender
import SiteStore

/// Turns a stored row of a collection into what templates see: its fields, its key, its page URL and title.
struct RecordPresenter {
    let collection: CollectionConfig
    let config: SiteConfig
    /// `config.basePath`, worked out once: every link on a page starts with it.
    let basePath: String

    init(collection: CollectionConfig, config: SiteConfig, basePath: String? = nil) {
        self.collection = collection
        self.config = config
        self.basePath = basePath ?? config.basePath
    }

    /// The site path of the row's detail page (`/banks/10538/`), `nil` when the collection has none.
    func detailPath(_ row: Row) -> String? {
        guard let detail = collection.detail else { return nil }
        return PathPattern(detail.path).fill { name in
            (name == "key" ? row["_key"] : row[name])?.stringValue
        }
    }

    /// The title shown for the row: the detail's title field, else `title`, else the key.
    func title(_ row: Row) -> String {
        let field = collection.detail?.titleField ?? "title"
        return row[field]?.stringValue ?? row["_key"]?.stringValue ?? ""
    }

    /// The row as a template context: every non-null field by name, plus `key`, `title` and `url`; a
    /// to-many relationship's field holds its related records (`related`, by field), in the list's order.
    /// Texts come as `TemplateText`, so templates can apply sitegen's helpers (`{{date(closing_date)}}`).
    func context(_ row: Row, related: [String: [Row]] = [:]) -> [String: Any] {
        let site = TemplateText.Site(baseURL: config.baseURL, allowsRawHTML: config.allowsRawHTML)
        var context: [String: Any] = [:]
        // `utf8.contains`, not `contains(".")`: the latter is Foundation's substring search, per column per row.
        for (column, value) in zip(row.columns, row.values) where !column.hasPrefix("_") && !column.utf8.contains(UInt8(ascii: ".")) {
            guard let text = value.stringValue else { continue }
            if collection.fields.contains(where: { $0.name == column && $0.type == .list }) {
                // Lists are stored as JSON arrays; templates iterate them ({{#tags}}{{.}}{{/tags}}).
                let items = StoredList.decode(text).map { TemplateText($0, site: site) }
                if !items.isEmpty { context[column] = items }
            } else {
                context[column] = TemplateText(text, site: site)
            }
        }
        context["key"] = TemplateText(row["_key"]?.stringValue ?? "", site: site)
        context["title"] = TemplateText(title(row), site: site)
        if let path = detailPath(row) { context["url"] = TemplateText(url(path), site: site) }
        // A related record (prefetched as `field.column`) replaces its key with the record itself.
        for relationship in collection.relationships where relationship.toMany {
            guard let target = config.collection(named: relationship.target) else { continue }
            let presenter = RecordPresenter(collection: target, config: config, basePath: basePath)
            let records = (related[relationship.field] ?? []).map { presenter.context($0) }
            context[relationship.field] = records.isEmpty ? nil : records
        }
        for relationship in collection.toOneRelationships {
            let prefix = relationship.field + "."
            let columns = row.columns.indices.filter { row.columns[$0].hasPrefix(prefix) }
            guard let target = config.collection(named: relationship.target), !columns.isEmpty,
                let index = row.columns.firstIndex(of: prefix + "_key"), !row.values[index].isNull
            else { continue }
            let related = Row(columns: columns.map { String(row.columns[$0].dropFirst(prefix.count)) }, values: columns.map { row.values[$0] })
            context[relationship.field] = RecordPresenter(collection: target, config: config, basePath: basePath).context(related)
        }
        return context
    }

    /// A site path as a link: the base path joined with it.
    func url(_ path: String) -> String {
        basePath + path.drop { $0 == "/" }
    }
}

/// Renders a detail page's body field as its declared format asks.
struct BodyFormatter {
    let markdown: MarkdownRenderer

    func html(_ text: String, format: DetailConfig.BodyFormat) -> String {
        switch format {
        case .markdown: return markdown.html(text)
        case .html: return text
        case .text:
            return text.components(separatedBy: "\n\n")
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { !$0.isEmpty }
                .map { "<p>" + escapeXML($0) + "</p>\n" }
                .joined()
        }
    }
}
