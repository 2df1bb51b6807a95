/// One piece of a compiled Mustache template: what `TemplateParser` makes of the text once, and what
/// `TemplateRenderer` walks for every page. Each case holds one reference at most, so walking a tree
/// copies no more than a pointer per node.
enum TemplateNode: Sendable {
    /// Literal text.
    case text(String)
    /// `{{name}}` (`escaped`), `{{{name}}}` or `{{&name}}`.
    case variable(TagName, escaped: Bool)
    /// `{{#name}}…{{/name}}` or `{{^name}}…{{/name}}`.
    case section(SectionNode)
    /// `{{> name}}`, or `{{< name}}…{{/name}}` with the blocks it overrides.
    case partial(PartialReference)
    /// `{{$name}}default{{/name}}`: the override of the page that extends this template, else its own body.
    case block(BlockNode)
    /// `{{%CONTENT_TYPE: TEXT}}` (no escaping from here on) or `HTML`.
    case contentType(escapesHTML: Bool)
}

/// A section: rendered for each element of a list, once for a true value or a context, or, when
/// `inverted`, only for no value, false or an empty list.
final class SectionNode: Sendable {
    let tag: TagName
    let body: [TemplateNode]
    let inverted: Bool

    init(tag: TagName, body: [TemplateNode], inverted: Bool) {
        self.tag = tag
        self.body = body
        self.inverted = inverted
    }
}

/// A layout's block with its default content.
final class BlockNode: Sendable {
    let name: String
    let body: [TemplateNode]
    /// The whitespace before the tag, put before each later line of what the block renders.
    let indentation: String

    init(name: String, body: [TemplateNode], indentation: String) {
        self.name = name
        self.body = body
        self.indentation = indentation
    }
}

/// A partial or parent template as a tag names it.
final class PartialReference: Sendable {
    /// The template's name; for a dynamic partial (`{{>*field}}`), the field holding the name.
    let name: String
    /// The name looked up in the context for a dynamic partial; `nil` for a plain one.
    let dynamicName: TagName?
    /// The whitespace of a standalone tag, put before every line of the partial after its first.
    let indentation: String?
    /// The blocks a `{{< parent}}` tag overrides; `nil` for `{{> partial}}`.
    let overrides: [String: [TemplateNode]]?
    /// Where each override's `{{$name}}` tag is, to say where a block the layout lacks is named.
    let overrideLocations: [String: SourceLocation]
    /// Where the tag is.
    let location: SourceLocation

    init(name: String, dynamicName: TagName?, indentation: String?, overrides: [String: [TemplateNode]]?,
         overrideLocations: [String: SourceLocation] = [:], location: SourceLocation) {
        self.name = name
        self.dynamicName = dynamicName
        self.indentation = indentation
        self.overrides = overrides
        self.overrideLocations = overrideLocations
        self.location = location
    }
}

/// Where a tag is: the template's name, and the line and column of its opening delimiter (from 1).
struct SourceLocation: Sendable, Equatable {
    let template: String
    let line: Int
    let column: Int
}

/// A tag's name, split once: how to find its first value, the dotted names under it, and the
/// transforms to apply, innermost first (`{{a(b(c))}}` applies `b`, then `a`, to `c`).
final class TagName: Sendable {
    /// Where the lookup of the first name starts.
    enum Start: Sendable {
        /// `{{.}}` (or a name made only of dots): the innermost context itself.
        case current
        /// `{{index()}}`, `{{#first()}}`: the position within the list being iterated.
        case position
        /// `{{.name}}`: the innermost context only, without climbing to outer ones.
        case innermost
        /// `{{name}}`: the innermost context that has the first name.
        case anyScope
    }

    let start: Start
    /// The dot-separated names (empty names dropped, as `a..b` is `a.b`).
    let path: [String]
    /// The transforms in the order they apply.
    let transforms: [String]
    let location: SourceLocation

    /// Reads `name` and its `transforms` (outermost first, as written) as the tag gives them.
    init(name: String, transforms: [String], location: SourceLocation) {
        path = name.split(separator: ".").map(String.init)
        if name.isEmpty, !transforms.isEmpty {
            start = .position
        } else if path.isEmpty {
            start = .current
        } else {
            start = name.hasPrefix(".") ? .innermost : .anyScope
        }
        self.transforms = transforms.reversed()
        self.location = location
    }
}
