// libyaml, as Yams builds it: its events are the only place an alias is seen before it is expanded.
import CYaml

/// Bounds what YAML aliases repeat in `sitegen.yml`, so that an alias bomb (nine levels of nine aliases:
/// 387 million values from a dozen lines) is an error at its line, not gigabytes of memory.
///
/// Yams shares an anchored value with its aliases, but every walk of the tree after it (`params` for
/// templates, the fingerprints that serialize a declaration, Yams's own check for a duplicate key, which
/// hashes an alias used as a key) copies each alias out. Front matter never meets this, since its values
/// are text or lists of text (a list of lists is refused there), but `params:` may nest. So the file's
/// events are read first, each anchor's expanded size kept, and each alias adds its anchor's: linear in
/// the file however large the expansion (docs/decisions.md, 42).
struct AliasExpansionLimit {
    /// The values aliases may add to the file (a real configuration's aliases add tens).
    static let maximumValues = 100_000
    /// The bytes of text aliases may add.
    static let maximumBytes = 16 << 20

    /// The values and bytes of text of a node, its aliases expanded.
    private struct Size {
        var values = 0
        var bytes = 0

        mutating func add(_ other: Size) {
            // Saturating: an anchor nested nine deep in nine aliases each is 9^9 values, and thirty deep overflows.
            values = min(values &+ other.values, Int.max / 2)
            bytes = min(bytes &+ other.bytes, Int.max / 2)
        }
    }

    /// Throws a `ConfigError` at the first alias that takes the values aliases add past the limit. YAML
    /// that libyaml cannot parse passes: Yams then reports it, at its line.
    static func check(_ text: String, file: String) throws(ConfigError) {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return }
        defer { yaml_parser_delete(&parser) }
        var bytes = Array(text.utf8)
        try bytes.withUnsafeMutableBufferPointer { (buffer) throws(ConfigError) in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var anchors: [String: Size] = [:]
            // The collections open around the event being read, with their anchors.
            var open: [(anchor: String?, size: Size)] = [(nil, Size())]
            var added = Size()
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return }
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_STREAM_END_EVENT:
                    return
                case YAML_SCALAR_EVENT:
                    let size = Size(values: 1, bytes: event.data.scalar.length)
                    if let anchor = name(event.data.scalar.anchor) { anchors[anchor] = size }
                    open[open.count - 1].size.add(size)
                case YAML_SEQUENCE_START_EVENT:
                    open.append((name(event.data.sequence_start.anchor), Size(values: 1)))
                case YAML_MAPPING_START_EVENT:
                    open.append((name(event.data.mapping_start.anchor), Size(values: 1)))
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    guard open.count > 1 else { return }
                    let closed = open.removeLast()
                    if let anchor = closed.anchor { anchors[anchor] = closed.size }
                    open[open.count - 1].size.add(closed.size)
                case YAML_ALIAS_EVENT:
                    // An alias of an anchor not (yet) defined is Yams's error to report.
                    guard let anchor = name(event.data.alias.anchor), let size = anchors[anchor] else { continue }
                    added.add(size)
                    open[open.count - 1].size.add(size)
                    if added.values > maximumValues || added.bytes > maximumBytes {
                        let what = added.values > maximumValues ? "\(maximumValues) values" : "\(maximumBytes >> 20) MiB of text"
                        // libyaml counts lines and columns from 0.
                        throw ConfigError(file: file, line: event.start_mark.line + 1, column: event.start_mark.column + 1,
                                          reason: "the alias *\(anchor) takes what aliases repeat past \(what) (an alias bomb?); "
                                          + "write the values out, or alias fewer of them")
                    }
                default:
                    continue
                }
            }
        }
    }

    private static func name(_ anchor: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        anchor.map { String(cString: $0) }
    }
}
