import Foundation

/// FNV-1a, 64 bits: a fast, stable (across runs and machines) hash for change detection, not security.
public struct ContentHash: Sendable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Starts a hash of nothing.
    public init() {}

    /// Adds `text`, then a separator, to the hash.
    public mutating func combine(_ text: String) {
        var text = text
        text.withUTF8 { mix(UnsafeRawBufferPointer($0)) }
        // A separator byte no UTF-8 text contains, so ("ab", "c") and ("a", "bc") differ.
        value ^= 0xFF
        value &*= 0x0000_0100_0000_01B3
    }

    /// The hash as SQLite stores integers.
    public var signed: Int64 { Int64(bitPattern: value) }

    /// Adds raw bytes (a whole file), without a separator.
    public mutating func combine(bytes: Data) {
        // Over the contiguous buffer: iterating Data byte by byte through its generic iterator costs 10x.
        bytes.withUnsafeBytes { mix($0) }
    }

    private mutating func mix(_ buffer: UnsafeRawBufferPointer) {
        var hash = value
        for byte in buffer {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        value = hash
    }

    /// The hash of one text.
    public static func of(_ text: String) -> Int64 {
        var hash = ContentHash()
        hash.combine(text)
        return hash.signed
    }
}
