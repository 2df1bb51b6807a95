import Foundation
import SiteRender
import SiteSources

/// A record's declared fields as a theme shows them whatever the collection (`{{#fields}}`): each with a
/// label, its value, its type as flags to format it by (`{{#isDate}}{{date(value)}}{{/isDate}}`), and a list's
/// items linked to their taxonomy pages when a listing of the configuration makes such pages.
///
/// ```mustache
/// {{#fields}}<dt>{{label}}</dt><dd>{{#isNumber}}{{number(value)}}{{/isNumber}}{{#isList}}{{#items}}…{{/items}}{{/isList}}</dd>{{/fields}}
/// ```
struct FieldDisplay {
    /// One shown field: its name, label and type.
    private struct Shown {
        let name: String
        let label: String
        let type: FieldType
        /// For a list field, the taxonomy listing's path pattern (`/tags/{section}/`) its items link to.
        let taxonomyPath: PathPattern?
    }

    private let shown: [Shown]
    private let basePath: String

    /// Fields a page shows elsewhere (its title, body and description) or that only drive the site
    /// (weight, aliases, draft), and a feed's HTML and update date, are not listed.
    static let hiddenNames: Set<String> = ["title", "body", "slug", "description", "weight", "aliases", "draft"]
    static let hiddenFeedNames: Set<String> = ["content", "summary", "updated"]

    init(collection: CollectionConfig, config: SiteConfig) {
        basePath = config.basePath
        let hidden = Self.hiddenNames.union(collection.kind == .feed ? Self.hiddenFeedNames : [])
            .union([collection.detail?.titleField, collection.detail?.bodyField].compactMap { $0 })
        let related = Set(collection.relationships.map(\.field))
        shown = collection.fields.filter { !hidden.contains($0.name) && !related.contains($0.name) }.map { field in
            let taxonomy = config.listings.first { $0.from == collection.name && $0.taxonomy == field.name }
            return Shown(name: field.name, label: Self.label(field.name), type: field.type, taxonomyPath: taxonomy.map { PathPattern($0.path) })
        }
    }

    /// `closing_date` as a reader reads it: `Closing date`.
    static func label(_ name: String) -> String {
        let words = name.replacingOccurrences(of: "_", with: " ").replacingOccurrences(of: "-", with: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    /// The entries of a record whose values templates see under `value(name)`; a field without a value is left out.
    func entries(_ value: (String) -> Any?) -> [[String: Any]] {
        shown.compactMap { field -> [String: Any]? in
            guard let found = value(field.name) else { return nil }
            // Every flag is given, false too: a missing one would be looked up in the record around it.
            var entry: [String: Any] = ["name": field.name, "label": field.label, "value": found,
                                        "isDate": false, "isNumber": false, "isText": false, "isLink": false,
                                        "isList": false, "isBool": false, "items": false]
            switch (field.type, found) {
            case (.date, _), (.datetime, _): entry["isDate"] = true
            case (.integer, _), (.real, _): entry["isNumber"] = true
            case (.bool, _): entry["isBool"] = true
            case (.list, let items as [TemplateText]):
                entry["isList"] = true
                entry["items"] = items.map { item -> [String: Any] in
                    let url = field.taxonomyPath.map { path in basePath + path.fill { _ in item.text }.dropFirst() }
                    return ["name": item, "url": url ?? "", "linked": url != nil]
                }
            case (_, let text as TemplateText):
                let isLink = text.text.hasPrefix("https://") || text.text.hasPrefix("http://")
                entry[isLink ? "isLink" : "isText"] = true
            default: return nil
            }
            return entry
        }
    }
}

extension PageRenderer {
    /// The presenter of `collection`'s records on pages of `template`: with their `fields` when the template
    /// (with its partials and layout) shows them.
    func presenter(of collection: CollectionConfig, template: String) -> RecordPresenter {
        var presenter = RecordPresenter(collection: collection, config: config)
        if templates.tagNames(usedBy: template).contains("fields") {
            presenter.fieldDisplay = FieldDisplay(collection: collection, config: config)
        }
        return presenter
    }

    /// A listing of a collection without detail pages, whose template names `url`: its items have none, so
    /// the theme links them nowhere (the starter theme shows their titles unlinked). Said once a build, at `from`.
    func linksWithoutPages(_ listing: ListingConfig, collection: CollectionConfig) -> SourceError? {
        guard collection.detail == nil, templates.tagNames(usedBy: listing.template).contains("url") else { return nil }
        let mark = listing.marks["from"] ?? listing.marks[""]
        return SourceError(file: config.file, line: mark?.line, column: mark?.column, reason:
            "listing '\(listing.name)': collection '\(collection.name)' has no detail pages, so its items link nowhere "
                + "(their url is empty); give '\(collection.name)' a detail: with a path, such as /\(collection.name)/{key}/, for a page per record")
    }
}
