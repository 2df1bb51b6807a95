import Foundation
import SiteStore

/// The files a build wrote or found already right, by path relative to the output folder, with each file's
/// content hash (what the manifest records) and whether it was written. A build of every page has one per
/// file (1.2 million at 1,000,000 records): as a dictionary of path strings, a list of the written ones and
/// the staged files' paths they took about 290 bytes a file (decisions.md 39f, 39g). Here a file is its path
/// in a `PathTable`, a hash and a byte of marks: about 80 bytes. A file keeps its path's number for the
/// build, so other lists name it by that number.
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

    /// The paths; a file removed keeps its number (not live).
    private var paths = PathTable()
    private var hashes: [Int64] = []
    private var marks: [Marks] = []
    /// How many files are live.
    private(set) var count = 0
    /// How many numbers were given: files are `0..<numbers`, live or not.
    var numbers: Int { paths.count }

    /// Records `hash` for the file at `path` (live from now on), keeping its other marks; returns its number.
    @discardableResult
    mutating func set(_ hash: Int64, for path: String) -> Int {
        let (number, inserted) = paths.insert(path)
        if inserted {
            hashes.append(0)
            marks.append([])
        }
        if !marks[number].contains(.live) { count += 1 }
        marks[number].insert(.live)
        hashes[number] = hash
        return number
    }

    /// The number of the file at `path`; nil when it is not live.
    func number(of path: String) -> Int? {
        paths.number(of: path).flatMap { marks[$0].contains(.live) ? $0 : nil }
    }

    /// The hash recorded for the file at `path`; nil when it is not live.
    func hash(of path: String) -> Int64? { number(of: path).map { hashes[$0] } }

    /// Whether the file at `path` is live.
    func contains(_ path: String) -> Bool { hash(of: path) != nil }

    /// Removes the file at `path` (its marks go with it); returns its number when it was live.
    @discardableResult
    mutating func remove(_ path: String) -> Int? {
        guard let number = paths.number(of: path), marks[number].contains(.live) else { return nil }
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
    func path(of number: Int) -> String { paths.path(at: number) }

    /// Calls `body` with every live file's path and hash, in the order they were first recorded; the paths
    /// are made one at a time.
    func forEach(_ body: (String, Int64) throws -> Void) rethrows {
        for number in marks.indices where marks[number].contains(.live) { try body(path(of: number), hashes[number]) }
    }

    /// The paths of the live files marked `.written`, in the order they were first recorded.
    var writtenPaths: [String] {
        marks.indices.filter { marks[$0].isSuperset(of: [.live, .written]) }.map(path(of:))
    }
}
