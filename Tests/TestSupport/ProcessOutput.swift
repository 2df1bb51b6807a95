import Foundation

/// What a finished process said: its exit status and everything it wrote to each stream.
public struct ProcessOutput: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// Runs `executable` with `arguments` in `folder` (with `environment` over this process's own) and waits
    /// for it; both streams are read while it runs, so a chatty process never blocks on a full pipe.
    public static func of(_ executable: URL, _ arguments: [String], in folder: URL, environment: [String: String] = [:]) throws -> ProcessOutput {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = folder
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // The error stream is read on another thread: read one after the other, a process that fills the
        // second pipe while the first is being read would wait forever.
        let errors = ErrorStream(err.fileHandleForReading)
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return ProcessOutput(status: process.terminationStatus, stdout: stdout, stderr: errors.text())
    }

    /// A stream read to its end on a thread of its own.
    private final class ErrorStream: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var data = Data()

        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
        }

        func text() -> String {
            done.wait()
            return String(decoding: data, as: UTF8.self)
        }
    }
}
