#if os(Linux)
import Glibc

/// One event read from inotify: the watch it came from, what happened, and the name inside the watched folder.
struct InotifyEvent: Equatable {
    var watch: Int32
    var mask: UInt32
    var name: String

    func has(_ flag: Int32) -> Bool { mask & UInt32(bitPattern: flag) != 0 }
}

/// The inotify instance: the only place sitegen talks to the kernel's file-change API.
///
/// The descriptor is non-blocking; `InotifyWatcher` polls it together with its stop pipe.
final class Inotify {
    let descriptor: Int32

    init() throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw WatchError.system(call: "inotify_init1", path: nil, code: errno) }
    }

    deinit {
        close(descriptor)
    }

    /// Watches `path` (never following a symbolic link); returns the watch, the same one when it is already watched.
    func addWatch(_ path: String, mask: Int32) throws -> Int32 {
        let watch = inotify_add_watch(descriptor, path, UInt32(bitPattern: mask | Int32(IN_DONT_FOLLOW)))
        guard watch >= 0 else { throw WatchError.system(call: "inotify_add_watch", path: path, code: errno) }
        return watch
    }

    func removeWatch(_ watch: Int32) {
        // EINVAL means the kernel already dropped it (its folder was deleted): nothing to undo.
        _ = inotify_rm_watch(descriptor, watch)
    }

    /// Every event queued now; an empty array when there is none.
    func readEvents() throws -> [InotifyEvent] {
        // Large enough for many events per read; one event is at most header + NAME_MAX + 1 bytes.
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        var events: [InotifyEvent] = []
        while true {
            let count = read(descriptor, buffer, capacity)
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return events }
                throw WatchError.system(call: "read (inotify)", path: nil, code: errno)
            }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let header = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameLength = Int(header.len)
                var name = ""
                if nameLength > 0 {
                    // The kernel pads the name with NULs to keep the next header aligned.
                    let bytes = UnsafeRawBufferPointer(start: buffer + offset + headerSize, count: nameLength)
                    name = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
                events.append(InotifyEvent(watch: header.wd, mask: header.mask, name: name))
                offset += headerSize + nameLength
            }
        }
    }
}
#endif
