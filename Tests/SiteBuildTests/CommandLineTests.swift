import Foundation
import XCTest

/// Runs the built `sitegen` executable as a user would.
final class CommandLineTests: XCTestCase {
    private var executable: URL {
        // The products folder of the same build: the bundle itself on Linux, its parent on macOS.
        let bundle = Bundle(for: Self.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("sitegen") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    private func run(_ arguments: [String], in folder: URL) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stdout, stderr)
    }

    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return folder
    }

    func testHelpDescribesTheBuildCommand() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: executable.path), "sitegen was not built at \(executable.path)")
        let result = try run(["build", "--help"], in: try temporaryFolder())
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.stdout.contains("USAGE: sitegen build [--site <folder>] [--output <folder>]"), result.stdout)
    }

    func testAMissingConfigurationFailsNamingTheFile() throws {
        let result = try run(["build"], in: try temporaryFolder())
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.hasPrefix("error: sitegen.yml: not found"), result.stderr)
    }

    func testAnInvalidConfigurationFailsNamingTheLine() throws {
        let folder = try temporaryFolder()
        try "title: x\ncollections:\n  a:\n    kind: spreadsheet\n".write(to: folder.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        let result = try run(["build"], in: folder)
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "error: sitegen.yml:4:11: unknown kind 'spreadsheet'; expected one of: csv, json, ndjson, feed, markdown\n")
    }
}
