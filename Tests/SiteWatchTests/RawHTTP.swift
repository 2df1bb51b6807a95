import Foundation
import SiteServe
import XCTest

/// A bare HTTP/1.1 client over a socket, so that request lines reach the server exactly as written (URLSession
/// would resolve `..` and re-encode the path first).
final class RawHTTPConnection {
    /// One response: status, headers by lower-cased name, and body.
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    enum Failure: Error, CustomStringConvertible {
        case system(String, Int32)
        case malformed(String)
        var description: String {
            switch self {
            case .system(let call, let code): return "\(call): \(String(cString: strerror(code)))"
            case .malformed(let what): return "malformed response: \(what)"
            }
        }
    }

    private let socketDescriptor: Int32
    private var buffer = Data()

    /// Connects to `host`:`port` (IPv4), waiting at most `timeout` seconds for any read.
    init(host: String = "127.0.0.1", port: UInt16, timeout: Int = 10) throws {
        socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw Failure.system("socket", errno) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(socketDescriptor)
            throw Failure.system("connect to \(host):\(port)", code)
        }
    }

    deinit {
        close(socketDescriptor)
    }

    /// Sends `bytes` as they are.
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(socketDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure.system("send", errno) }
            sent += count
        }
    }

    /// Sends a request with `target` written as is, and reads its response.
    func request(_ target: String, method: String = "GET", keepAlive: Bool = true, headers: [String: String] = [:]) throws -> Response {
        let extra = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()
        try send(Array("\(method) \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: \(keepAlive ? "keep-alive" : "close")\r\n\(extra)\r\n".utf8))
        return try readResponse(hasBody: method != "HEAD")
    }

    /// Reads until `text` has arrived (for streams that never end); false when the socket times out or closes first.
    func read(until text: String) -> Bool {
        while !String(decoding: buffer, as: UTF8.self).contains(text) {
            guard (try? fill()) == true else { return false }
        }
        return true
    }

    /// The status line of the response (`HTTP/1.1 414 URI Too Long`), once it has arrived; nil when the socket
    /// times out or closes first.
    func statusLine() -> String? {
        guard read(until: "\r\n") else { return nil }
        return String(decoding: buffer, as: UTF8.self).components(separatedBy: "\r\n").first
    }

    /// Whether the server closes the connection (after what it sends) before the read timeout.
    func isClosedByServer() -> Bool {
        while true {
            guard let more = try? fill() else { return false }
            if !more { return true }
        }
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = recv(socketDescriptor, &chunk, chunk.count, 0)
        if count < 0 { throw Failure.system("recv", errno) }
        buffer.append(contentsOf: chunk[..<count])
        return count > 0
    }

    private func readResponse(hasBody: Bool) throws -> Response {
        let separator = Data("\r\n\r\n".utf8)
        var headerEnd = buffer.range(of: separator)
        while headerEnd == nil {
            guard try fill() else { throw Failure.malformed("closed before the headers ended (\(buffer.count) bytes)") }
            headerEnd = buffer.range(of: separator)
        }
        let head = String(decoding: buffer[..<headerEnd!.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeSubrange(..<headerEnd!.upperBound)
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed(head[0]) }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = hasBody ? Int(headers["content-length"] ?? "0") ?? 0 : 0
        while buffer.count < length {
            guard try fill() else { throw Failure.malformed("closed after \(buffer.count) of \(length) body bytes") }
        }
        let body = buffer.prefix(length)
        buffer.removeSubrange(..<length)
        return Response(status: status, headers: headers, body: Data(body))
    }
}

/// Starts `server` from a test's (non-async) thread and returns where it listens.
func startBlocking(_ server: SiteServer) throws -> SiteServer.ListeningAddress {
    try blocking { try await server.start() }
}

/// Stops `server` from a test's (non-async) thread.
func stopBlocking(_ server: SiteServer) {
    _ = try? blocking { await server.stop() }
}

/// Runs `operation` on the concurrency pool and waits for it here, so that this thread's blocking socket calls never
/// hold one of the pool's threads the server needs.
private func blocking<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) throws -> Value {
    let box = ResultBox<Value>(), done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await operation()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// Carries a result from a task to the thread waiting on a semaphore; the semaphore orders the two accesses.
private final class ResultBox<Value>: @unchecked Sendable {
    var result: Result<Value, any Error>?
}
