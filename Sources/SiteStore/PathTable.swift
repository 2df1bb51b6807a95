import Foundation

/// Paths held compactly, each by a number given in the order they were first inserted: the index of
/// `PageEntries` and of the writer's `WrittenFiles`, which keep their other columns by these numbers. A build
/// of every page holds 1.2 million paths in each (decisions.md 39e, 39g). Here a path is its bytes in one
/// shared buffer, where they end, and a slot or two of an open-addressing table: no strings.
/// A path is never removed: its holder marks it not live and keeps its number.
public struct PathTable: Sendable {
    private var bytes: [UInt8] = []
    /// Where each path ends in `bytes`; it starts where the one before ends.
    private var ends: [Int] = []
    /// Open addressing by the path's hash: path numbers, -1 where none. No slot is ever emptied.
    private var table = [Int32](repeating: -1, count: 16)

    /// No paths.
    public init() {}

    /// How many paths were inserted: their numbers are `0..<count`.
    public var count: Int { ends.count }

    /// Gives `path` the next number unless it has one; returns its number and whether it was new.
    @discardableResult
    public mutating func insert(_ path: String) -> (number: Int, inserted: Bool) {
        let hash = Self.hash(path.utf8)
        if let found = find(path, hash: hash) { return (found, false) }
        let number = ends.count
        bytes.append(contentsOf: path.utf8)
        ends.append(bytes.count)
        if ends.count * 2 > table.count { growTable() }
        place(number, hash: hash)
        return (number, true)
    }

    /// The number of `path`; nil when it was never inserted.
    public func number(of path: String) -> Int? { find(path, hash: Self.hash(path.utf8)) }

    /// The path of `number` (from `insert(_:)` or `number(of:)`).
    public func path(at number: Int) -> String { String(decoding: bytes[range(of: number)], as: UTF8.self) }

    /// Calls `body` with the UTF-8 bytes of path `number`, without making a string.
    public func withBytes<T>(at number: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let range = range(of: number)
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Sorts `numbers` into the byte order of their paths (the store's order, in which its index takes them
    /// fastest), comparing the bytes in place rather than making strings.
    public func sortInPathOrder(_ numbers: inout [Int]) {
        bytes.withUnsafeBytes { bytes in
            numbers.sort { Self.precedes(UnsafeRawBufferPointer(rebasing: bytes[range(of: $0)]), UnsafeRawBufferPointer(rebasing: bytes[range(of: $1)])) }
        }
    }

    /// Whether the path whose UTF-8 bytes are `a` sorts before `b` in the store's order: by bytes, a prefix first.
    public static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let common = min(a.count, b.count)
        let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
        return order != 0 ? order < 0 : a.count < b.count
    }

    /// Where the bytes of path `number` are in `bytes`.
    private func range(of number: Int) -> Range<Int> { (number == 0 ? 0 : ends[number - 1])..<ends[number] }

    /// The number of `path`, whose hash is `hash`.
    private func find(_ path: String, hash: UInt64) -> Int? {
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let number = Int(table[slot])
            if number < 0 { return nil }
            if bytes[range(of: number)].elementsEqual(path.utf8) { return number }
            slot = (slot + 1) & mask
        }
    }

    /// Puts `number` in the first free slot from its hash's.
    private mutating func place(_ number: Int, hash: UInt64) {
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while table[slot] >= 0 { slot = (slot + 1) & mask }
        table[slot] = Int32(number)
    }

    /// Doubles the table, placing every number given before the one being added.
    private mutating func growTable() {
        table = [Int32](repeating: -1, count: table.count * 2)
        for number in 0..<(ends.count - 1) { place(number, hash: Self.hash(bytes[range(of: number)])) }
    }

    /// FNV-1a over the path's bytes, mixed at the end so that the low bits the table uses vary.
    private static func hash<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        return hash ^ (hash >> 33)
    }
}
