import Foundation

/// A context value as the renderer sees it, its kind found once by comparing its concrete type (no
/// protocol casts), with what Mustache does with each kind: look names up in it, iterate it, transform
/// it, print it. Kinds, lookups and transforms are those swift-mustache 2.1.1 gives the same values.
enum TemplateValue {
    case string(String)
    case text(TemplateText)
    case integer(Int)
    case boolean(Bool)
    case dictionary([String: Any])
    /// A record's fields: looked up by name, a dictionary for everything else (`TemplateRecord`).
    case record(TemplateRecord)
    /// A dictionary of texts (`["name": …, "title": …]` literals are inferred as such).
    case textDictionary([String: String])
    /// The page's own context in a strict render: a name it lacks is recorded (`TemplateRenderer`).
    case root([String: Any])
    case list(TemplateList)
    /// An element of a dictionary's `enumerated` or `sorted` transform.
    case pair(Pair)
    /// Anything else: printed as Swift describes it, its stored properties looked up by name.
    case other(Other)

    /// A key and its value, as `(key:value:)` tuples print and are looked into.
    final class Pair {
        let key: String
        let value: Any

        init(key: String, value: Any) {
            self.key = key
            self.value = value
        }
    }

    /// A value of another type (boxed: the common kinds stay small to copy).
    final class Other {
        let value: Any

        init(_ value: Any) { self.value = value }
    }

    /// Classifies a value of a context.
    init(_ value: Any) {
        self = Self.classify(value)
    }

    /// `value`'s kind, from its concrete type: passing an `Any` here opens it, so `T` is the value's own
    /// type and each common kind costs one comparison of type identities, where a cast from `Any` goes
    /// through the runtime's dynamic cast (and a failing cast to an array type would convert every element).
    private static func classify<T>(_ value: T) -> TemplateValue {
        if T.self == TemplateText.self { return .text(unsafeBitCast(value, to: TemplateText.self)) }
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == [String: Any].self { return .dictionary(unsafeBitCast(value, to: [String: Any].self)) }
        if T.self == TemplateRecord.self { return .record(unsafeBitCast(value, to: TemplateRecord.self)) }
        if T.self == [TemplateRecord].self { return .list(TemplateList(.records(unsafeBitCast(value, to: [TemplateRecord].self)))) }
        if T.self == [[String: Any]].self { return .list(TemplateList(.dictionaries(unsafeBitCast(value, to: [[String: Any]].self)))) }
        if T.self == [String: String].self { return .textDictionary(unsafeBitCast(value, to: [String: String].self)) }
        if T.self == Int.self { return .integer(unsafeBitCast(value, to: Int.self)) }
        if T.self == Bool.self { return .boolean(unsafeBitCast(value, to: Bool.self)) }
        if T.self == [TemplateText].self { return .list(TemplateList(.texts(unsafeBitCast(value, to: [TemplateText].self)))) }
        if T.self == [Any].self { return .list(TemplateList(.values(unsafeBitCast(value, to: [Any].self)))) }
        if T.self == [String].self { return .list(TemplateList(.strings(unsafeBitCast(value, to: [String].self)))) }
        if T.self == [Int].self { return .list(TemplateList(.integers(unsafeBitCast(value, to: [Int].self)))) }
        if T.self == Substring.self { return .string(String(unsafeBitCast(value, to: Substring.self))) }
        // An `Any` boxed in an `Any` (generic code can make one): the value inside.
        if T.self == Any.self { return classify(unsafeBitCast(value, to: Any.self)) }
        // Other dictionaries with text keys and other arrays, as swift-mustache takes them: by converting.
        if let dictionary = value as? [String: Any] { return .dictionary(dictionary) }
        if let array = value as? [Any] { return .list(TemplateList(.values(array))) }
        return .other(Other(value))
    }

    /// No value, where a name is found empty: a lookup stops at it and gives nothing. (Shared between
    /// threads safely: `Other` holds one constant.)
    nonisolated(unsafe) static let null = TemplateValue.other(Other(NSNull()))

    /// Whether this stands for no value at all (`NSNull`), as swift-mustache takes it.
    var isNull: Bool {
        if case .other(let other) = self { return other.value is NSNull }
        return false
    }

