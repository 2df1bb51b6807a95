/// The items of one list section as a page renders them, one piece per item: pieces rendered before are
/// put in as they are, the others rendered and kept, so that a page whose rows only moved along (a
/// newest-first listing after a new record) is mostly made of pieces rendered once.
///
/// A template allows it (`TemplateSet.rendersItemsAlone`) when the section's output for an item depends on
/// the item alone; a render applies it only where the section is met at the page's own scope with no
/// indentation. When `applied` is false after a render, the cached pieces were not used: a page whose
/// items were not all given must then be rendered again without them.
public final class ItemFragments: @unchecked Sendable {
    /// The section's name in the page's context (`items`).
    public let section: String
    /// Per item, its piece as rendered before; nil where the item is to be rendered.
    public let cached: [String?]
    /// The pieces rendered by this render, by item position.
    public internal(set) var rendered: [Int: String] = [:]
    /// Whether the render put the items in piece by piece.
    public internal(set) var applied = false

    /// Pieces for the `cached.count` items of `section`.
    public init(section: String, cached: [String?]) {
        self.section = section
        self.cached = cached
    }
}

extension TemplateSet {
    /// Whether template `name` renders each item of its list section `section` from the item alone: the
    /// template and everything it includes name `section` once, as a section (besides inverted ones); the
    /// section's body names none of the page's values in `varying`, no list position (`{{index()}}`), no
    /// template chosen by data, no layout block; and its text before the first tag holds `<` or `>`, so that what
    /// came before an item (a half-written `href="`) cannot change how the item prints.
    public func rendersItemsAlone(_ name: String, section: String, varying: Set<String>) -> Bool {
        guard let nodes = templates[name] else { return false }
        var check = ItemSectionCheck(templates: templates, section: section, varying: varying)
        check.walk(nodes)
        return check.verdict
    }
}

/// Walks a template for `rendersItemsAlone`.
private struct ItemSectionCheck {
    let templates: [String: [TemplateNode]]
    let section: String
    let varying: Set<String>
    private var sections = 0
    private var refused = false
    private var visiting: Set<String> = []

    init(templates: [String: [TemplateNode]], section: String, varying: Set<String>) {
        self.templates = templates
        self.section = section
        self.varying = varying
    }

    var verdict: Bool { !refused && sections == 1 }

    private func names(_ tag: TagName) -> Bool {
        tag.start == .anyScope && tag.path.first == section
    }

    /// Walks the page's nodes, counting the item section and checking its body.
    mutating func walk(_ nodes: [TemplateNode]) {
        for node in nodes where !refused {
            switch node {
            case .text, .contentType:
                break
            case .variable(let tag, _):
                if names(tag) { refused = true }
            case .section(let node):
                if names(node.tag) && !node.inverted {
                    sections += 1
                    if !node.tag.transforms.isEmpty || !bodyIsItsOwn(node.body) { refused = true }
                } else {
                    if names(node.tag) && !node.tag.transforms.isEmpty { refused = true }
                    walk(node.body)
                }
            case .partial(let reference):
                guard reference.dynamicName == nil else { refused = true; continue }
                for body in (reference.overrides ?? [:]).values { walk(body) }
                walkTemplate(reference.name)
            case .block(let block):
                walk(block.body)
            }
        }
    }

    private mutating func walkTemplate(_ name: String) {
        // A template including itself is ended by its data; walked once, it says all it can.
        guard !visiting.contains(name), let nodes = templates[name] else { return }
        visiting.insert(name)
        walk(nodes)
        visiting.remove(name)
    }

    /// Whether the section's body prints an item from the item alone (and the site's constant values).
    private func bodyIsItsOwn(_ body: [TemplateNode]) -> Bool {
        // The text before the first tag (the parser may keep it as a node per line).
        let opening = body.prefix { if case .text = $0 { true } else { false } }
        let closesAttribute = opening.contains { node in
            guard case .text(let text) = node else { return false }
            return text.utf8.contains { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") }
        }
        guard closesAttribute else { return false }
        var seen: Set<String> = []
        return isItsOwn(body, seen: &seen)
    }

    private func isItsOwn(_ nodes: [TemplateNode], seen: inout Set<String>) -> Bool {
        func allowed(_ tag: TagName) -> Bool {
            switch tag.start {
            case .position: return false
            case .anyScope: return !varying.contains(tag.path[0])
            case .current, .innermost: return true
            }
        }
        for node in nodes {
            switch node {
            case .text, .contentType:
                continue
            case .variable(let tag, _):
                if !allowed(tag) { return false }
            case .section(let node):
                if !allowed(node.tag) || !isItsOwn(node.body, seen: &seen) { return false }
            case .partial(let reference):
                guard reference.dynamicName == nil, reference.overrides == nil else { return false }
                if seen.contains(reference.name) { continue }
                seen.insert(reference.name)
                guard let nodes = templates[reference.name], isItsOwn(nodes, seen: &seen) else { return false }
            case .block:
                return false
            }
        }
        return true
    }
}
