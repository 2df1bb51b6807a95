import Foundation
import XCTest

/// The built `sitegen` executable running in the background, its output collected as it comes.
final class RunningSitegen: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var stdoutText = ""
    private var stderrText = ""

    /// The products folder of the test build holds `sitegen` (the bundle itself on Linux, its parent on macOS).
    static var executable: URL {
        let bundle = Bundle(for: RunningSitegen.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("sitegen") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    init(_ arguments: [String], in folder: URL) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        out.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            self?.lock.withLock { self?.stdoutText += text }
        }
        err.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            self?.lock.withLock { self?.stderrText += text }
        }
        try process.run()
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Runs `sitegen build` on `site` to its end, as another terminal would; returns its exit status.
    static func build(_ site: URL) throws -> Int32 {
        let build = Process()
        build.executableURL = executable
        build.arguments = ["build", "--site", site.path]
        build.standardOutput = FileHandle.nullDevice
        try build.run()
        build.waitUntilExit()
        return build.terminationStatus
    }

    var stdout: String { lock.withLock { stdoutText } }
    var stderr: String { lock.withLock { stderrText } }

    /// Waits until standard output (or error) holds `text` `count` times; false after `timeout` seconds.
    func waitFor(_ text: String, count: Int = 1, inStandardError: Bool = false, timeout: Double = 60) -> Bool {
        poll(timeout: timeout) { (inStandardError ? self.stderr : self.stdout).components(separatedBy: text).count - 1 >= count }
    }

    /// Sends `signal` and waits for the exit; returns the status, or nil when it is still running after `timeout`.
    func stop(with signal: Int32 = SIGINT, timeout: Double = 5) -> Int32? {
        kill(process.processIdentifier, signal)
        guard poll(timeout: timeout, { !self.process.isRunning }) else { return nil }
        return process.terminationStatus
    }
}

/// Checks `condition` every 10 ms until it holds (true) or `timeout` seconds pass (false).
func poll(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

/// Temporary copies of the bundled example site, removed when the test ends.
enum ExampleSite {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func copy(for test: XCTestCase) throws -> URL {
        let site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: site) }
        for item in ["sitegen.yml", "content", "Templates"] {
            try FileManager.default.copyItem(at: repository.appendingPathComponent(item), to: site.appendingPathComponent(item))
        }
        return site
    }
}

extension URL {
    /// The file's text, or "" when it cannot be read (not there yet).
    var text: String { (try? String(contentsOf: self, encoding: .utf8)) ?? "" }

    /// Replaces `old` by `new` in the file, writing it in place as an editor without save-by-rename does.
    func replace(_ old: String, with new: String) throws {
        let contents = text
        XCTAssertTrue(contents.contains(old), "\(path) does not contain \(old)")
        try Data(contents.replacingOccurrences(of: old, with: new).utf8).write(to: self)
    }
}