    /// The value named `name` in this one, for a dotted name's later parts; `.root` is the renderer's.
    func child(named name: String) -> TemplateValue? {
        switch self {
        case .dictionary(let values), .root(let values):
            return values[name].map(TemplateValue.init)
        case .record(let record):
            return record[name].map(TemplateValue.init)
        case .textDictionary(let values):
            return values[name].map(TemplateValue.string)
        case .pair(let pair):
            switch name {
            case "key": return .string(pair.key)
            case "value": return TemplateValue(pair.value)
            default: return nil
            }
        case .other(let other):
            return Self.storedProperty(of: other.value, named: name).map(TemplateValue.init)
        case .string, .text, .integer, .boolean, .list:
            return nil
        }
    }

    /// What the transform `name` makes of this value; `nil` when it has no such transform.
    ///
    /// sitegen's helpers (`TemplateText.helperNames`) apply to a value of any kind, not only to a record's
    /// text, so that `{{{json(count)}}}`, `{{xml(site.title)}}` and `{{absolute(url)}}` do not print nothing
    /// for a page's own values, numbers, booleans or lists. `site` is the site for values that do not carry
    /// theirs (a record's text does).
    func transformed(_ name: String, site: TemplateText.Site? = nil) -> TemplateValue? {
        if TemplateText.helperNames.contains(name) { return helped(name, site: site) }
        switch self {
        case .string(let string): return Self.transformed(string, name)
        case .text(let text): return Self.transformed(text.text, name)
        case .integer(let number): return Self.transformed(number, name)
        case .list(let list): return list.transformed(name)
        case .dictionary(let values):
            return Self.transformed(values, name)
        case .record(let record):
            if name == "enumerated" {
                // A record's fields in their declared order.
                let pairs = zip(record.names, record.values).compactMap { name, value in value.map { (key: name, value: TemplateRecord.plain($0)) } }
                return .list(TemplateList(.pairs(pairs)))
            }
            return Self.transformed(record.dictionary, name)
        case .textDictionary(let values):
            switch name {
            case "count": return .integer(values.count)
            case "empty": return .boolean(values.isEmpty)
            case "enumerated", "sorted":
                return .list(TemplateList(.textPairs(values.map { (key: $0.key, value: $0.value) }.sorted { $0.key < $1.key })))
            default: return nil
            }
        case .boolean, .root, .pair, .other:
            return nil
        }
    }

    /// sitegen's helper `name` applied to this value: `json` to a value of any kind, the others to the text
    /// that a text, number or boolean prints as; `nil` for a list or a dictionary, which print no text of their own.
    private func helped(_ name: String, site: TemplateText.Site?) -> TemplateValue? {
        if name == "json" { return .string(json) }
        switch self {
        case .text(let text): return TemplateText.helper(name, text.text, site: text.site).map(TemplateValue.string)
        case .string, .integer, .boolean: return TemplateText.helper(name, description, site: site).map(TemplateValue.string)
        case .other(let other) where other.value is Double || other.value is Float:
            return TemplateText.helper(name, description, site: site).map(TemplateValue.string)
        default: return nil
        }
    }

    /// The value as JSON that can stand inside an HTML `<script>` element: text as a string
    /// (`TemplateText.scriptSafeJSONString`), numbers and booleans bare, a list as an array, a dictionary
    /// or record as an object with its keys sorted (so that pages do not change from build to build), and
    /// anything else as the string it prints as.
    var json: String {
        func object(_ members: [(key: String, value: TemplateValue)]) -> String {
            let sorted = members.sorted { $0.key < $1.key }
            return "{" + sorted.map { TemplateText.scriptSafeJSONString($0.key) + ":" + $0.value.json }.joined(separator: ",") + "}"
        }
        switch self {
        case .string(let string): return TemplateText.scriptSafeJSONString(string)
        case .text(let text): return TemplateText.scriptSafeJSONString(text.text)
        case .integer(let number): return String(number)
        case .boolean(let flag): return flag ? "true" : "false"
        case .list(let list): return "[" + (0..<list.count).map { list[$0].json }.joined(separator: ",") + "]"
        case .dictionary(let values), .root(let values): return object(values.map { ($0.key, TemplateValue($0.value)) })
        case .record(let record): return object(record.dictionary.map { ($0.key, TemplateValue($0.value)) })
        case .textDictionary(let values): return object(values.map { ($0.key, .string($0.value)) })
        case .pair(let pair): return object([("key", .string(pair.key)), ("value", TemplateValue(pair.value))])
        case .other(let other):
            if other.value is NSNull { return "null" }
            // JSON has no infinities or NaN.
            if let number = other.value as? Double { return number.isFinite ? String(number) : "null" }
            return TemplateText.scriptSafeJSONString(description)
        }
    }

