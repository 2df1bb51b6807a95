import Foundation
import SiteStore

/// The values a row sorts by, in the order of the request's sort descriptors, encoded in a few bytes.
///
/// A controller holds a key for every row it lists, and a build restores hundreds of thousands of them
/// from cached snapshots. Held as `[DatabaseValue]`, each key was an array and a string per text value:
/// three allocations a row to restore and three to free. Encoded, a key fetched from SQLite is one
/// allocation, and a key restored from a snapshot is a range of the snapshot's own bytes: none at all.
/// Keys are compared in place (`RowOrdering`) and decoded only where a value is wanted (a section name).
///
/// Encoding, per value: a tag byte, then for an integer its zigzag varint, for a real its 8 bytes
/// (little-endian bit pattern), for text and blobs a varint length and the bytes; NULL is the tag alone.
public struct SortKey: Sendable {
    /// The bytes the key is a range of: its own, or a whole snapshot's.
    private let storage: [UInt8]
    private let start: UInt32
    private let end: UInt32

    enum Tag: UInt8 {
        case null = 0, integer, real, text, blob
    }

    /// Makes a key of `values`.
    public init(_ values: [DatabaseValue]) {
        var encoder = SortKey.Encoder()
        for value in values { encoder.append(value) }
        self = encoder.key()
    }

    /// A key that is `bytes[range]`, which must hold encoded values (`SortKey.validLength` checks them).
    init(sharing bytes: [UInt8], range: Range<Int>) {
        precondition(range.upperBound <= Int(UInt32.max), "a snapshot of over 4 GiB is read key by key")
        storage = bytes
        start = UInt32(range.lowerBound)
        end = UInt32(range.upperBound)
    }

    /// The values, decoded (O(key); for callers that want them all).
    public var values: [DatabaseValue] {
        withUnsafeBytes { bytes in
            var cursor = Cursor(bytes)
            var values: [DatabaseValue] = []
            while !cursor.isAtEnd { values.append(cursor.next().databaseValue) }
            return values
        }
    }

    /// The value at `index` (which must exist), decoded.
    func value(at index: Int) -> DatabaseValue {
        withUnsafeBytes { bytes in
            var cursor = Cursor(bytes)
            for _ in 0..<index { cursor.skip() }
            return cursor.next().databaseValue
        }
    }

    /// Whether the value at `index` is the same in both keys (same storage class and bytes).
    func hasSameValue(at index: Int, as other: SortKey) -> Bool {
        withUnsafeBytes { lhs in
            other.withUnsafeBytes { rhs in
                var left = Cursor(lhs), right = Cursor(rhs)
                for _ in 0..<index {
                    left.skip()
                    right.skip()
                }
                let leftStart = left.position, rightStart = right.position
                left.skip()
                right.skip()
                return Self.equalBytes(UnsafeRawBufferPointer(rebasing: lhs[leftStart..<left.position]),
                                       UnsafeRawBufferPointer(rebasing: rhs[rightStart..<right.position]))
            }
        }
    }

    /// The key of the first `count` values (sharing this key's bytes).
    func prefix(_ count: Int) -> SortKey {
        let length = withUnsafeBytes { bytes in
            var cursor = Cursor(bytes)
            for _ in 0..<count where !cursor.isAtEnd { cursor.skip() }
            return cursor.position
        }
        return SortKey(sharing: storage, range: Int(start)..<(Int(start) + length))
    }

    /// The encoded bytes, for a snapshot.
    func withUnsafeBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[Int(start)..<Int(end)])) }
    }

    /// The length of the encoded key at the start of `bytes` holding `count` values, or `nil` when
    /// `bytes` does not begin with that many well-formed values (a damaged snapshot).
    static func validLength(of bytes: UnsafeRawBufferPointer, count: Int) -> Int? {
        var position = 0
        for _ in 0..<count {
            guard position < bytes.count, let tag = Tag(rawValue: bytes[position]) else { return nil }
            position += 1
            switch tag {
            case .null: break
            case .integer:
                guard ByteCoding.readVarint(bytes, at: &position) != nil else { return nil }
            case .real:
                guard ByteCoding.readWord(bytes, at: &position) != nil else { return nil }
            case .text, .blob:
                guard let length = ByteCoding.readVarint(bytes, at: &position), length <= UInt64(bytes.count - position) else { return nil }
                position += Int(length)
            }
        }
        return position
    }

    static func equalBytes(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard let left = lhs.baseAddress, let right = rhs.baseAddress, lhs.count > 0 else { return true }
        return memcmp(left, right, lhs.count) == 0
    }
}

