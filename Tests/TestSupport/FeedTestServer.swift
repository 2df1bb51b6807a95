import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 server on 127.0.0.1 for the remote-source tests, started and stopped by each test.
///
/// Each path answers as its `Route` says, written as raw bytes so that a test can send what a broken
/// server sends (a body shorter than its length, a close mid-body, no answer at all). It records every
/// request and the most requests it had in flight at once.
public final class FeedTestServer: @unchecked Sendable {
    /// How a path answers.
    public enum Route: Sendable {
        /// A 200 with `body`, its `ETag` (answered 304 when asked with it), optionally gzip-encoded, after
        /// `delay` milliseconds.
        case document(body: [UInt8], etag: String?, gzip: Bool = false, delay: Int = 0)
        /// Only a status line and an empty body.
        case status(Int)
        /// A redirect to `location` (relative or absolute).
        case redirect(to: String, status: Int)
        /// A 200 that declares `declared` bytes, sends `sent` and closes the connection.
        case truncated(declared: Int, sent: [UInt8])
        /// Accepts the request and never answers.
        case hang
    }

    /// One request as received.
    public struct Request: Sendable {
        public var path: String
        public var headers: [(String, String)]

        /// The value of header `name` (any case), if sent.
        public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private let state = NIOLockedValueBox(State())
    /// The port it listens on.
    public private(set) var port = 0

    private struct State {
        var routes: [String: Route] = [:]
        var requests: [Request] = []
        var inFlight = 0
        var mostInFlight = 0
    }

    /// Starts listening on a free port of 127.0.0.1.
    public init() throws {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                    try channel.pipeline.syncOperations.addHandler(Handler(server: self))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel?.localAddress?.port ?? 0
    }

    /// Stops listening and closes every connection.
    public func stop() {
        try? channel?.close().wait()
        channel = nil
        try? group.syncShutdownGracefully()
    }

    /// The URL of `path` on this server.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Sets how `path` answers.
    public func route(_ path: String, _ route: Route) { state.withLockedValue { $0.routes[path] = route } }

    /// Every request received so far, in order.
    public var requests: [Request] { state.withLockedValue { $0.requests } }

    /// The most requests that were being answered at one time.
    public var mostInFlight: Int { state.withLockedValue { $0.mostInFlight } }

    fileprivate func begin(_ request: Request) -> Route? {
        state.withLockedValue {
            $0.requests.append(request)
            $0.inFlight += 1
            $0.mostInFlight = max($0.mostInFlight, $0.inFlight)
            return $0.routes[request.path]
        }
    }

    fileprivate func end() { state.withLockedValue { $0.inFlight -= 1 } }

    /// `bytes` compressed by gzip(1), which every Debian system has.
    public static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-n"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(bytes))
        try input.fileHandleForWriting.close()
        let compressed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](compressed)
    }
}

/// Answers one connection's requests as the server's routes say.
private final class Handler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    let server: FeedTestServer
    private var head: HTTPRequestHead?

    init(server: FeedTestServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            let request = FeedTestServer.Request(path: head.uri, headers: head.headers.map { ($0.name, $0.value) })
            answer(request, route: server.begin(request), context: context)
        }
    }

    private func answer(_ request: FeedTestServer.Request, route: FeedTestServer.Route?, context: ChannelHandlerContext) {
        let loop = context.eventLoop, boundContext = NIOLoopBound(context, eventLoop: loop)
        func send(_ status: Int, _ headers: [(String, String)], _ body: [UInt8], close: Bool = false) {
            let context = boundContext.value
            var text = "HTTP/1.1 \(status) \(HTTPResponseStatus(statusCode: status).reasonPhrase)\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            if !headers.contains(where: { $0.0 == "Content-Length" }) { text += "Content-Length: \(body.count)\r\n" }
            text += "\r\n"
            var buffer = context.channel.allocator.buffer(capacity: text.utf8.count + body.count)
            buffer.writeString(text)
            buffer.writeBytes(body)
            server.end()
            context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in if close { boundContext.value.close(promise: nil) } }
        }
        switch route {
        case nil: send(404, [], Array("not found".utf8))
        case .status(let status): send(status, [], [])
        case .redirect(let location, let status): send(status, [("Location", location)], [])
        case .truncated(let declared, let sent): send(200, [("Content-Length", "\(declared)")], sent, close: true)
        case .hang: break
        case .document(let body, let etag, let gzip, let delay):
            loop.scheduleTask(in: .milliseconds(Int64(delay))) {
                if let etag, request.header("If-None-Match") == etag {
                    send(304, [("ETag", etag)], [])
                    return
                }
                var headers: [(String, String)] = [("Content-Type", "application/rss+xml")]
                if let etag { headers.append(("ETag", etag)) }
                let accepts = request.header("Accept-Encoding")?.contains("gzip") == true
                if gzip && accepts, let compressed = try? FeedTestServer.gzip(body) {
                    headers.append(("Content-Encoding", "gzip"))
                    send(200, headers, compressed)
                } else {
                    send(200, headers, body)
                }
            }
        }
    }
}
