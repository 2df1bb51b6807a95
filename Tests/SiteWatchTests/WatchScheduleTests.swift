import SiteBuild
@testable import SiteWatch
import XCTest

/// When a watch builds without a save after its output or store folder was deleted, and what it calls that
/// build: the steps of a `git clean -fdx` under a watch, with the builds' outcomes made up.
final class WatchScheduleTests: XCTestCase {
    private func built(writing files: Int = 0) -> RebuildReport {
        var report = RebuildReport(changedPaths: [])
        var summary = BuildSummary()
        summary.pagesWritten = files
        report.summary = summary
        return report
    }

    private var failedForTheMachine: RebuildReport {
        var report = RebuildReport(changedPaths: [])
        report.errors = ["store: disk full"]
        report.failedOutsideTheSite = true
        return report
    }

    func testChangesWhileACheckIsDuePutItOffUntilTheSiteIsQuiet() {
        var schedule = WatchSchedule()
        XCTAssertTrue(schedule.record(built(writing: 3), of: .changes, folderGone: true))
        XCTAssertTrue(schedule.verifiesNext)
        XCTAssertEqual(schedule.retryAfter, WatchSession.settlingTime)
        // The rest of the deletion arrives within the second: its build looks too, and the check still waits.
        XCTAssertEqual(schedule.kind(of: ["content/a.md"]), .changes)
        XCTAssertTrue(schedule.record(built(writing: 1), of: .changes, folderGone: false))
        XCTAssertTrue(schedule.verifiesNext, "the deletion may still be going on")
        XCTAssertEqual(schedule.retryAfter, WatchSession.settlingTime)
        // Quiet for a second: the check, and then no more waiting.
        XCTAssertEqual(schedule.kind(of: []), .check)
        XCTAssertTrue(schedule.record(built(writing: 2), of: .check, folderGone: false), "a check that made pages says so")
        XCTAssertFalse(schedule.verifiesNext)
        XCTAssertNil(schedule.retryAfter)
        XCTAssertEqual(schedule.kind(of: ["content/a.md"]), .changes)
    }

    func testACheckThatFoundEveryPageSaysNothing() {
        var schedule = WatchSchedule()
        _ = schedule.record(built(), of: .changes, folderGone: true)
        XCTAssertFalse(schedule.record(built(), of: .check, folderGone: false))
    }

    func testABuildTheMachineFailedAfterAFolderWentIsTriedAgainNotCalledACheck() {
        var schedule = WatchSchedule()
        XCTAssertTrue(schedule.record(failedForTheMachine, of: .changes, folderGone: true))
        XCTAssertEqual(schedule.retryAfter, WatchSession.retryInterval)
        XCTAssertEqual(schedule.kind(of: []), .retry, "it is a retry, whatever the folder")
        XCTAssertFalse(schedule.record(failedForTheMachine, of: .retry, folderGone: false), "failing as before says nothing new")
        XCTAssertEqual(schedule.retryAfter, WatchSession.retryInterval)
        XCTAssertTrue(schedule.verifiesNext, "the retry looks for every page")
        XCTAssertTrue(schedule.record(built(), of: .retry, folderGone: false), "the build that works is told")
        XCTAssertFalse(schedule.verifiesNext, "it looked, with the site quiet")
        XCTAssertNil(schedule.retryAfter)

        var line = built()
        line.cause = nil
        XCTAssertTrue(line.line.hasPrefix("tried again: built in"), line.line)
    }

    func testACheckBlockedByTheSitesOwnErrorWaitsForTheFixAndLooksOnceItIsQuietAgain() {
        var schedule = WatchSchedule()
        _ = schedule.record(built(), of: .changes, folderGone: true)
        var broken = RebuildReport(changedPaths: [])
        broken.errors = ["Templates/list.mustache:1: unclosed section"]
        XCTAssertTrue(schedule.record(broken, of: .check, folderGone: false))
        XCTAssertNil(schedule.retryAfter, "no save, no build: the same error again would be noise")
        XCTAssertTrue(schedule.verifiesNext)
        XCTAssertTrue(schedule.record(built(writing: 1), of: .changes, folderGone: false))
        XCTAssertEqual(schedule.retryAfter, WatchSession.settlingTime)
        XCTAssertEqual(schedule.kind(of: []), .check)
    }
}