extension SortKey: Hashable {
    public static func == (lhs: SortKey, rhs: SortKey) -> Bool {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in equalBytes(left, right) } }
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

extension SortKey {
    /// Builds a key value by value.
    struct Encoder {
        private var bytes: [UInt8] = []

        init() {
            bytes.reserveCapacity(32)
        }

        mutating func append(_ value: DatabaseValue) {
            switch value {
            case .null: bytes.append(Tag.null.rawValue)
            case .integer(let number): appendInteger(number)
            case .real(let number): appendReal(number)
            case .text(let text):
                var text = text
                text.withUTF8 { appendBytes(UnsafeRawBufferPointer($0), tag: .text) }
            case .blob(let blob): blob.withUnsafeBytes { appendBytes($0, tag: .blob) }
            }
        }

        /// Appends column `index` of the statement's current row as it is stored, without making a
        /// `DatabaseValue` (a string) of it.
        mutating func append(columnAt index: Int, of statement: Statement) {
            switch statement.storageClass(at: index) {
            case .null: bytes.append(Tag.null.rawValue)
            case .integer: appendInteger(statement.int64(at: index))
            case .real: appendReal(statement.double(at: index))
            case .text: statement.withText(at: index) { appendBytes($0, tag: .text) }
            case .blob: statement.withBlob(at: index) { appendBytes($0, tag: .blob) }
            }
        }

        private mutating func appendInteger(_ number: Int64) {
            bytes.append(Tag.integer.rawValue)
            ByteCoding.appendVarint(ByteCoding.zigzag(number), to: &bytes)
        }

        private mutating func appendReal(_ number: Double) {
            bytes.append(Tag.real.rawValue)
            ByteCoding.appendWord(number.bitPattern, to: &bytes)
        }

        private mutating func appendBytes(_ payload: UnsafeRawBufferPointer, tag: Tag) {
            bytes.append(tag.rawValue)
            ByteCoding.appendVarint(UInt64(payload.count), to: &bytes)
            bytes.append(contentsOf: payload)
        }

        func key() -> SortKey {
            SortKey(sharing: bytes, range: 0..<bytes.count)
        }
    }

    /// One value read in place: text and blobs point into the key's bytes.
    enum EncodedValue {
        case null
        case integer(Int64)
        case real(Double)
        case text(UnsafeRawBufferPointer)
        case blob(UnsafeRawBufferPointer)

        var databaseValue: DatabaseValue {
            switch self {
            case .null: return .null
            case .integer(let number): return .integer(number)
            case .real(let number): return .real(number)
            case .text(let bytes): return .text(String(decoding: bytes, as: UTF8.self))
            case .blob(let bytes): return .blob(Array(bytes))
            }
        }
    }

    /// Reads the values of well-formed encoded bytes one after another (a key made by `Encoder`, or
    /// restored after `validLength` checked it).
    struct Cursor {
        let bytes: UnsafeRawBufferPointer
        private(set) var position = 0

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        var isAtEnd: Bool { position >= bytes.count }

        mutating func next() -> EncodedValue {
            let tag = bytes[position]
            position += 1
            switch tag {
            case Tag.integer.rawValue:
                return .integer(ByteCoding.unzigzag(ByteCoding.readVarint(bytes, at: &position)!))
            case Tag.real.rawValue:
                return .real(Double(bitPattern: ByteCoding.readWord(bytes, at: &position)!))
            case Tag.text.rawValue, Tag.blob.rawValue:
                let length = Int(ByteCoding.readVarint(bytes, at: &position)!)
                let payload = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + length)])
                position += length
                return tag == Tag.text.rawValue ? .text(payload) : .blob(payload)
            default:
                return .null
            }
        }

        mutating func skip() {
            _ = next()
        }
    }
}
