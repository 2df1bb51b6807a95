import Foundation

/// The Mustache templates of a site, by name (file name without `.mustache`), with partials and layouts.
///
/// Layouts use Mustache inheritance: a page template starts with `{{<base}}` and fills the `{{$blocks}}` the
/// base template declares. Each template is parsed once, here, into nodes that every render walks; the
/// output is byte for byte what swift-mustache 2.1.1, sitegen's engine before, renders (`TemplateParser`,
/// `TemplateRenderer`; the differences are listed in `TemplateDifferentialTests`).
///
/// ```swift
/// let templates = try TemplateSet(directory: site.appendingPathComponent("Templates"))
/// let html = try templates.render("list", context: ["title": "Banks", "items": rows], knownNames: ["acquirer"])
/// ```
public struct TemplateSet: Sendable {
    /// The names of every template loaded, sorted.
    public let names: [String]
    /// Each template's nodes.
    let templates: [String: [TemplateNode]]
    /// Each template's file and text, to say where a name is used.
    private let sources: [String: (file: String, text: String)]
    /// The partials and layouts each template names, in the order its tags name them.
    private let references: [String: [String]]

    /// Loads every `*.mustache` file directly in `directory`; a template that does not parse is an error naming its file and line.
    /// Errors name a file by `displayFolder` and its name (`Templates/list.mustache`, as other errors name
    /// files, from the site), or by its full path when there is none.
    public init(directory: URL, displayFolder: String? = nil) throws(TemplateError) {
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "mustache" }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        } catch {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw .missingDirectory(directory.path)
            }
            throw .unreadable(file: directory.path, reason: Self.whyUnreadable(directory.path, listing: true))
        }
        var texts: [(name: String, file: String, text: String)] = []
        for file in files {
            do {
                let shown = displayFolder.map { $0 + "/" + file.lastPathComponent } ?? file.path
                texts.append((file.deletingPathExtension().lastPathComponent, shown, try String(contentsOf: file, encoding: .utf8)))
            } catch {
                throw .unreadable(file: file.path, reason: Self.whyUnreadable(file.path, listing: false))
            }
        }
        try self.init(texts: texts)
    }

    /// Why the file or folder at `path` could not be read, in the system's words (`Permission denied`);
    /// a file that opens could not be read as UTF-8.
    private static func whyUnreadable(_ path: String, listing: Bool) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | (listing ? O_DIRECTORY : 0))
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        close(descriptor)
        return listing ? "its files cannot be listed" : "it is not UTF-8 text"
    }

    /// Compiles templates given as `(name, file, text)`, sorted by name; errors name `file`.
    init(texts: [(name: String, file: String, text: String)]) throws(TemplateError) {
        var templates: [String: [TemplateNode]] = [:]
        var sources: [String: (file: String, text: String)] = [:]
        var references: [String: [String]] = [:]
        var tags: [(name: String, location: SourceLocation)] = []
        for (name, file, text) in texts {
            sources[name] = (file, text)
            var parser = TemplateParser(text, template: name)
            do {
                templates[name] = try parser.parse()
            } catch {
                let (line, column) = parser.lineAndColumn(of: error.offset)
                throw .syntax(file: file, line: line, column: column, reason: error.reason)
            }
            references[name] = parser.references.map(\.name)
            tags += parser.references
        }
        self.names = texts.map(\.name)
        self.templates = templates
        self.sources = sources
        self.references = references
        // A partial or layout that is not there would render as nothing; it is an error where it is named.
        // A dynamic partial (`{{>*field}}`, recorded as `*field`) names its template in the data.
        for (target, location) in tags where !target.isEmpty && !target.hasPrefix("*") && templates[target] == nil {
            throw .missingPartial(name: target, file: sources[location.template]!.file, line: location.line, column: location.column,
                                  available: names)
        }
        try checkEndlessInclusion()
        try checkOverriddenBlocks()
    }

    /// Throws for the first template (by name) that includes itself, directly or through others, by tags
    /// outside any section or block: no page's data could end that recursion, so it is refused when the
    /// templates load rather than found on the first page. Inclusion inside a section may end (a tree
    /// partial inside `{{#children}}`); the renderer's nesting limit catches it if it does not.
    private func checkEndlessInclusion() throws(TemplateError) {
        var always: [String: [PartialReference]] = [:]
        for (name, nodes) in templates {
            always[name] = nodes.compactMap { node in
                guard case .partial(let reference) = node, reference.dynamicName == nil else { return nil }
                return reference
            }
        }
        for start in names {
            // Depth first along the tags that always render, with the path that got here.
            var pending: [(name: String, path: [PartialReference])] = [(start, [])]
            var seen: Set<String> = []
            while let (name, path) = pending.popLast() {
                for reference in (always[name] ?? []).reversed() {
                    let route = path + [reference]
                    if reference.name == start {
                        let first = route[0].location
                        throw .endlessInclusion(name: start, through: route.map(\.name), file: sources[start]?.file ?? start,
                                                line: first.line, column: first.column)
                    }
                    if seen.insert(reference.name).inserted { pending.append((reference.name, route)) }
                }
            }
        }
    }

    /// Calls `body` with every node of `nodes` and every node inside them: in sections, blocks' defaults
    /// and a parent tag's overrides.
    private static func forEachNode(in nodes: [TemplateNode], _ body: (TemplateNode) -> Void) {
        for node in nodes {
            body(node)
            switch node {
            case .text, .variable, .contentType: break
            case .section(let section): forEachNode(in: section.body, body)
            case .partial(let reference):
                for name in (reference.overrides ?? [:]).keys.sorted() { forEachNode(in: reference.overrides![name]!, body) }
            case .block(let block): forEachNode(in: block.body, body)
            }
        }
    }

    /// Throws for the first block (by template, line and column) that a page overrides in `{{<layout}}…`
    /// but that neither the layout nor any template it uses declares: a misspelt name would publish the
    /// layout's default in its place. A layout that includes a template by a value (`{{>*field}}`) may
    /// reach any template, so then a block must be declared by some template of the folder.
    private func checkOverriddenBlocks() throws(TemplateError) {
        var unknown: [(block: String, layout: String, location: SourceLocation)] = []
        for name in names {
            Self.forEachNode(in: templates[name] ?? []) { node in
                guard case .partial(let reference) = node, reference.dynamicName == nil, let overrides = reference.overrides,
                    !overrides.isEmpty, var declared = blocks(declaredBy: reference.name)
                else { return }
                // A block inside the page's own overrides renders in the layout, so it takes the page's overrides too.
                for body in overrides.values { declared.formUnion(Self.blockNames(in: body)) }
                for block in overrides.keys where !declared.contains(block) {
                    unknown.append((block, reference.name, reference.overrideLocations[block] ?? reference.location))
                }
            }
        }
        guard let first = unknown.min(by: { ($0.location.template, $0.location.line, $0.location.column)
                                            < ($1.location.template, $1.location.line, $1.location.column) })
        else { return }
        throw .unknownBlock(name: first.block, layout: first.layout, file: sources[first.location.template]?.file ?? first.location.template,
                            line: first.location.line, column: first.location.column,
                            available: (blocks(declaredBy: first.layout) ?? []).sorted())
    }

    /// The blocks the template `layout` and every template it uses declare; when one of them includes a
    /// template named by a value, which may be any, the blocks of every template.
    func blocks(declaredBy layout: String) -> Set<String>? {
        let reachable = used(by: layout)
        let templates = reachable.contains(where: { $0.hasPrefix("*") }) ? Set(names) : reachable
        return templates.reduce(into: []) { $0.formUnion(Self.blockNames(in: self.templates[$1] ?? [])) }
    }

    private static func blockNames(in nodes: [TemplateNode]) -> Set<String> {
        var names: Set<String> = []
        forEachNode(in: nodes) { if case .block(let block) = $0 { names.insert(block.name) } }
        return names
    }

    /// The template `name` and every partial and layout it uses, directly or through others, as
    /// `(name, text)` sorted by name: what a page rendered with it depends on.
    public func sources(usedBy name: String) -> [(name: String, text: String)] {
        used(by: name).sorted().compactMap { name in sources[name].map { (name, $0.text) } }
    }

    /// Every name the tags of template `name` and of the templates it uses look up, each part of a dotted
    /// name and each transform: a field no tag names is one no page rendered with it can show. Literal
    /// text does not count, so the `<body>` of a layout does not make a record's `body` shown.
    public func tagNames(usedBy name: String) -> Set<String> {
        var names: Set<String> = []
        for template in used(by: name) {
            Self.forEachTag(in: templates[template] ?? []) { tag in
                names.formUnion(tag.path)
                names.formUnion(tag.transforms)
            }
        }
        return names
    }

    /// Calls `body` with every tag of `nodes`: variables, sections, dynamic partial names, and those inside
    /// sections, blocks and a partial's overrides.
    private static func forEachTag(in nodes: [TemplateNode], _ body: (TagName) -> Void) {
        for node in nodes {
            switch node {
            case .text, .contentType: break
            case .variable(let tag, _): body(tag)
            case .section(let section):
                body(section.tag)
                forEachTag(in: section.body, body)
            case .partial(let reference):
                reference.dynamicName.map(body)
                for overrides in (reference.overrides ?? [:]).values { forEachTag(in: overrides, body) }
            case .block(let block): forEachTag(in: block.body, body)
            }
        }
    }

    /// Whether the template `name`, or one it uses, includes a template its data names (`{{>*kind}}`), so
    /// that a page rendered with it depends on every template.
    public func usesChosenTemplates(_ name: String) -> Bool {
        used(by: name).contains { $0.hasPrefix("*") }
    }

    /// The template `name` and every partial and layout it uses, directly or through others.
    private func used(by name: String) -> Set<String> {
        var seen: Set<String> = [], pending = [name]
        while let next = pending.popLast() {
            guard seen.insert(next).inserted, let named = references[next] else { continue }
            // A dynamic partial may render any template: a page using one depends on them all.
            if named.contains(where: { $0.hasPrefix("*") }) { pending += names }
            pending += named
        }
        return seen
    }

    /// Every transform (`{{date(closing_date)}}`, `{{#first()}}`) a tag may apply: sitegen's helpers, the
    /// transforms of text, numbers, lists and dictionaries, and those of a position in a list.
    public static let transformNames: Set<String> = TemplateText.helperNames.union([
        "empty", "capitalized", "lowercased", "uppercased", "reversed",
        "equalzero", "plusone", "minusone", "even", "odd",
        "first", "last", "count", "sorted", "enumerated", "index",
    ])

    /// Throws for the first tag (by template, line and column) that applies a transform no value has: it
    /// would print nothing on every page (`{{dat(closing_date)}}`).
    public func checkTransforms() throws(TemplateError) {
        var unknown: [(name: String, location: SourceLocation)] = []
        for name in names {
            Self.forEachTag(in: templates[name] ?? []) { tag in
                for name in tag.transforms where !Self.transformNames.contains(name) { unknown.append((name, tag.location)) }
            }
        }
        guard let first = unknown.min(by: { ($0.location.template, $0.location.line, $0.location.column)
                                            < ($1.location.template, $1.location.line, $1.location.column) })
        else { return }
        throw .unknownTransform(name: first.name, file: sources[first.location.template]?.file ?? first.location.template,
                                line: first.location.line, column: first.location.column,
                                known: Self.transformNames.sorted())
    }

    /// Renders the template `name` with `context`, where only `knownNames` may be looked up without a
    /// value: a name that is neither in the context nor known (a misspelt field) is an error naming the
    /// template file and line where it is used, not an empty string on a published page. `site` is what
    /// `absolute(…)` and `markdown(…)` use for values other than a record's text (which carries its site);
    /// without it, the context's `site.baseURL` is.
    public func render(_ name: String, context: [String: Any], knownNames: Set<String>, recordNames: Set<String> = [],
                       page: PageKind? = nil, site: TemplateText.Site? = nil, fragments: ItemFragments? = nil) throws(TemplateError) -> String {
        guard let template = templates[name] else { throw .missingTemplate(name: name, available: names) }
        // A page kind's values are written out beside the code that makes its pages: a value added there must be added here.
        assert(page.map { Set(context.keys).isSubset(of: $0.values) } ?? true, "\(page!.name) have \(context.keys.sorted())")
        var renderer = TemplateRenderer(templates: templates, knownNames: knownNames, recordNames: recordNames, page: page,
                                        preferring: name, site: site ?? Self.site(of: context))
        renderer.fragments = fragments
        let output = renderer.render(template, root: .root(context))
        try throwIfRunaway(renderer)
        if let (partial, (location, value)) = renderer.missingPartials.min(by: { $0.key < $1.key }) {
            throw .missingChosenPartial(name: partial, value: value, file: sources[location.template]?.file ?? location.template,
                                        line: location.line, column: location.column, available: names, page: nil)
        }
        // The first unknown name in order, where the page's own template uses it if it does, else where it was first used.
        if let (unknown, location) = renderer.unknownNames.min(by: { $0.key < $1.key }) {
            throw .unknownVariable(name: unknown, file: sources[location.template]?.file ?? location.template,
                                   line: location.line, column: location.column)
        }
        if let (field, location) = renderer.fieldsOutsideRecords.min(by: { $0.key < $1.key }) {
            throw .fieldOutsideRecord(name: field, file: sources[location.template]?.file ?? location.template,
                                      line: location.line, column: location.column)
        }
        if let page, let (value, location) = renderer.valuesNotOnPage.min(by: { $0.key < $1.key }) {
            // Where the name is, when it is inside one of the page's values (`pageCount` in `pagination`).
            let inside = context.keys.sorted().first { (context[$0] as? [String: Any])?[value] != nil }
            throw .valueNotOnPage(name: value, page: page.name, values: page.values.sorted(), inside: inside,
                                  file: sources[location.template]?.file ?? location.template, line: location.line, column: location.column)
        }
        return output
    }

    /// Every name a strict render of template `name` finds unknown, as `render(_:context:knownNames:)` would
    /// (it throws for the first by name): for tests that compare them all.
    func unknownNames(rendering name: String, context: [String: Any], knownNames: Set<String>) -> Set<String> {
        guard let template = templates[name] else { return [] }
        var renderer = TemplateRenderer(templates: templates, knownNames: knownNames, preferring: name)
        _ = renderer.render(template, root: .root(context))
        return Set(renderer.unknownNames.keys)
    }

    /// Renders the template `name` with `context` (dictionaries, arrays, strings, numbers, booleans), and
    /// `site` (else the context's `site.baseURL`) for helpers, as `render(_:context:knownNames:site:)` does.
    public func render(_ name: String, context: [String: Any], site: TemplateText.Site? = nil) throws(TemplateError) -> String {
        guard let template = templates[name] else { throw .missingTemplate(name: name, available: names) }
        var renderer = TemplateRenderer(templates: templates, knownNames: nil, preferring: name, site: site ?? Self.site(of: context))
        let output = renderer.render(template, root: .dictionary(context))
        try throwIfRunaway(renderer)
        return output
    }

    /// The site a page's context describes: sitegen's pages carry `site.baseURL`, so that a caller that
    /// passes no site still gets full URLs from `absolute(…)` (with raw HTML withheld from `markdown(…)`).
    private static func site(of context: [String: Any]) -> TemplateText.Site? {
        guard let site = context["site"] as? [String: Any], let baseURL = site["baseURL"] as? String else { return nil }
        return TemplateText.Site(baseURL: baseURL, allowsRawHTML: false)
    }

    private func throwIfRunaway(_ renderer: TemplateRenderer) throws(TemplateError) {
        guard let (name, location) = renderer.runaway else { return }
        throw .nestedTooDeep(name: name, limit: TemplateRenderer.nestingLimit, file: sources[location.template]?.file ?? location.template,
                             line: location.line, column: location.column)
    }
}

