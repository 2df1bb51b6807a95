/// A 64-bit FNV-1a hash of what a page is made from, the same in every process (Swift's `Hasher` is
/// seeded per process, so its values cannot be stored and compared with the next build's).
struct Fingerprint {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The value as stored in SQLite.
    var signed: Int64 { Int64(bitPattern: value) }

    mutating func combine(_ number: Int64) {
        var bits = UInt64(bitPattern: number)
        for _ in 0..<8 {
            value = (value ^ (bits & 0xff)) &* 0x100_0000_01b3
            bits >>= 8
        }
    }

    mutating func combine(_ number: Int) { combine(Int64(number)) }

    mutating func combine(_ flag: Bool) { combine(flag ? 1 : 0) }

    /// Adds `text` and its length, so that ("ab", "c") and ("a", "bc") differ.
    mutating func combine(_ text: String) {
        var count: Int64 = 0
        for byte in text.utf8 {
            value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
            count += 1
        }
        combine(count)
    }

    /// Adds the text whose UTF-8 bytes are `bytes`, and its length, as `combine(_: String)` adds it.
    mutating func combine(bytes: UnsafeRawBufferPointer) {
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
        combine(Int64(bytes.count))
    }

    /// The fingerprint of `parts`, in order.
    static func of(_ parts: [String]) -> Int64 {
        var fingerprint = Fingerprint()
        for part in parts { fingerprint.combine(part) }
        return fingerprint.signed
    }
}
