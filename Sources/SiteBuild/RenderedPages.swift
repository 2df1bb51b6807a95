import Foundation

/// The pages a build rendered, each with the reason why, held compactly: a build of every page renders one
/// per record (1,000,000 at 1,000,000 records), and as an array of path and reason strings they took about
/// 110 bytes each, kept to the build's end (decisions.md 39g). Here a page is its path's bytes in one shared
/// buffer and the number of its reason, each reason kept once: about 60 bytes.
public struct RenderedPages: Sendable, Equatable {
    private var pathBytes: [UInt8] = []
    /// Where each page's path ends in `pathBytes`; it starts where the one before ends.
    private var pathEnds: [Int] = []
    private var reasonNumbers: [UInt32] = []
    /// The reasons, each kept once (a build of every page has one for all).
    private var reasons: [String] = []
    private var reasonIndex: [String: UInt32] = [:]

    /// No pages.
    public init() {}

    /// `pages`, in their order.
    public init(_ pages: [BuildSummary.RenderedPage]) {
        for page in pages { append(path: page.path, reason: page.reason) }
    }

    /// How many pages there are.
    public var count: Int { pathEnds.count }

    /// Whether there is none.
    public var isEmpty: Bool { pathEnds.isEmpty }

    /// Adds a page rendered for `reason` at the end.
    public mutating func append(path: String, reason: String) {
        pathBytes.append(contentsOf: path.utf8)
        pathEnds.append(pathBytes.count)
        if let number = reasonIndex[reason] {
            reasonNumbers.append(number)
        } else {
            let number = UInt32(reasons.count)
            reasons.append(reason)
            reasonIndex[reason] = number
            reasonNumbers.append(number)
        }
    }

    /// The page at `index`.
    public subscript(index: Int) -> BuildSummary.RenderedPage {
        BuildSummary.RenderedPage(path: path(at: index), reason: reasons[Int(reasonNumbers[index])])
    }

    /// Every page, in order, as values (O(pages): for a report or a plan that lists them).
    public var pages: [BuildSummary.RenderedPage] { (0..<count).map { self[$0] } }

    /// Takes out every page at `path`, keeping the others' order (O(pages): for a file withdrawn, which is rare).
    public mutating func removeAll(path: String) {
        guard (0..<count).contains(where: { matches(path, at: $0) }) else { return }
        let kept = (0..<count).filter { !matches(path, at: $0) }.map { self[$0] }
        self = RenderedPages(kept)
    }

    private func start(of index: Int) -> Int { index == 0 ? 0 : pathEnds[index - 1] }

    private func path(at index: Int) -> String {
        String(decoding: pathBytes[start(of: index)..<pathEnds[index]], as: UTF8.self)
    }

    private func matches(_ path: String, at index: Int) -> Bool {
        pathBytes[start(of: index)..<pathEnds[index]].elementsEqual(path.utf8)
    }
}
