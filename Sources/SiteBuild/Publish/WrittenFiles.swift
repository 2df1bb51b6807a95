import Foundation

/// The files a build wrote or found already right, by path relative to the output folder, with each file's
/// content hash (what the manifest records) and whether it was written. A build of every page has one per
/// file (1.2 million at 1,000,000 records): as a dictionary of path strings, a list of the written ones and
/// the staged files' paths they took about 290 bytes a file (decisions.md 39f, 39g). Here a file is its
/// path's bytes in one shared buffer, a hash, a byte of marks and a slot of an open-addressing table:
/// about 80 bytes. A file keeps its number for the build, so other lists name it by that number.
struct WrittenFiles: Sendable {
    /// What the writer did with a file.
    struct Marks: OptionSet, Sendable {
        let rawValue: UInt8
        /// The file is recorded (not removed since).
        static let live = Marks(rawValue: 1)
        /// Its bytes changed (or are new), and were written (in a dry run, would be).
        static let written = Marks(rawValue: 2)
        /// Its new bytes replace a file of the last build at its place.
        static let replacing = Marks(rawValue: 4)
    }

    private var pathBytes: [UInt8] = []
    /// Where each file's path ends in `pathBytes`; it starts where the one before ends.
    private var pathEnds: [Int] = []
    private var hashes: [Int64] = []
    private var marks: [Marks] = []
    /// Open addressing by the path's hash: file numbers, -1 where none. A file removed keeps its number
    /// (not live), so no slot is ever emptied.
    private var table = [Int32](repeating: -1, count: 16)
    /// How many files are live.
    private(set) var count = 0
    /// How many numbers were given: files are `0..<numbers`, live or not.
    var numbers: Int { pathEnds.count }

    /// Records `hash` for the file at `path` (live from now on), keeping its other marks; returns its number.
    @discardableResult
    mutating func set(_ hash: Int64, for path: String) -> Int {
        let number: Int
        if let found = find(path) {
            number = found
        } else {
            number = pathEnds.count
            pathBytes.append(contentsOf: path.utf8)
            pathEnds.append(pathBytes.count)
            hashes.append(0)
            marks.append([])
            insertInTable(number, hash: Self.hash(path.utf8))
        }
        if !marks[number].contains(.live) { count += 1 }
        marks[number].insert(.live)
        hashes[number] = hash
        return number
    }

    /// The number of the file at `path`; nil when it is not live.
    func number(of path: String) -> Int? {
        find(path).flatMap { marks[$0].contains(.live) ? $0 : nil }
    }

    /// The hash recorded for the file at `path`; nil when it is not live.
    func hash(of path: String) -> Int64? { number(of: path).map { hashes[$0] } }

    /// Whether the file at `path` is live.
    func contains(_ path: String) -> Bool { hash(of: path) != nil }

    /// Removes the file at `path` (its marks go with it); returns its number when it was live.
    @discardableResult
    mutating func remove(_ path: String) -> Int? {
        guard let number = find(path), marks[number].contains(.live) else { return nil }
        marks[number] = []
        count -= 1
        return number
    }

    /// The marks of file `number`.
    func marks(of number: Int) -> Marks { marks[number] }

    /// Adds `added` to the marks of file `number`.
    mutating func mark(_ number: Int, _ added: Marks) { marks[number].formUnion(added) }

    /// Takes `removed` from the marks of file `number`.
    mutating func unmark(_ number: Int, _ removed: Marks) { marks[number].subtract(removed) }

    /// The path of file `number`.
    func path(of number: Int) -> String {
        String(decoding: pathBytes[(number == 0 ? 0 : pathEnds[number - 1])..<pathEnds[number]], as: UTF8.self)
    }

    /// Calls `body` with every live file's path and hash, in the order they were first recorded; the paths
    /// are made one at a time.
    func forEach(_ body: (String, Int64) throws -> Void) rethrows {
        for number in marks.indices where marks[number].contains(.live) { try body(path(of: number), hashes[number]) }
    }

    /// The paths of the live files marked `.written`, in the order they were first recorded.
    var writtenPaths: [String] {
        marks.indices.filter { marks[$0].isSuperset(of: [.live, .written]) }.map(path(of:))
    }

    /// The number of `path`, live or not.
    private func find(_ path: String) -> Int? {
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: Self.hash(path.utf8)) & mask
        while true {
            let number = Int(table[slot])
            if number < 0 { return nil }
            if pathBytes[(number == 0 ? 0 : pathEnds[number - 1])..<pathEnds[number]].elementsEqual(path.utf8) { return number }
            slot = (slot + 1) & mask
        }
    }

    private mutating func insertInTable(_ number: Int, hash: UInt64) {
        if pathEnds.count * 2 > table.count { growTable() }
        let mask = table.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while table[slot] >= 0 { slot = (slot + 1) & mask }
        table[slot] = Int32(number)
    }

    /// Doubles the table, placing every number given before the one being added.
    private mutating func growTable() {
        table = [Int32](repeating: -1, count: table.count * 2)
        let mask = table.count - 1
        var start = 0
        for number in 0..<(pathEnds.count - 1) {
            var slot = Int(truncatingIfNeeded: Self.hash(pathBytes[start..<pathEnds[number]])) & mask
            while table[slot] >= 0 { slot = (slot + 1) & mask }
            table[slot] = Int32(number)
            start = pathEnds[number]
        }
    }

    /// FNV-1a over the path's bytes, mixed at the end so that the low bits the table uses vary (as `PageEntries`).
    private static func hash<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        return hash ^ (hash >> 33)
    }
}
