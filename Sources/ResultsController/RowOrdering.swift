import Foundation
import SiteStore

/// Orders rows exactly as SQLite's ORDER BY does for the same descriptors, then by id.
///
/// The controller places changed rows by binary search with this comparison instead of re-running the
/// query, so it must agree with SQLite on every value: NULLs per `NULLS FIRST/LAST`, integers and reals
/// compared as numbers, numbers before text, text by collation over UTF-8 bytes, blobs last by bytes.
/// It reads the keys' encoded bytes in place: a comparison allocates nothing.
struct RowOrdering: Sendable {
    /// SQLite's built-in collations, resolved once rather than per comparison.
    enum Collation: Sendable {
        case binary, noCase, rightTrim

        init(_ name: String?) {
            switch name?.uppercased() {
            case "NOCASE": self = .noCase
            case "RTRIM": self = .rightTrim
            default: self = .binary
            }
        }
    }

    let descriptors: [SortDescriptor]
    let collations: [Collation]

    init(descriptors: [SortDescriptor]) {
        self.descriptors = descriptors
        collations = descriptors.map { Collation($0.collation) }
    }

    /// Whether the row (`lhs`, `lhsID`) sorts before (`rhs`, `rhsID`).
    func precedes(_ lhs: SortKey, _ lhsID: Int64, _ rhs: SortKey, _ rhsID: Int64) -> Bool {
        let order = compare(lhs, rhs)
        return order != 0 ? order < 0 : lhsID < rhsID
    }

    /// -1, 0 or 1: how `lhs` compares to `rhs` over the values both have (direction and NULL placement
    /// applied), so that a key of a section's first values compares with another such key.
    func compare(_ lhs: SortKey, _ rhs: SortKey) -> Int {
        lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                var leftValues = SortKey.Cursor(left), rightValues = SortKey.Cursor(right)
                var index = 0
                while index < descriptors.count, !leftValues.isAtEnd, !rightValues.isAtEnd {
                    let order = compare(leftValues.next(), rightValues.next(), at: index)
                    if order != 0 { return order }
                    index += 1
                }
                return 0
            }
        }
    }

    private func compare(_ lhs: SortKey.EncodedValue, _ rhs: SortKey.EncodedValue, at index: Int) -> Int {
        let descriptor = descriptors[index]
        switch (lhs, rhs) {
        case (.null, .null): return 0
        case (.null, _): return descriptor.nulls == .first ? -1 : 1
        case (_, .null): return descriptor.nulls == .first ? 1 : -1
        default:
            let order = Self.compareValues(lhs, rhs, collation: collations[index])
            return descriptor.ascending ? order : -order
        }
    }

    /// SQLite's comparison of two non-NULL values of any storage class.
    private static func compareValues(_ lhs: SortKey.EncodedValue, _ rhs: SortKey.EncodedValue, collation: Collation) -> Int {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.integer(let a), .real(let b)): return compareNumbers(a, b)
        case (.real(let a), .integer(let b)): return -compareNumbers(b, a)
        case (.real(let a), .real(let b)): return a < b ? -1 : (a > b ? 1 : 0)
        case (.integer, _), (.real, _): return -1
        case (_, .integer), (_, .real): return 1
        case (.text(let a), .text(let b)): return compareText(a, b, collation: collation)
        case (.text, _): return -1
        case (_, .text): return 1
        case (.blob(let a), .blob(let b)): return compareBytes(a, b)
        default: return 0
        }
    }

    /// An integer against a real, exactly, as SQLite's `sqlite3IntFloatCompare` does: a real beyond the
    /// integers' range is beyond every integer; else the integer is compared with the real's integer part,
    /// then (when they are equal) with the real itself.
    private static func compareNumbers(_ integer: Int64, _ real: Double) -> Int {
        if real < -9_223_372_036_854_775_808.0 { return 1 }
        if real >= 9_223_372_036_854_775_808.0 { return -1 }
        let truncated = Int64(real)
        if integer != truncated { return integer < truncated ? -1 : 1 }
        let asReal = Double(integer)
        return asReal < real ? -1 : (asReal > real ? 1 : 0)
    }

    private static func compareText(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, collation: Collation) -> Int {
        switch collation {
        case .binary: return compareBytes(a, b)
        case .rightTrim: return compareBytes(trimmingTrailingSpaces(a), trimmingTrailingSpaces(b))
        case .noCase:
            // SQLite's NOCASE stops at a NUL in the first text (`sqlite3StrNICmp`), then compares lengths.
            let common = min(a.count, b.count)
            var index = 0
            while index < common, a[index] != 0, foldASCII(a[index]) == foldASCII(b[index]) { index += 1 }
            if index < common {
                let (left, right) = (foldASCII(a[index]), foldASCII(b[index]))
                if left != right { return left < right ? -1 : 1 }
            }
            return a.count < b.count ? -1 : (a.count > b.count ? 1 : 0)
        }
    }

    /// `memcmp` order, the shorter first when one is a prefix of the other.
    private static func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            let order = memcmp(left, right, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return a.count < b.count ? -1 : (a.count > b.count ? 1 : 0)
    }

    static func foldASCII(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte + 32 : byte
    }

    static func trimmingTrailingSpaces(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 32 { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[..<end])
    }
}
