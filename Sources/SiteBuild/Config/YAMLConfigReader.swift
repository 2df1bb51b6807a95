import Yams

/// Reads typed values out of a YAML node tree, turning every mismatch into a `ConfigError` at the node's line.
struct YAMLConfigReader {
    let file: String

    func error(_ node: Node?, _ reason: String) -> ConfigError {
        ConfigError(file: file, line: node?.mark?.line, column: node?.mark?.column, reason: reason)
    }

    /// Where `node` was written, for errors found after reading.
    func mark(_ node: Node) -> ConfigMark {
        ConfigMark(line: node.mark?.line, column: node.mark?.column)
    }

    /// A declaration's fingerprint: its YAML as Yams writes it back, so that comments, spacing and the
    /// line it starts on do not count, but every value and key does.
    static func fingerprint(of node: Node) -> Int64 {
        Fingerprint.of([(try? Yams.serialize(node: node)) ?? "\(node)"])
    }

    /// The entries of a mapping, in file order; rejects keys not in `allowed`.
    func mapping(_ node: Node, _ what: String, allowed: Set<String>? = nil) throws(ConfigError) -> [(key: String, keyNode: Node, value: Node)] {
        guard case .mapping(let mapping) = node else {
            throw error(node, "\(what) must be a mapping of names to values")
        }
        var entries: [(String, Node, Node)] = []
        var seen = Set<String>()
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else { throw error(keyNode, "a key in \(what) must be plain text") }
            guard seen.insert(key).inserted else { throw error(keyNode, "'\(key)' appears twice in \(what)") }
            if let allowed, !allowed.contains(key) {
                throw error(keyNode, "unknown key '\(key)' in \(what); expected one of: \(allowed.sorted().joined(separator: ", "))")
            }
            entries.append((key, keyNode, value))
        }
        return entries
    }

    func string(_ node: Node, _ what: String) throws(ConfigError) -> String {
        guard case .scalar(let scalar) = node else { throw error(node, "\(what) must be text") }
        return scalar.string
    }

    func integer(_ node: Node, _ what: String, minimum: Int) throws(ConfigError) -> Int {
        guard case .scalar(let scalar) = node, let value = Int(scalar.string) else {
            throw error(node, "\(what) must be a whole number")
        }
        guard value >= minimum else { throw error(node, "\(what) must be at least \(minimum), found \(value)") }
        return value
    }

    func bool(_ node: Node, _ what: String) throws(ConfigError) -> Bool {
        guard case .scalar(let scalar) = node, let value = Bool.construct(from: scalar) else {
            throw error(node, "\(what) must be true or false")
        }
        return value
    }

    /// A list of texts; a single text is read as a one-item list.
    func strings(_ node: Node, _ what: String) throws(ConfigError) -> [String] {
        switch node {
        case .scalar(let scalar): return [scalar.string]
        case .sequence(let sequence):
            var values: [String] = []
            for item in sequence { values.append(try string(item, "each item of \(what)")) }
            return values
        default: throw error(node, "\(what) must be text or a list of texts")
        }
    }

    /// A name usable as an SQL table or column: letters, digits and `_`, not starting with a digit or `_`.
    func identifier(_ name: String, _ node: Node, _ what: String) throws(ConfigError) -> String {
        let valid = !name.isEmpty && name.first!.isLetter && name.allSatisfy { ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }
        guard valid, !name.lowercased().hasPrefix("sitegen"), name.lowercased() != "rowid" else {
            throw error(node, "\(what) '\(name)' must start with a letter and hold only ASCII letters, digits and _")
        }
        return name
    }
}
