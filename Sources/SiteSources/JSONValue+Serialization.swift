import Foundation

extension JSONValue {
    /// The value as JSON text: keys in their order, two-space indentation when `pretty`, non-ASCII kept as is.
    public func serialized(pretty: Bool = true) -> String {
        serialized(pretty: pretty, indent: 0)
    }

    /// The value as JSON as it stands `indent` levels deep in a pretty document (an element of an array
    /// printed one element at a time).
    public func serialized(pretty: Bool = true, indent: Int) -> String {
        var output = ""
        write(to: &output, pretty: pretty, indent: indent)
        return output
    }

    private func write(to output: inout String, pretty: Bool, indent: Int) {
        let newline = pretty ? "\n" : ""
        let pad = pretty ? String(repeating: "  ", count: indent + 1) : ""
        let closingPad = pretty ? String(repeating: "  ", count: indent) : ""
        switch self {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let number, let integer):
            if let integer { output += String(integer) } else if number.isFinite { output += String(number) } else { output += "null" }
        case .string(let text): Self.writeString(text, to: &output)
        case .array(let items):
            guard !items.isEmpty else { output += "[]"; return }
            output += "[" + newline
            for (index, item) in items.enumerated() {
                output += pad
                item.write(to: &output, pretty: pretty, indent: indent + 1)
                output += (index < items.count - 1 ? "," : "") + newline
            }
            output += closingPad + "]"
        case .object(let members):
            guard !members.isEmpty else { output += "{}"; return }
            output += "{" + newline
            for (index, member) in members.enumerated() {
                output += pad
                Self.writeString(member.key, to: &output)
                output += pretty ? ": " : ":"
                member.value.write(to: &output, pretty: pretty, indent: indent + 1)
                output += (index < members.count - 1 ? "," : "") + newline
            }
            output += closingPad + "}"
        }
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20: output += String(format: "\\u%04x", scalar.value)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }

    /// `text` as a JSON string, or null.
    public static func text(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    /// An integer as a JSON number.
    public static func integer(_ value: Int) -> JSONValue { .number(Double(value), integer: Int64(value)) }
}
