import Foundation
import SiteStore

/// The pages a build rendered, each with the reason why, held compactly: a build of every page renders one
/// per record (1,000,000 at 1,000,000 records), and as an array of path and reason strings they took about
/// 110 bytes each, kept to the build's end (decisions.md 39g). Here a page is the number of its entry among
/// the plan's entries (which hold its path anyway) and the number of its reason, each reason kept once:
/// 8 bytes. The paths are read from those entries, which the plan hands over once it is done.
public struct RenderedPages: Sendable, Equatable {
    /// The entries the numbers name: the plan's, once handed over.
    private var entries = PageEntries()
    private var entryNumbers: [Int32] = []
    private var reasonNumbers: [UInt32] = []
    /// The reasons, each kept once (a build of every page has one for all).
    private var reasons: [String] = []
    private var reasonIndex: [String: UInt32] = [:]

    /// No pages.
    public init() {}

    /// `pages`, in their order.
    public init(_ pages: [BuildSummary.RenderedPage]) {
        var entries = PageEntries()
        for page in pages {
            if entries.number(of: page.path) == nil { entries[page.path] = PageRecord(inputs: nil, hash: 0) }
            append(entry: entries.number(of: page.path)!, reason: page.reason)
        }
        self.entries = entries
    }

    /// How many pages there are.
    public var count: Int { entryNumbers.count }

    /// Whether there is none.
    public var isEmpty: Bool { entryNumbers.isEmpty }

    /// Adds a page rendered for `reason` at the end, at the path of entry `entry` of the entries it will be read with.
    mutating func append(entry: Int, reason: String) {
        entryNumbers.append(Int32(entry))
        if let number = reasonIndex[reason] {
            reasonNumbers.append(number)
        } else {
            let number = UInt32(reasons.count)
            reasons.append(reason)
            reasonIndex[reason] = number
            reasonNumbers.append(number)
        }
    }

    /// Takes out every page at entry `entry`, keeping the others' order (O(pages): for a file withdrawn, which is rare).
    mutating func removeAll(entry: Int) {
        var kept = 0
        for index in entryNumbers.indices where entryNumbers[index] != Int32(entry) {
            entryNumbers[kept] = entryNumbers[index]
            reasonNumbers[kept] = reasonNumbers[index]
            kept += 1
        }
        entryNumbers.removeLast(entryNumbers.count - kept)
        reasonNumbers.removeLast(reasonNumbers.count - kept)
    }

    /// These pages with their paths read from `entries`, which the numbers were given by (entries keep
    /// their numbers as they change, so the plan's entries at any later time do).
    func named(by entries: PageEntries) -> RenderedPages {
        var named = self
        named.entries = entries
        return named
    }

    /// The page at `index`.
    public subscript(index: Int) -> BuildSummary.RenderedPage {
        BuildSummary.RenderedPage(path: entries.path(at: Int(entryNumbers[index])), reason: reasons[Int(reasonNumbers[index])])
    }

    /// Every page, in order, as values (O(pages): for a report or a plan that lists them).
    public var pages: [BuildSummary.RenderedPage] { (0..<count).map { self[$0] } }

    /// Two lists are equal when they list the same pages for the same reasons, in the same order.
    public static func == (a: RenderedPages, b: RenderedPages) -> Bool { a.count == b.count && a.pages == b.pages }
}
