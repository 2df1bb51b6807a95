import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A source file's bytes, read a chunk at a time so a reader's memory does not grow with the file,
/// and hashed as they go by (the hash the store keeps to know, next time, whether the file changed).
///
/// ```swift
/// var input = try SourceInput(contentsOf: url, displayName: "records.ndjson")
/// try input.forEachLine { line, number in … }
/// let fingerprint = input.hash.signed
/// ```
public struct SourceInput: ~Copyable {
    private enum Storage {
        case memory(Data)
        case file(Int32)
    }

    /// How much is read from a file at a time.
    public static let chunkSize = 1 << 20

    private let storage: Storage
    private var consumed = false
    /// The file as messages name it.
    public let displayName: String
    /// The hash of every byte read so far (all of them once a reader has finished).
    public private(set) var hash = ContentHash()
    /// How many bytes have been read.
    public private(set) var bytesRead: Int64 = 0
    /// Called with `bytesRead` after each chunk is read from the file (for a progress display).
    public var onChunkRead: ((Int64) -> Void)?

    /// Reads the file at `url` in chunks; a file that cannot be opened is a `SourceError` naming it.
    public init(contentsOf url: URL, displayName: String) throws(SourceError) {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw SourceError(file: displayName, reason: "cannot be read: \(String(cString: strerror(errno)))")
        }
        storage = .file(descriptor)
        self.displayName = displayName
    }

    /// Reads bytes already in memory (a file read whole, a test's text).
    public init(data: Data, displayName: String) {
        storage = .memory(data)
        self.displayName = displayName
    }

    /// The size of the bytes to read, when known (a file's, as it is now; the data's).
    public var size: Int64? {
        switch storage {
        case .memory(let data):
            return Int64(data.count)
        case .file(let descriptor):
            var status = stat()
            return fstat(descriptor, &status) == 0 ? Int64(status.st_size) : nil
        }
    }

    /// The bytes, when they are already in memory rather than in a file to stream.
    public var dataInMemory: Data? {
        if case .memory(let data) = storage { return data }
        return nil
    }

    /// The first bytes (up to 64), read without moving through the file: what its encoding is seen by.
    public var head: [UInt8] {
        switch storage {
        case .memory(let data):
            return Array(data.prefix(64))
        case .file(let descriptor):
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 64, 0) }
            return Array(bytes.prefix(max(0, count)))
        }
    }

    deinit {
        if case .file(let descriptor) = storage { close(descriptor) }
    }

    /// Hands every chunk, in order, to `body`. The input can be read once.
    public mutating func forEachChunk<E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
        precondition(!consumed, "a SourceInput is read once")
        consumed = true
        switch storage {
        case .memory(let data):
            // withUnsafeBytes rethrows untyped errors; the typed one is carried out by hand.
            var failure: E?
            data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                hash.combine(bytes: bytes)
                bytesRead += Int64(bytes.count)
                do throws(E) { try body(bytes) } catch { failure = error }
            }
            if let failure { throw failure }
        case .file(let descriptor):
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let count = read(descriptor, buffer.baseAddress, Self.chunkSize)
                if count < 0 {
                    if errno == EINTR { continue }
                    // An I/O error mid-file: what was read so far must not pass for the whole file.
                    hash.combine(String(cString: strerror(errno)))
                    return
                }
                if count == 0 { return }
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                hash.combine(bytes: chunk)
                bytesRead += Int64(count)
                onChunkRead?(bytesRead)
                try body(chunk)
            }
        }
    }

    /// Every byte, for readers that need the whole document (feeds, Markdown, a JSON array).
    public mutating func readAll() -> Data {
        if case .memory(let data) = storage {
            forEachChunk { _ in }
            return data
        }
        var data = Data()
        forEachChunk { data.append(contentsOf: $0) }
        return data
    }

    /// Hands each line (without its `\n`) and its 1-based number to `body`; a last line without a
    /// newline counts too. Lines may span chunks; only the longest line is ever held whole.
    public mutating func forEachLine<E: Error>(_ body: (UnsafeRawBufferPointer, Int) throws(E) -> Void) throws(E) {
        var carried: [UInt8] = []
        var number = 0
        var pendingLine = false
        try forEachChunk { (chunk: UnsafeRawBufferPointer) throws(E) in
            var start = 0
            pendingLine = true
            while start < chunk.count {
                let remaining = chunk.count - start
                guard let found = memchr(chunk.baseAddress! + start, 0x0A, remaining) else {
                    carried.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start...]))
                    return
                }
                let end = chunk.baseAddress!.distance(to: UnsafeRawPointer(found))
                number += 1
                if carried.isEmpty {
                    try body(UnsafeRawBufferPointer(rebasing: chunk[start..<end]), number)
                } else {
                    carried.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<end]))
                    try withTypedBytes(of: carried) { (line: UnsafeRawBufferPointer) throws(E) in try body(line, number) }
                    carried.removeAll(keepingCapacity: false)
                }
                start = end + 1
                pendingLine = start < chunk.count
            }
        }
        if pendingLine || !carried.isEmpty {
            number += 1
            try withTypedBytes(of: carried) { (line: UnsafeRawBufferPointer) throws(E) in try body(line, number) }
        }
    }

}

/// `bytes.withUnsafeBytes(body)` for a body with a typed error (the standard one rethrows `any Error`).
func withTypedBytes<E: Error>(of bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
    var failure: E?
    bytes.withUnsafeBytes { buffer in
        do throws(E) { try body(buffer) } catch { failure = error }
    }
    if let failure { throw failure }
}
