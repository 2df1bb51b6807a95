import Foundation
import SiteRender
import SiteStore

/// Turns a stored row of a collection into what templates see: its fields, its key, its page URL and title.
///
/// What every row needs from the collection's declaration (which fields are lists, the detail path's
/// parts, the relationships) is worked out once: a listing presents a hundred thousand rows.
struct RecordPresenter {
    let collection: CollectionConfig
    let config: SiteConfig
    /// `config.basePath`, worked out once: every link on a page starts with it.
    let basePath: String
    private let site: TemplateText.Site
    private let listFields: Set<String>
    /// Fields declared `bool`, stored as 0 or 1.
    private let boolFields: Set<String>
    private let detailPattern: PathPattern?
    /// The column filling each of the detail path's placeholders (`{key}` is `_key`).
    private let placeholderColumns: [String]
    private let titleField: String
    private let toMany: [(field: String, target: CollectionConfig)]
    private let toOne: [(field: String, target: CollectionConfig)]
    /// Set when a template shows `fields` (the record's declared fields, labelled and typed): only then is
    /// the list made for every row.
    var fieldDisplay: FieldDisplay?

    init(collection: CollectionConfig, config: SiteConfig, basePath: String? = nil) {
        self.collection = collection
        self.config = config
        self.basePath = basePath ?? config.basePath
        site = config.templateSite
        listFields = Set(collection.fields.filter { $0.type == .list }.map(\.name))
        boolFields = Set(collection.fields.filter { $0.type == .bool }.map(\.name))
        detailPattern = collection.detail.map { PathPattern($0.path) }
        placeholderColumns = detailPattern?.placeholders.map { $0 == "key" ? "_key" : $0 } ?? []
        titleField = collection.detail?.titleField ?? "title"
        toMany = collection.relationships.filter(\.toMany).compactMap { relationship in
            config.collection(named: relationship.target).map { (relationship.field, $0) }
        }
        toOne = collection.toOneRelationships.compactMap { relationship in
            config.collection(named: relationship.target).map { (relationship.field, $0) }
        }
    }

    /// Where a row's fields are, worked out once for rows with the same columns: a page's rows come
    /// from one query, and looking each column's role up by name for every row cost more than the rest
    /// of presenting it. It also names the slots of the rows' `TemplateRecord`s, shared by them all.
    struct Layout {
        /// The columns this layout is for.
        let columns: [String]
        /// The names templates see, each once: the fields, then `key`, `title` and `url`, then the
        /// relationships (a name given twice is one slot, which the later value takes, as a dictionary's key would).
        fileprivate let names: [String]
        /// The fields templates see, by column and slot: each column not starting with `_` nor naming a
        /// related record's field (`field.column`), and whether it holds a stored list.
        fileprivate let fields: [(index: Int, slot: Int, isList: Bool, isBool: Bool)]
        fileprivate let keySlot: Int, titleSlot: Int, urlSlot: Int
        fileprivate let fieldsSlot: Int?
        fileprivate let toManySlots: [Int], toOneSlots: [Int]
        /// A feed item's source feed (`source.title`, `source.link`): its slot and the two columns.
        fileprivate let source: (slot: Int, title: Int?, link: Int?)?
        fileprivate let key: Int?
        fileprivate let title: Int?
        /// The column filling each of the detail path's placeholders, in order.
        fileprivate let placeholders: [Int?]
    }

    /// The layout of rows with `columns`.
    func layout(of columns: [String]) -> Layout {
        var names: [String] = []
        func slot(_ name: String) -> Int {
            if let known = names.firstIndex(of: name) { return known }
            names.append(name)
            return names.count - 1
        }
        var fields: [(index: Int, slot: Int, isList: Bool, isBool: Bool)] = []
        // `utf8.contains`, not `contains(".")`: the latter is Foundation's substring search.
        for (index, column) in columns.enumerated() where !column.hasPrefix("_") && !column.utf8.contains(UInt8(ascii: ".")) {
            fields.append((index, slot(column), listFields.contains(column), boolFields.contains(column)))
        }
        let (keySlot, titleSlot, urlSlot) = (slot("key"), slot("title"), slot("url"))
        let fieldsSlot = fieldDisplay.map { _ in slot("fields") }
        let toManySlots = toMany.map { slot($0.field) }, toOneSlots = toOne.map { slot($0.field) }
        let source = collection.kind == .feed ? (slot("source"), columns.firstIndex(of: "source_title"), columns.firstIndex(of: "source_link")) : nil
        return Layout(columns: columns, names: names, fields: fields, keySlot: keySlot, titleSlot: titleSlot, urlSlot: urlSlot, fieldsSlot: fieldsSlot,
                      toManySlots: toManySlots, toOneSlots: toOneSlots, source: source,
                      key: columns.firstIndex(of: "_key"), title: columns.firstIndex(of: titleField),
                      placeholders: placeholderColumns.map { columns.firstIndex(of: $0) })
    }

    /// The site path of the row's detail page (`/banks/10538/`), `nil` when the collection has none.
    func detailPath(_ row: Row) -> String? {
        // A detail page's links need the path alone, not the layout of every column.
        detailPattern?.fill { placeholder in row[placeholderColumns[placeholder]]?.stringValue }
    }

    private func detailPath(_ row: Row, layout: Layout) -> String? {
        detailPattern?.fill { placeholder in layout.placeholders[placeholder].flatMap { row.values[$0].stringValue } }
    }

