/// FNV-1a, 64 bits: a fast, stable (across runs and machines) hash for change detection, not security.
struct ContentHash {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func combine(_ text: String) {
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01B3
        }
        // A separator byte no UTF-8 text contains, so ("ab", "c") and ("a", "bc") differ.
        value ^= 0xFF
        value &*= 0x0000_0100_0000_01B3
    }

    /// The hash as SQLite stores integers.
    var signed: Int64 { Int64(bitPattern: value) }

    static func of(_ text: String) -> Int64 {
        var hash = ContentHash()
        hash.combine(text)
        return hash.signed
    }
}
