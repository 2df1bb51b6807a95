import Foundation

/// Manifest entries by path, held compactly: what a build changes in the page manifest. A build of every page
/// plans an entry per file (1.2 million at 1,000,000 records), and as a dictionary of `PageRecord`s by path
/// they took about 400 bytes each, half of what such a build's memory grew by (decisions.md 39e). Here an
/// entry is its path's and key's bytes in two shared buffers, its numbers in columns, and its owner and
/// section as numbers of names kept once: about 130 bytes.
public struct PageEntries: Sendable {
    private var pathBytes: [UInt8] = []
    private var pathStarts: [Int] = [0]
    private var keyBytes: [UInt8] = []
    private var keyStarts: [Int] = []
    private var keyLengths: [Int32] = []
    private var inputs: [PageInputs] = []
    private var hasInputs: [Bool] = []
    private var hashes: [Int64] = []
    private var owners: [UInt32] = []
    private var sections: [UInt32] = []
    private var pages: [Int] = []
    private var records: [Int64] = []
    private var live: [Bool] = []
    /// Owners and sections, each kept once.
    private var names: [String] = []
    private var nameNumbers: [String: UInt32] = [:]
    /// Open addressing by the path's hash: entry numbers, -1 where none. A path removed keeps its entry
    /// (not live), so no slot is ever emptied.
    private var table = [Int32](repeating: -1, count: 16)
    /// How many entries are live.
    public private(set) var count = 0

    /// No entries.
    public init() {}

    /// Whether no entry is live.
    public var isEmpty: Bool { count == 0 }

    /// The entry of the file at `path`; setting nil removes it.
    public subscript(path: String) -> PageRecord? {
        get { find(path).flatMap { live[$0] ? record(at: $0) : nil } }
        set {
            if let newValue { set(newValue, at: path) } else { _ = removeValue(forKey: path) }
        }
    }

    /// Removes the entry of `path`, returning it.
    @discardableResult
    public mutating func removeValue(forKey path: String) -> PageRecord? {
        guard let number = find(path), live[number] else { return nil }
        live[number] = false
        count -= 1
        return record(at: number)
    }

    /// Sets the hash of the bytes written for `path`'s entry; false when it has none.
    public mutating func setHash(_ hash: Int64, of path: String) -> Bool {
        guard let number = find(path), live[number] else { return false }
        hashes[number] = hash
        return true
    }

    /// Calls `body` with every live entry's path and record, in the order they were first set.
    public func forEach(_ body: (String, PageRecord) throws -> Void) rethrows {
        for number in live.indices where live[number] { try body(path(at: number), record(at: number)) }
    }

    /// Calls `body` with every live entry's path.
    public func forEachPath(_ body: (String) throws -> Void) rethrows {
        for number in live.indices where live[number] { try body(path(at: number)) }
    }

    /// Every live entry's path and record, in the byte order of the paths (the store's order, in which its
    /// index takes them fastest); the paths are made one at a time, not all at once.
    public func forEachInPathOrder(_ body: (String, PageRecord) throws -> Void) rethrows {
        var numbers = live.indices.filter { live[$0] }
        pathBytes.withUnsafeBufferPointer { bytes in
            numbers.sort { a, b in
                let (aStart, aEnd, bStart, bEnd) = (pathStarts[a], pathStarts[a + 1], pathStarts[b], pathStarts[b + 1])
                let common = min(aEnd - aStart, bEnd - bStart)
                let order = common == 0 ? 0 : memcmp(bytes.baseAddress! + aStart, bytes.baseAddress! + bStart, common)
                return order != 0 ? order < 0 : aEnd - aStart < bEnd - bStart
            }
        }
        for number in numbers { try body(path(at: number), record(at: number)) }
    }

    private mutating func set(_ record: PageRecord, at path: String) {
        let number: Int
        if let found = find(path) {
            number = found
            if !live[number] { count += 1 }
        } else {
            number = live.count
            pathBytes.append(contentsOf: path.utf8)
            pathStarts.append(pathBytes.count)
            keyStarts.append(0)
            keyLengths.append(0)
            inputs.append(PageInputs(settings: 0, template: 0, data: 0))
            hasInputs.append(false)
            hashes.append(0)
            owners.append(0)
            sections.append(0)
            pages.append(0)
            records.append(0)
            live.append(false)
            count += 1
            insertInTable(number, hash: Self.hash(path.utf8))
        }
        live[number] = true
        inputs[number] = record.inputs ?? PageInputs(settings: 0, template: 0, data: 0)
        hasInputs[number] = record.inputs != nil
        hashes[number] = record.hash
        owners[number] = nameNumber(record.owner)
        sections[number] = nameNumber(record.section)
        pages[number] = record.page
        records[number] = record.record
        if record.key.isEmpty {
            keyLengths[number] = 0
        } else if key(at: number) != record.key {
            keyStarts[number] = keyBytes.count
            keyBytes.append(contentsOf: record.key.utf8)
            keyLengths[number] = Int32(keyBytes.count - keyStarts[number])
        }
    }

    private func record(at number: Int) -> PageRecord {
        PageRecord(inputs: hasInputs[number] ? inputs[number] : nil, hash: hashes[number], owner: names[Int(owners[number])],
                   section: names[Int(sections[number])], page: pages[number], record: records[number], key: key(at: number))
    }

    /// The number of `path`'s entry, live or not: an entry keeps its number, so others can name it by that.
    public func number(of path: String) -> Int? { find(path) }

    /// The path of entry `number` (from `number(of:)`).
    public func path(at number: Int) -> String {
        String(decoding: pathBytes[pathStarts[number]..<pathStarts[number + 1]], as: UTF8.self)
    }

    private func key(at number: Int) -> String {
        let length = Int(keyLengths[number])
        guard length > 0 else { return "" }
        return String(decoding: keyBytes[keyStarts[number]..<(keyStarts[number] + length)], as: UTF8.self)
    }

    private mutating func nameNumber(_ name: String) -> UInt32 {
        if let number = nameNumbers[name] { return number }
        let number = UInt32(names.count)
        names.append(name)
        nameNumbers[name] = number
        return number
    }

    /// The entry number of `path`, live or not.
    private func find(_ path: String) -> Int? {
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: Self.hash(path.utf8)) & mask
        while true {
            let number = Int(table[slot])
            if number < 0 { return nil }
            if pathBytes[pathStarts[number]..<pathStarts[number + 1]].elementsEqual(path.utf8) { return number }
            slot = (slot + 1) & mask
        }
    }

    private mutating func insertInTable(_ number: Int, hash: UInt64) {
        if live.count * 2 > table.count { growTable() }
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while table[slot] >= 0 { slot = (slot + 1) & mask }
        table[slot] = Int32(number)
    }

    private mutating func growTable() {
        table = [Int32](repeating: -1, count: table.count * 2)
        let mask = table.count - 1
        for number in 0..<(live.count - 1) {
            var slot = Int(truncatingIfNeeded: Self.hash(pathBytes[pathStarts[number]..<pathStarts[number + 1]])) & mask
            while table[slot] >= 0 { slot = (slot + 1) & mask }
            table[slot] = Int32(number)
        }
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
