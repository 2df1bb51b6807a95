import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a first pass over a feed file's bytes tells before it is parsed: how it starts (JSON or XML, the
/// declared encoding) and whether it is valid UTF-8, which decide whether it can be parsed as a stream.
public struct FeedPrescan: Sendable {
    private var head: [UInt8] = []
    private var validator = UTF8Validator()

    /// Starts a pass.
    public init() {}

    /// Looks at the next bytes of the file.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        if head.count < 256 { head += chunk.prefix(256 - head.count) }
        validator.feed(chunk)
    }

    /// Whether the document is JSON (a JSON Feed), which is always read a chunk at a time.
    public var isJSON: Bool {
        Data(head).first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) } == UInt8(ascii: "{")
    }

    /// Whether the document can be parsed as it is read: XML in UTF-8, valid throughout. Other documents
    /// (JSON Feed, UTF-16, Windows-1252 and its kin, broken UTF-8) are decoded whole first.
    public var allowsStreaming: Bool {
        var validator = validator
        validator.finish()
        let data = Data(head)
        let firstByte = data.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        guard firstByte == UInt8(ascii: "<"), !data.starts(with: [0xFF, 0xFE]), !data.starts(with: [0xFE, 0xFF]) else { return false }
        if let declared = XMLEncoding.declaredEncoding(data), !["utf-8", "utf8"].contains(declared) { return false }
        return validator.firstInvalid == nil
    }
}

/// Checks that bytes are UTF-8, a chunk at a time, and says where they first are not.
struct UTF8Validator: Sendable {
    /// The 1-based line and column of the first byte sequence that is not UTF-8.
    private(set) var firstInvalid: (line: Int, column: Int)?
    private var line = 1, column = 1
    private var needed = 0, lead: UInt8 = 0, seen = 0

    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard firstInvalid == nil else { return }
        for byte in bytes {
            if needed == 0 {
                switch byte {
                case 0x0A: line += 1; column = 1
                case 0x00...0x7F: column += 1
                case 0xC2...0xDF: needed = 1
                case 0xE0...0xEF: needed = 2
                case 0xF0...0xF4: needed = 3
                default: firstInvalid = (line, column); return
                }
                lead = byte
                seen = 0
                continue
            }
            var valid = byte & 0xC0 == 0x80
            if seen == 0 {
                // Overlong forms (E0 80–9F, F0 80–8F), UTF-16 surrogates (ED A0–BF) and code points past U+10FFFF.
                if (lead == 0xE0 && byte < 0xA0) || (lead == 0xED && byte > 0x9F) || (lead == 0xF0 && byte < 0x90)
                    || (lead == 0xF4 && byte > 0x8F) { valid = false }
            }
            guard valid else { firstInvalid = (line, column); return }
            seen += 1
            needed -= 1
            if needed == 0 { column += 1 }
        }
    }

    /// Ends the bytes: a sequence cut short is not UTF-8.
    mutating func finish() {
        if needed > 0, firstInvalid == nil { firstInvalid = (line, column) }
        needed = 0
    }
}

/// A feed file as the XML parser pulls it: read a chunk at a time and cleaned (`XMLCleaner`) on the way.
final class CleanedFeedStream: InputStream {
    private let descriptor: Int32
    private var cleaner = XMLCleaner()
    private var buffer: [UInt8] = []
    private var position = 0
    private var ended = false
    private var isFirstChunk = true
    /// Set when the reader of the items has stopped: the stream then ends at once.
    var stopped = false
    /// What a reader of `file` should know of the cleaning (`XMLCleaner.warnings(file:)`).
    func cleaningWarnings(file: String) -> [SourceError] { cleaner.warnings(file: file) }
    /// What to say of an undeclared entity at `line` (`XMLCleaner.undeclaredEntityReason(atLine:)`).
    func undeclaredEntityReason(atLine line: Int) -> String? { cleaner.undeclaredEntityReason(atLine: line) }

    init?(file url: URL) {
        descriptor = CLibrary.open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        super.init(data: Data())
    }

    deinit { _ = CLibrary.close(descriptor) }

    override func open() {}
    override func close() {}
    override var hasBytesAvailable: Bool { !stopped && (position < buffer.count || !ended) }

    override func read(_ destination: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        while !stopped, position == buffer.count, !ended { refill() }
        guard !stopped, position < buffer.count else { return 0 }
        let count = min(maxLength, buffer.count - position)
        buffer.withUnsafeBufferPointer { source in
            destination.update(from: source.baseAddress! + position, count: count)
        }
        position += count
        return count
    }

    private func refill() {
        buffer.removeAll(keepingCapacity: true)
        position = 0
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: SourceInput.chunkSize, alignment: 16)
        defer { chunk.deallocate() }
        var count: Int
        repeat { count = CLibrary.read(descriptor, chunk.baseAddress, SourceInput.chunkSize) } while count < 0 && errno == EINTR
        if count <= 0 {
            // The end (or an unreadable rest, which the parser reports as a document cut short).
            ended = true
            cleaner.finish(into: &buffer)
        } else {
            // The document type, if any, is in the first chunk: its entities are known before any reference.
            if isFirstChunk { cleaner.declare(from: UnsafeRawBufferPointer(rebasing: chunk[0..<count])) }
            isFirstChunk = false
            cleaner.feed(UnsafeRawBufferPointer(rebasing: chunk[0..<count]), into: &buffer)
        }
    }
}

/// The C library's `open`, `read` and `close`, called by a name that InputStream's methods of the same names
/// do not hide: Glibc's on Linux, Darwin's on macOS.
private enum CLibrary {
    static func open(_ path: String, _ flags: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, flags)
        #else
        Darwin.open(path, flags)
        #endif
    }

    static func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer, count)
        #else
        Darwin.read(descriptor, buffer, count)
        #endif
    }

    static func close(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(descriptor)
        #else
        Darwin.close(descriptor)
        #endif
    }
}