/// Why templates could not be loaded or used.
public enum TemplateError: Error, CustomStringConvertible, Equatable {
    /// The site has no templates folder at this path.
    case missingDirectory(String)
    /// A template file could not be read as UTF-8.
    case unreadable(file: String, reason: String)
    /// A template does not parse; `line` and `column` point at the tag at fault.
    case syntax(file: String, line: Int, column: Int, reason: String)
    /// A page asks for a template the folder does not have.
    case missingTemplate(name: String, available: [String])
    /// A tag names a value that no scope of the page has and that no page may lack.
    case unknownVariable(name: String, file: String, line: Int, column: Int)
    /// A tag uses a record's field where no record is open, so it could only print nothing.
    case fieldOutsideRecord(name: String, file: String, line: Int, column: Int)
    /// A page's own template prints, outside any section, a value that its kind of page never has
    /// (`values`), such as `pageCount` (which is `inside` `pagination`).
    case valueNotOnPage(name: String, page: String, values: [String], inside: String?, file: String, line: Int, column: Int)
    /// A `{{> partial}}` or `{{< layout}}` tag names a template the folder does not have.
    case missingPartial(name: String, file: String, line: Int, column: Int, available: [String])
    /// A dynamic partial (`{{>*layout}}`) whose value names a template the folder does not have; `page`
    /// is the page whose data chose it, once known (`onPage(_:)`).
    case missingChosenPartial(name: String, value: String, file: String, line: Int, column: Int, available: [String], page: String?)
    /// A tag applies a transform (`name(value)`) that sitegen does not have.
    case unknownTransform(name: String, file: String, line: Int, column: Int, known: [String])
    /// A template includes itself (`through` the templates named, ending with itself) outside any section,
    /// so that nothing could end it; the tag is the first on the way.
    case endlessInclusion(name: String, through: [String], file: String, line: Int, column: Int)
    /// A page overrides a block (`{{$name}}` inside `{{<layout}}…`) that the layout and the templates it uses do not declare.
    case unknownBlock(name: String, layout: String, file: String, line: Int, column: Int, available: [String])
    /// Partials and layouts nested `limit` deep while rendering a page: a template including itself whose data did not end it.
    case nestedTooDeep(name: String, limit: Int, file: String, line: Int, column: Int)

