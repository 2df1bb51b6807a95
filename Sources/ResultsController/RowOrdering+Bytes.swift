import Foundation

extension RowOrdering {
    /// How many bytes of a text or blob the order bytes keep; longer values are cut, and the key ends there.
    static let keptValueBytes = 64

    /// `key` as bytes whose `memcmp` order never contradicts this ordering: a key that sorts before another
    /// never has greater bytes. Equal bytes say nothing, so the bytes may be short: values are cut
    /// (`keptValueBytes`), and a key ends after a value its bytes could not tell from its neighbours.
    ///
    /// For a table that keeps something per row clustered in the rows' order (a listing's item pieces), so
    /// that a page's run of rows is one range of its tree, whatever the collation and direction.
    func orderBytes(of key: SortKey) -> [UInt8] {
        var bytes: [UInt8] = []
        key.withUnsafeBytes { encoded in
            // Room for the usual key at once: its values' bytes with their class bytes and ends (one
            // allocation per row, not three, for a date and an id).
            bytes.reserveCapacity(encoded.count + 4 * descriptors.count + 8)
            var values = SortKey.Cursor(encoded)
            var index = 0
            while index < descriptors.count, !values.isAtEnd {
                let value = values.next()
                if case .null = value {
                    // NULLs go first or last whatever the direction, so their byte is never inverted.
                    bytes.append(descriptors[index].nulls == .first ? 0x00 : 0xFF)
                } else {
                    let start = bytes.count
                    let exact = Self.appendOrderBytes(of: value, collation: collations[index], to: &bytes)
                    if !descriptors[index].ascending {
                        for position in start..<bytes.count { bytes[position] = ~bytes[position] }
                    }
                    // The bytes of the later values would order rows this value's bytes could not tell apart.
                    if !exact { return }
                }
                index += 1
            }
        }
        return bytes
    }

    /// Appends a non-NULL value's ascending bytes: a class byte (numbers, then text, then blobs), then
    /// the value. False when the bytes stand for more than one value (a cut text, a number a double cannot
    /// tell from its neighbours), after which nothing may follow.
    private static func appendOrderBytes(of value: SortKey.EncodedValue, collation: Collation, to bytes: inout [UInt8]) -> Bool {
        switch value {
        case .null:
            return true
        case .integer(let number):
            return appendNumber(Double(number), to: &bytes)
        case .real(let number):
            return appendNumber(number, to: &bytes)
        case .text(let text):
            bytes.append(0x20)
            switch collation {
            case .binary:
                return appendEscaped(text, to: &bytes)
            case .rightTrim:
                return appendEscaped(trimmingTrailingSpaces(text), to: &bytes)
            case .noCase:
                // NOCASE compares up to a NUL only; what follows one only makes the text longer.
                let end = text.firstIndex(of: 0) ?? text.count
                let folded = text[..<end].map(foldASCII)
                let exact = folded.withUnsafeBytes { appendEscaped($0, to: &bytes) }
                guard exact, end < text.count else { return exact }
                bytes.removeLast(2)
                bytes += [0x00, 0x02]
                return false
            }
        case .blob(let blob):
            bytes.append(0x30)
            return appendEscaped(blob, to: &bytes)
        }
    }

    /// A number's class byte and 8 bytes in numeric order (integers and reals compared as numbers); not
    /// exact from 2^53 on, where a double stands for several integers.
    private static func appendNumber(_ number: Double, to bytes: inout [UInt8]) -> Bool {
        bytes.append(0x10)
        let bits = (number == 0 ? 0.0 : number).bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: ordered >> UInt64(shift))) }
        return abs(number) < 9_007_199_254_740_992.0
    }

    /// Text or blob bytes with each NUL as 00 FF, ended by 00 01, so a shorter value sorts first; cut after
    /// `keptValueBytes` and ended by 00 02 instead (after every value that begins with the kept bytes
    /// and ends there), returning false.
    private static func appendEscaped(_ value: UnsafeRawBufferPointer, to bytes: inout [UInt8]) -> Bool {
        let kept = UnsafeRawBufferPointer(rebasing: value.prefix(keptValueBytes))
        if !kept.contains(0) {
            bytes.append(contentsOf: kept)
        } else {
            for byte in kept {
                bytes.append(byte)
                if byte == 0 { bytes.append(0xFF) }
            }
        }
        let cut = value.count > keptValueBytes
        bytes.append(0x00)
        bytes.append(cut ? 0x02 : 0x01)
        return !cut
    }
}
