import Foundation
import SiteStore

/// The values a row sorts by, in the order of the request's sort descriptors.
public struct SortKey: Sendable, Hashable {
    /// One value per sort descriptor, in order.
    public var values: [DatabaseValue]

    /// Makes a key of `values`.
    public init(_ values: [DatabaseValue]) {
        self.values = values
    }
}

/// Orders rows exactly as SQLite's ORDER BY does for the same descriptors, then by id.
///
/// The controller places changed rows by binary search with this comparison instead of re-running the
/// query, so it must agree with SQLite on every value: NULLs per `NULLS FIRST/LAST`, integers and reals
/// compared as numbers, numbers before text, text by collation over UTF-8 bytes, blobs last by bytes.
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
    private let collations: [Collation]

    init(descriptors: [SortDescriptor]) {
        self.descriptors = descriptors
        collations = descriptors.map { Collation($0.collation) }
    }

    /// Whether the row (`lhs`, `lhsID`) sorts before (`rhs`, `rhsID`).
    func precedes(_ lhs: SortKey, _ lhsID: Int64, _ rhs: SortKey, _ rhsID: Int64) -> Bool {
        for index in descriptors.indices {
            let order = compare(lhs.values[index], rhs.values[index], at: index)
            if order != 0 { return order < 0 }
        }
        return lhsID < rhsID
    }

    /// -1, 0 or 1: how `lhs` compares to `rhs` under descriptor `index` (direction and NULL placement applied).
    func compare(_ lhs: DatabaseValue, _ rhs: DatabaseValue, at index: Int) -> Int {
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
    static func compareValues(_ lhs: DatabaseValue, _ rhs: DatabaseValue, collation: Collation) -> Int {
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

    private static func compareNumbers(_ integer: Int64, _ real: Double) -> Int {
        let asReal = Double(integer)
        if asReal < real { return -1 }
        if asReal > real { return 1 }
        // Equal as doubles: SQLite then compares exactly, which matters only beyond 2^53.
        guard real.magnitude < 9.2e18 else { return 0 }
        let truncated = Int64(real)
        return integer < truncated ? -1 : (integer > truncated ? 1 : 0)
    }

    private static func compareText(_ a: String, _ b: String, collation: Collation) -> Int {
        switch collation {
        case .noCase: return compareBytes(a.utf8.lazy.map(foldASCII), b.utf8.lazy.map(foldASCII))
        case .rightTrim: return compareBytes(trimmingTrailingSpaces(a.utf8), trimmingTrailingSpaces(b.utf8))
        case .binary: return compareUTF8(a, b)
        }
    }

    /// Byte order of two strings with `memcmp` over their contiguous UTF-8 (native strings always have it).
    private static func compareUTF8(_ a: String, _ b: String) -> Int {
        let result = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right -> Int in
                let common = min(left.count, right.count)
                if common > 0, let l = left.baseAddress, let r = right.baseAddress {
                    let order = memcmp(l, r, common)
                    if order != 0 { return order < 0 ? -1 : 1 }
                }
                return left.count < right.count ? -1 : (left.count > right.count ? 1 : 0)
            }
        }
        return (result ?? nil) ?? compareBytes(a.utf8, b.utf8)
    }

    private static func foldASCII(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte + 32 : byte
    }

    private static func trimmingTrailingSpaces(_ bytes: String.UTF8View) -> ArraySlice<UInt8> {
        let array = Array(bytes)
        var end = array.count
        while end > 0, array[end - 1] == 32 { end -= 1 }
        return array[..<end]
    }

    private static func compareBytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> Int {
        var left = a.makeIterator()
        var right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?) where x != y: return x < y ? -1 : 1
            default: continue
            }
        }
    }
}