    /// The transforms of dictionaries: `count`, `empty`, and their `(key:value:)` pairs by key (`enumerated`
    /// and `sorted`: swift-mustache enumerates in the order of the hash seed, which changes every build).
    private static func transformed(_ values: [String: Any], _ name: String) -> TemplateValue? {
        switch name {
        case "count": return .integer(values.count)
        case "empty": return .boolean(values.isEmpty)
        case "enumerated", "sorted":
            return .list(TemplateList(.pairs(values.map { (key: $0.key, value: $0.value) }.sorted { $0.key < $1.key })))
        default: return nil
        }
    }

    /// The transforms of text: `empty`, `capitalized`, `lowercased`, `uppercased`, `reversed`.
    static func transformed(_ string: String, _ name: String) -> TemplateValue? {
        switch name {
        case "empty": return .boolean(string.isEmpty)
        case "capitalized": return .string(string.capitalized)
        case "lowercased": return .string(string.lowercased())
        case "uppercased": return .string(string.uppercased())
        case "reversed": return .string(String(string.reversed()))
        default: return nil
        }
    }

    /// The transforms of integers: `equalzero`, `plusone`, `minusone`, `even`, `odd`.
    static func transformed(_ number: Int, _ name: String) -> TemplateValue? {
        switch name {
        case "equalzero": return .boolean(number == 0)
        case "plusone": return .integer(number &+ 1)
        case "minusone": return .integer(number &- 1)
        case "even": return .boolean(number & 1 == 0)
        case "odd": return .boolean(number & 1 == 1)
        default: return nil
        }
    }

    /// The text `{{name}}` prints for values other than text, numbers and booleans.
    var description: String {
        switch self {
        case .string(let string): return string
        case .text(let text): return text.text
        case .integer(let number): return String(number)
        case .boolean(let flag): return flag ? "true" : "false"
        case .dictionary(let values), .root(let values): return Self.describe(values)
        case .record(let record): return record.description
        case .textDictionary(let values): return Self.describe(values)
        case .list(let list): return list.description
        case .pair(let pair): return "(key: \(String(reflecting: pair.key)), value: \(Self.describe(pair.value, nested: true)))"
        case .other(let other):
            let mirror = Mirror(reflecting: other.value)
            if mirror.displayStyle == .optional, let wrapped = mirror.children.first?.value { return String(describing: wrapped) }
            return String(describing: other.value)
        }
    }

    /// Swift's description of `value` (strings quoted inside a collection), with every dictionary's keys in
    /// order: as Swift prints it, a dictionary's order follows the process's hash seed, and a page's bytes
    /// must not change from build to build (swift-mustache prints them so).
    static func describe(_ value: Any, nested: Bool = false) -> String {
        switch value {
        case let record as TemplateRecord:
            return describe(record.dictionary, nested: nested)
        case let dictionary as [String: Any]:
            guard !dictionary.isEmpty else { return "[:]" }
            let members = dictionary.sorted { $0.key < $1.key }.map { String(reflecting: $0.key) + ": " + describe($0.value, nested: true) }
            return "[" + members.joined(separator: ", ") + "]"
        case let array as [Any]:
            return "[" + array.map { describe($0, nested: true) }.joined(separator: ", ") + "]"
        default:
            return nested ? String(reflecting: value) : String(describing: value)
        }
    }

    /// A stored property of any other value, by name, an optional one unwrapped.
    private static func storedProperty(of value: Any, named name: String) -> Any? {
        guard let child = Mirror(reflecting: value).children.first(where: { $0.label == name }) else { return nil }
        let mirror = Mirror(reflecting: child.value)
        guard mirror.displayStyle == .optional else { return child.value }
        return mirror.children.first?.value
    }
}