    /// The title shown for the row: the detail's title field, else `title`, else the key.
    func title(_ row: Row) -> String {
        row[titleField]?.stringValue ?? row["_key"]?.stringValue ?? ""
    }

    private func title(_ row: Row, layout: Layout) -> String {
        layout.title.flatMap { row.values[$0].stringValue } ?? layout.key.flatMap { row.values[$0].stringValue } ?? ""
    }

    /// The rows as template contexts (`context(_:related:)`), with `related(row)` for each row's related records.
    func contexts(_ rows: [Row], related: (Row) -> [String: [Row]]) -> [TemplateRecord] {
        var layout: Layout?
        return rows.map { row in
            // Comparing the arrays compares their storage first: rows from one query share it.
            if layout?.columns != row.columns { layout = self.layout(of: row.columns) }
            return context(row, related: related(row), layout: layout!)
        }
    }

    /// The row as a template context: every non-null field by name, plus `key`, `title` and `url`; a
    /// to-many relationship's field holds its related records (`related`, by field), in the list's order.
    /// Texts come as `TemplateText`, so templates can apply sitegen's helpers (`{{date(closing_date)}}`).
    func context(_ row: Row, related: [String: [Row]] = [:]) -> TemplateRecord {
        context(row, related: related, layout: layout(of: row.columns))
    }

    private func context(_ row: Row, related: [String: [Row]], layout: Layout) -> TemplateRecord {
        // `Array(repeating:count:)` copies its element through the value witness, slot by slot.
        var values = [Any?](unsafeUninitializedCapacity: layout.names.count) { slots, count in
            for slot in slots.indices { (slots.baseAddress! + slot).initialize(to: nil) }
            count = slots.count
        }
        for field in layout.fields {
            if field.isBool {
                // Stored as 0 or 1: a section shows for true only, and the value prints as true or false.
                values[field.slot] = row.values[field.index].int64Value.map { $0 != 0 }
                continue
            }
            guard let text = row.values[field.index].stringValue else { continue }
            if field.isList {
                // Lists are stored as JSON arrays; templates iterate them ({{#tags}}{{.}}{{/tags}}).
                let items = StoredList.decode(text).map { TemplateText($0, site: site) }
                if !items.isEmpty { values[field.slot] = items }
            } else {
                values[field.slot] = TemplateText(text, site: site)
            }
        }
        values[layout.keySlot] = TemplateText(layout.key.flatMap { row.values[$0].stringValue } ?? "", site: site)
        values[layout.titleSlot] = TemplateText(title(row, layout: layout), site: site)
        if let path = detailPath(row, layout: layout) { values[layout.urlSlot] = TemplateText(url(path), site: site) }
        if let source = layout.source {
            // The feed a planet's entry came from, shown as `{{#source}}<a href="{{link}}">{{title}}</a>{{/source}}`.
            let title = source.title.flatMap { row.values[$0].stringValue }, link = source.link.flatMap { row.values[$0].stringValue }
            if title != nil || link != nil {
                values[source.slot] = TemplateRecord(names: ["title", "link"], values: [title.map { TemplateText($0, site: site) }, link.map { TemplateText($0, site: site) }])
            }
        }
        if let fieldDisplay, let slot = layout.fieldsSlot {
            let entries = fieldDisplay.entries { name in layout.names.firstIndex(of: name).flatMap { values[$0] } }
            values[slot] = entries.isEmpty ? nil : entries
        }
        // A related record (prefetched as `field.column`) replaces its key with the record itself.
        for ((field, target), slot) in zip(toMany, layout.toManySlots) {
            let presenter = RecordPresenter(collection: target, config: config, basePath: basePath)
            let records = presenter.contexts(related[field] ?? []) { _ in [:] }
            values[slot] = records.isEmpty ? nil : records
        }
        for ((field, target), slot) in zip(toOne, layout.toOneSlots) {
            let prefix = field + "."
            let columns = row.columns.indices.filter { row.columns[$0].hasPrefix(prefix) }
            guard !columns.isEmpty else { continue }
            guard let index = row.columns.firstIndex(of: prefix + "_key"), !row.values[index].isNull else {
                // A key that names no record is left out: `{{#bank}}` must not show the referring record's own values.
                values[slot] = nil
                continue
            }
            let related = Row(columns: columns.map { String(row.columns[$0].dropFirst(prefix.count)) }, values: columns.map { row.values[$0] })
            values[slot] = RecordPresenter(collection: target, config: config, basePath: basePath).context(related)
        }
        return TemplateRecord(names: layout.names, values: values)
    }

    /// A site path as a link: the base path joined with it.
    func url(_ path: String) -> String {
        let utf8 = path.utf8
        let start = utf8.firstIndex { $0 != UInt8(ascii: "/") } ?? utf8.endIndex
        var url = ""
        url.reserveCapacity(basePath.utf8.count + utf8.distance(from: start, to: utf8.endIndex))
        url += basePath
        url += path[start...]
        return url
    }
}

/// Renders a detail page's body field as its declared format asks.
struct BodyFormatter {
    let markdown: MarkdownRenderer

    func html(_ text: String, format: DetailConfig.BodyFormat) -> String {
        switch format {
        case .markdown: return markdown.html(text)
        case .html: return text
        case .sanitized: return HTMLSanitizer.sanitize(text)
        case .text:
            return text.components(separatedBy: "\n\n")
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { !$0.isEmpty }
                .map { "<p>" + escapeXML($0) + "</p>\n" }
                .joined()
        }
    }
}
