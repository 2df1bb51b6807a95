import ResultsController

/// The ids and versions of a controller's rows, as page inputs are made of: copied whole for a build that
/// looks at every row, read one at a time for a build that looks at the few its changes touch.
struct RowVersions {
    /// How many rows there are.
    let count: Int
    private let whole: (ids: [Int64], versions: [Int64])?
    private let controller: ResultsController

    /// The rows of `controller`; `whole` copies every id and version at once (O(n)).
    init(_ controller: ResultsController, whole: Bool) {
        self.controller = controller
        count = controller.count
        self.whole = whole ? controller.fetchedVersions : nil
    }

    /// The id of the row at `offset`.
    func id(at offset: Int) -> Int64 {
        whole?.ids[offset] ?? controller.ids(in: offset..<(offset + 1))[0]
    }

    /// The version of the row at `offset`.
    func version(at offset: Int) -> Int64 {
        whole?.versions[offset] ?? controller.versions(in: offset..<(offset + 1))[0]
    }
}

/// Marks on the last manifest's slots: a flag per slot for a build that looks at every page, a set of the
/// few marked for one that looks at the pages its changes touch.
struct SlotMarks {
    private var dense: [Bool]?
    private var sparse = Set<Int>()

    /// Marks for `count` slots, kept in an array when `dense`.
    init(count: Int, dense: Bool) {
        self.dense = dense ? Array(repeating: false, count: count) : nil
    }

    /// Whether `slot` is marked; an array grows to the highest slot marked.
    subscript(slot: Int) -> Bool {
        get {
            guard let dense else { return sparse.contains(slot) }
            return slot < dense.count && dense[slot]
        }
        set {
            if dense != nil {
                if slot >= dense!.count { dense!.append(contentsOf: repeatElement(false, count: slot - dense!.count + 1)) }
                dense![slot] = newValue
            } else if newValue {
                sparse.insert(slot)
            } else {
                sparse.remove(slot)
            }
        }
    }
}
