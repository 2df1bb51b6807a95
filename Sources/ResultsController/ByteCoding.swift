/// The pieces sort keys and cached snapshots are written in: LEB128 varints, zigzag for signed integers,
/// and 8-byte little-endian words. Readers check every length against the bytes: past the end, `nil`.
enum ByteCoding {
    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    static func appendWord(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A signed integer as an unsigned one whose varint is short when the integer is near zero.
    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// The varint at `position`, which moves past it; `nil` when it runs past the bytes or ten bytes.
    static func readVarint(_ bytes: UnsafeRawBufferPointer, at position: inout Int) -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 70, by: 7) {
            guard position < bytes.count else { return nil }
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
        }
        return nil
    }

    /// The 8-byte word at `position`, which moves past it; `nil` when fewer than 8 bytes are left.
    static func readWord(_ bytes: UnsafeRawBufferPointer, at position: inout Int) -> UInt64? {
        guard position >= 0, bytes.count - position >= 8 else { return nil }
        var word: UInt64 = 0
        withUnsafeMutableBytes(of: &word) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + 8)])) }
        position += 8
        return UInt64(littleEndian: word)
    }
}

extension ByteCoding {
    /// FNV-1a, 64-bit: enough to tell damaged cache bytes (a disk's error, a hand's edit) from good ones.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// Appends the checksum of everything before it, as an 8-byte word.
    static func appendChecksum(to bytes: inout [UInt8]) {
        let sum = bytes.withUnsafeBytes { checksum($0) }
        appendWord(sum, to: &bytes)
    }

    /// The bytes before a trailing checksum word, when the checksum matches them; `nil` otherwise.
    static func verifiedBody(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard bytes.count >= 8 else { return nil }
        var position = bytes.count - 8
        let body = UnsafeRawBufferPointer(rebasing: bytes[..<position])
        guard let stored = readWord(bytes, at: &position), stored == checksum(body) else { return nil }
        return body
    }
}
