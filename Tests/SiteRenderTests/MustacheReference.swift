import Mustache
@testable import SiteRender

// How swift-mustache saw a record's text while sitegen rendered with it: transformable by sitegen's
// helpers and the string transforms, and with no names of its own (inside `{{#field}}` names are looked
// up in the page around it).
extension TemplateText: MustacheTransformable, MustacheParent {
    public func child(named: String) -> Any? { nil }
}

// Comparable by its text, so that swift-mustache's `sorted` sorts a record's list field as sitegen does
// (its own engine never had records' texts to sort).
extension TemplateText: Comparable {
    public static func == (a: TemplateText, b: TemplateText) -> Bool { a.text == b.text }
    public static func < (a: TemplateText, b: TemplateText) -> Bool { a.text < b.text }
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

    /// The template `name` rendered with `context`, its dictionaries in key order (`OrderedReferenceDictionary`).
    func render(_ name: String, context: [String: Any]) -> String {
        Self.named(library.render(Self.ordered(context), withTemplate: name) ?? "")
    }

    /// The template `name` rendered as sitegen's strict render did, with the names that no scope had.
    func renderStrictly(_ name: String, context: [String: Any], knownNames: Set<String>) -> (output: String, unknownNames: Set<String>) {
        let root = ReferenceStrictRoot(values: Self.ordered(context).values, knownNames: knownNames)
        let output = library.render(root, withTemplate: name) ?? ""
        return (Self.named(output), root.unknownNames)
    }

    /// `value` with every dictionary in it, at any depth, an `OrderedReferenceDictionary`.
    static func ordered(_ value: [String: Any]) -> OrderedReferenceDictionary {
        OrderedReferenceDictionary(value.mapValues(ordered))
    }

    /// By exact type: an empty array casts to an array of any element type, and prints its type's name.
    private static func ordered(_ value: Any) -> Any {
        let type = Swift.type(of: value)
        if type == [String: Any].self { return ordered(value as! [String: Any]) }
        if type == [String: String].self { return OrderedReferenceDictionary(value as! [String: String], texts: true) }
        if type == [[String: Any]].self { return (value as! [[String: Any]]).map { ordered($0) } }
        if type == [Any].self { return (value as! [Any]).map(ordered) }
        return value
    }

    /// A reversed view of a list of dictionaries names their type: sitegen's are dictionaries.
    private static func named(_ output: String) -> String {
        output.replacingOccurrences(of: "Array<OrderedReferenceDictionary>", with: "Array<Dictionary<String, Any>>")
            .replacingOccurrences(of: "Array&lt;OrderedReferenceDictionary&gt;", with: "Array&lt;Dictionary&lt;String, Any&gt;&gt;")
    }
}

/// A dictionary as sitegen prints and enumerates it, its keys in order, in the oracle's contexts: as
/// swift-mustache has them, a dictionary's pairs come in the order of the process's hash seed, and sitegen
/// orders them so that pages do not change from build to build (a deliberate difference).
final class OrderedReferenceDictionary: MustacheParent, MustacheTransformable, CustomStringConvertible, CustomDebugStringConvertible {
    let values: [String: Any]
    /// Whether every value is a `String` (a `[String: String]`), whose pairs are typed so.
    let texts: Bool

    init(_ values: [String: Any], texts: Bool = false) {
        self.values = values
        self.texts = texts
    }

    func child(named name: String) -> Any? { values[name] }

    func transform(_ name: String) -> Any? {
        switch name {
        case "count": return values.count
        case "empty": return values.isEmpty
        case "enumerated", "sorted":
            if texts { return values.map { (key: $0.key, value: $0.value as! String) }.sorted { $0.key < $1.key } }
            return values.map { (key: $0.key, value: $0.value) }.sorted { $0.key < $1.key }
        default: return nil
        }
    }

    var description: String {
        values.isEmpty ? "[:]" : "[" + values.keys.sorted().map { "\($0.debugDescription): \(String(reflecting: values[$0]!))" }.joined(separator: ", ") + "]"
    }

    var debugDescription: String { description }
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
    var description: String { OrderedReferenceDictionary(values).description }
}
