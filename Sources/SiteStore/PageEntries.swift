import Foundation

/// Manifest entries by path, held compactly: what a build changes in the page manifest. A build of every page
/// plans an entry per file (1.2 million at 1,000,000 records), and as a dictionary of `PageRecord`s by path
/// they took about 400 bytes each, half of what such a build's memory grew by (decisions.md 39e). Here an
/// entry is its path in a `PathTable`, its key's bytes in a shared buffer, its numbers in columns, and its
/// owner and section as numbers of names kept once: about 130 bytes. An entry's number is its path's.
public struct PageEntries: Sendable {
    /// The paths; a path removed keeps its number (not live).
    private var paths = PathTable()
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
    /// How many entries are live.
    public private(set) var count = 0

    /// No entries.
    public init() {}

    /// Whether no entry is live.
    public var isEmpty: Bool { count == 0 }

    /// The entry of the file at `path`; setting nil removes it.
    public subscript(path: String) -> PageRecord? {
        get { paths.number(of: path).flatMap { live[$0] ? record(at: $0) : nil } }
        set {
            if let newValue { set(newValue, at: path) } else { _ = removeValue(forKey: path) }
        }
    }

    /// Removes the entry of `path`, returning it.
    @discardableResult
    public mutating func removeValue(forKey path: String) -> PageRecord? {
        guard let number = paths.number(of: path), live[number] else { return nil }
        live[number] = false
        count -= 1
        return record(at: number)
    }

    /// Sets the hash of the bytes written for `path`'s entry; false when it has none.
    public mutating func setHash(_ hash: Int64, of path: String) -> Bool {
        guard let number = paths.number(of: path), live[number] else { return false }
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

    /// The numbers of the live entries whose paths (as UTF-8 bytes) `include` accepts, in the byte order of
    /// their paths: a sitemap's new pages, without a string made for each entry.
    public func numbersInPathOrder(where include: (UnsafeRawBufferPointer) -> Bool) -> [Int] {
        var numbers = live.indices.filter { live[$0] && paths.withBytes(at: $0, include) }
        paths.sortInPathOrder(&numbers)
        return numbers
    }

    /// Calls `body` with the UTF-8 bytes of entry `number`'s path, without making a string.
    public func withPathBytes<T>(at number: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try paths.withBytes(at: number, body)
    }

    /// Every live entry's path and record, in the byte order of the paths (the store's order, in which its
    /// index takes them fastest); the paths are made one at a time, not all at once.
    public func forEachInPathOrder(_ body: (String, PageRecord) throws -> Void) rethrows {
        var numbers = live.indices.filter { live[$0] }
        paths.sortInPathOrder(&numbers)
        for number in numbers { try body(path(at: number), record(at: number)) }
    }

    private mutating func set(_ record: PageRecord, at path: String) {
        let (number, inserted) = paths.insert(path)
        if inserted {
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
        }
        if !live[number] { count += 1 }
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
    public func number(of path: String) -> Int? { paths.number(of: path) }

    /// The path of entry `number` (from `number(of:)`).
    public func path(at number: Int) -> String { paths.path(at: number) }

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
}
