import Foundation

/// The pipe that wakes a blocked `poll` from another thread (or a signal handler) so a watch can stop.
final class WakePipe {
    let readEnd: Int32
    let writeEnd: Int32

    init() throws {
        var ends: [Int32] = [0, 0]
        // pipe2 is not in Swift's Glibc module; the flags are set one end at a time instead.
        guard pipe(&ends) == 0 else { throw WatchError.system(call: "pipe", path: nil, code: errno) }
        readEnd = ends[0]
        writeEnd = ends[1]
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }
}

/// Waits until any of `descriptors` is readable, or `milliseconds` pass (-1: no limit); returns which were
/// readable, in their order.
func waitForInput(_ descriptors: [Int32], milliseconds: Int32) throws -> [Bool] {
    var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    while true {
        let ready = poll(&polled, nfds_t(polled.count), milliseconds)
        if ready < 0 {
            if errno == EINTR { continue }
            throw WatchError.system(call: "poll", path: nil, code: errno)
        }
        return polled.map { $0.revents != 0 }
    }
}