/// A list of a context (or a transform's result), iterated without converting its elements up front.
struct TemplateList {
    /// The elements, in the array type they came in.
    enum Elements {
        case values([Any])
        case dictionaries([[String: Any]])
        case records([TemplateRecord])
        case texts([TemplateText])
        case strings([String])
        case integers([Int])
        case pairs([(key: String, value: Any)])
        case textPairs([(key: String, value: String)])
    }

    let elements: Elements
    /// Whether it is iterated from the end (the `reversed` transform).
    let isReversed: Bool
    let count: Int

    init(_ elements: Elements, reversed: Bool = false) {
        self.elements = elements
        isReversed = reversed
        switch elements {
        case .values(let array): count = array.count
        case .dictionaries(let array): count = array.count
        case .records(let array): count = array.count
        case .texts(let array): count = array.count
        case .strings(let array): count = array.count
        case .integers(let array): count = array.count
        case .pairs(let array): count = array.count
        case .textPairs(let array): count = array.count
        }
    }

    /// The element at `position` in iteration order.
    subscript(position: Int) -> TemplateValue {
        let index = isReversed ? count - 1 - position : position
        switch elements {
        case .values(let array): return TemplateValue(array[index])
        case .dictionaries(let array): return .dictionary(array[index])
        case .records(let array): return .record(array[index])
        case .texts(let array): return .text(array[index])
        case .strings(let array): return .string(array[index])
        case .integers(let array): return .integer(array[index])
        case .pairs(let array): return .pair(TemplateValue.Pair(key: array[index].key, value: array[index].value))
        case .textPairs(let array): return .pair(TemplateValue.Pair(key: array[index].key, value: array[index].value))
        }
    }

    /// `first`, `last`, `reversed`, `count`, `empty`, and `sorted` for lists of texts or integers.
    func transformed(_ name: String) -> TemplateValue? {
        switch name {
        case "first": return count > 0 ? self[0] : nil
        case "last": return count > 0 ? self[count - 1] : nil
        case "reversed": return .list(TemplateList(elements, reversed: !isReversed))
        case "count": return .integer(count)
        case "empty": return .boolean(count == 0)
        case "sorted":
            switch elements {
            case .strings(let array): return .list(TemplateList(.strings(array.sorted())))
            case .integers(let array): return .list(TemplateList(.integers(array.sorted())))
            // A record's list field (its tags).
            case .texts(let array): return .list(TemplateList(.texts(array.sorted { $0.text < $1.text })))
            default: return nil
            }
        default: return nil
        }
    }

    /// What `{{list}}` prints: Swift's description of the array, or of its reversed view; dictionaries in
    /// it with their keys in order (`TemplateValue.describe`).
    var description: String {
        switch elements {
        case .values(let array): return Self.described(array, isReversed, TemplateValue.describe(array))
        case .dictionaries(let array): return Self.described(array, isReversed, TemplateValue.describe(array))
        // As dictionaries, not records: a reversed view prints its element type's name.
        case .records(let array):
            let dictionaries = array.map(\.dictionary)
            return Self.described(dictionaries, isReversed, TemplateValue.describe(dictionaries))
        case .texts(let array): return isReversed ? String(describing: array.reversed()) : String(describing: array)
        case .strings(let array): return isReversed ? String(describing: array.reversed()) : String(describing: array)
        case .integers(let array): return isReversed ? String(describing: array.reversed()) : String(describing: array)
        case .pairs(let array):
            let pairs = array.map { TemplateValue.pair(TemplateValue.Pair(key: $0.key, value: $0.value)).description }
            return Self.described(array, isReversed, "[" + pairs.joined(separator: ", ") + "]")
        case .textPairs(let array): return isReversed ? String(describing: array.reversed()) : String(describing: array)
        }
    }

    /// `array` printed as `described`, or as Swift prints its reversed view (the view's type around it).
    private static func described<Element>(_ array: [Element], _ reversed: Bool, _ described: String) -> String {
        reversed ? "\(type(of: array.reversed()))(_base: \(described))" : described
    }
}