    /// The error as one line naming the file, line and column at fault, and what to do.
    /// This error, naming the page (`banks/1/index.html`) whose data chose a missing template, when it is that kind.
    public func onPage(_ path: String) -> TemplateError {
        guard case .missingChosenPartial(let name, let value, let file, let line, let column, let available, nil) = self else { return self }
        let shown = "/" + (path.hasSuffix("index.html") ? String(path.dropLast("index.html".count)) : path)
        return .missingChosenPartial(name: name, value: value, file: file, line: line, column: column, available: available, page: shown)
    }

    public var description: String {
        switch self {
        case .missingDirectory(let path):
            return "\(path): no templates folder; expected a folder of .mustache files"
        case .unreadable(let file, let reason):
            return "\(file): cannot be read: \(reason)"
        case .syntax(let file, let line, let column, let reason):
            return "\(file):\(line):\(column): template syntax error: \(reason)"
        case .missingTemplate(let name, let available):
            return "no template '\(name).mustache'; the templates folder has: \(available.joined(separator: ", "))"
        case .missingPartial(let name, let file, let line, let column, let available):
            return "\(file):\(line):\(column): no template '\(name).mustache' to include; the templates folder has: \(available.joined(separator: ", "))"
                + (name.contains("/") ? " (templates in its subfolders are not read)" : "")
        case .missingChosenPartial(let name, let value, let file, let line, let column, let available, let page):
            return "\(file):\(line):\(column): no template '\(name).mustache' to include, which '\(value)' names"
                + (page.map { " on the page \($0)" } ?? "") + "; the templates folder has: \(available.joined(separator: ", "))"
        case .unknownVariable(let name, let file, let line, let column):
            return "\(file):\(line):\(column): '\(name)' is not a field or a value this page has; check its spelling"
        case .valueNotOnPage(let name, let page, let values, let inside, let file, let line, let column):
            return "\(file):\(line):\(column): '\(name)' is not a value of \(page), so it would print nothing there; they have "
                + values.joined(separator: ", ") + (inside.map { "; '\(name)' is inside '\($0)': {{\($0).\(name)}}" } ?? "")
        case .fieldOutsideRecord(let name, let file, let line, let column):
            return "\(file):\(line):\(column): '\(name)' is a record's field, but no record is open here, so it would print nothing; "
                + "on a detail page write {{record.\(name)}} (or use it inside {{#record}}…{{/record}}), on a list page inside {{#items}}…{{/items}}"
        case .unknownTransform(let name, let file, let line, let column, let known):
            return "\(file):\(line):\(column): '\(name)(…)' is not a helper or transform; they are: \(known.joined(separator: ", "))"
        case .endlessInclusion(let name, let through, let file, let line, let column):
            let route = through.count == 1 ? "" : " (through \(through.dropLast().map { "'\($0)'" }.joined(separator: ", ")))"
            return "\(file):\(line):\(column): template '\(name)' includes itself\(route) outside any section, so it would never end; "
                + "include another template, or put the tag inside a section that the data ends"
        case .unknownBlock(let name, let layout, let file, let line, let column, let available):
            let blocks = available.isEmpty ? "it has no blocks" : "its blocks are: " + available.joined(separator: ", ")
            return "\(file):\(line):\(column): block '\(name)' is not in layout '\(layout)', so the layout's default would show instead; \(blocks)"
        case .nestedTooDeep(let name, let limit, let file, let line, let column):
            return "\(file):\(line):\(column): including '\(name)' here nests templates more than \(limit) deep; "
                + "a template that includes itself must be inside a section that the page's data ends"
        }
    }
}

/// A kind of page (list pages, detail pages…) and every value at the top of its context: a page's own
/// template that prints another value outside any section prints nothing there (`TemplateError.valueNotOnPage`).
public struct PageKind: Sendable {
    /// How messages name such pages, e.g. "list pages".
    public let name: String
    /// The values such a page may have (some only on some pages, as `section`).
    public let values: Set<String>

    /// A kind named `name` whose pages have `values`.
    public init(name: String, values: Set<String>) {
        self.name = name
        self.values = values
    }
}
