import Foundation
import ResultsController
import XCTest

/// The items of `ControllerBehaviourTests.makeItems`, sectioned by state and by score within it.
let sectionedItems = FetchRequest(
    table: "items", sortDescriptors: [SortDescriptor(key: "state"), SortDescriptor(key: "score", ascending: false)], sectionKey: "state")

extension XCTestCase {
    /// A path for a database file that is deleted, with its journal files, when the test ends.
    func temporaryDatabasePath() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rc-\(UUID().uuidString).sqlite").path
        addTeardownBlock { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        return path
    }
}
