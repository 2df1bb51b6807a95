import Mustache
@testable import SiteRender

// How swift-mustache saw a record's text while sitegen rendered with it: transformable by sitegen's
// helpers and the string transforms, and with no names of its own (inside `{{#field}}` names are looked
// up in the page around it).
extension TemplateText: MustacheTransformable, MustacheParent {
    public func child(named: String) -> Any? { nil }
}

/// swift-mustache 2.1.1, the engine sitegen rendered with before it had its own: the oracle the
/// differential tests hold `TemplateSet` to.
struct ReferenceTemplates {
    let library: MustacheLibrary

    /// Compiles `(name, text)` templates; `nil` when one does not parse.
    init?(_ texts: [(name: String, text: String)]) {
        var library = MustacheLibrary()
        for (name, text) in texts {
            guard let template = try? MustacheTemplate(string: text) else { return nil }
            library.register(template, named: name)
        }
        self.library = library
    }

    /// The template `name` rendered with `context`.
    func render(_ name: String, context: [String: Any]) -> String {
        library.render(context, withTemplate: name) ?? ""
    }

    /// The template `name` rendered as sitegen's strict render did, with the names that no scope had.
    func renderStrictly(_ name: String, context: [String: Any], knownNames: Set<String>) -> (output: String, unknownNames: Set<String>) {
        let root = ReferenceStrictRoot(values: context, knownNames: knownNames)
        let output = library.render(root, withTemplate: name) ?? ""
        return (output, root.unknownNames)
    }
}

/// The bottom of the lookup stack in sitegen's strict render before its own engine: a name that reaches
/// it unfound is recorded unless it is known.
final class ReferenceStrictRoot: MustacheParent, CustomStringConvertible {
    let values: [String: Any]
    let knownNames: Set<String>
    private(set) var unknownNames = Set<String>()

    init(values: [String: Any], knownNames: Set<String>) {
        self.values = values
        self.knownNames = knownNames
    }

    func child(named name: String) -> Any? {
        if let value = values[name] { return value }
        if !knownNames.contains(name) { unknownNames.insert(name) }
        return nil
    }

    /// The old root printed its class name for `{{.}}`; sitegen now prints the context as a dictionary
    /// (a deliberate difference, see `TemplateDifferentialTests`), so the oracle does too.
    var description: String { String(describing: values) }
}
