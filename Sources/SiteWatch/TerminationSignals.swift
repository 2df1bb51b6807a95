import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT (Ctrl-C) and SIGTERM into a call on a thread of its own, instead of the default kill, so a
/// long-running command can finish its build, close its server and exit with status 0.
///
/// A self-pipe: the signal handler only writes the signal's number into a pipe (about all a handler may safely
/// do); a thread reads it and calls the handler. Dispatch signal sources are not used because on Linux they see
/// nothing once the signal is ignored, and the default action kills the process first. Make one per process: the
/// handler stays for the life of the process.
public final class TerminationSignals: @unchecked Sendable {
    private let readEnd: Int32

    /// Calls `handler` with the signal's number each time SIGINT or SIGTERM arrives.
    public init(handler: @escaping @Sendable (Int32) -> Void) throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw WatchError.system(call: "pipe", path: nil, code: errno) }
        readEnd = ends[0]
        signalPipeWriteEnd = ends[1]
        for number in [SIGINT, SIGTERM] {
            var action = sigaction()
            let writeNumber: @convention(c) (Int32) -> Void = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(signalPipeWriteEnd, &byte, 1)
            }
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = writeNumber
            #else
            action.__sigaction_u.__sa_handler = writeNumber
            #endif
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
        let readEnd = self.readEnd
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count == 1 { handler(Int32(byte)) } else if count < 0 && errno == EINTR { continue } else { return }
            }
        }
        thread.name = "sitegen signals"
        thread.start()
    }
}

/// Where the signal handler writes; a C function pointer cannot capture it, so it is global.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1
