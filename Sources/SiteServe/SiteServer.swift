import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix

/// The development server of `sitegen serve`: the output folder over HTTP, with live reload, on one address.
///
/// ```swift
/// let server = try SiteServer(SiteServer.Configuration(outputDirectory: output))
/// let address = try await server.start()   // address.url: http://127.0.0.1:8000/
/// server.liveReload.reload()               // after a build that wrote files
/// await server.stop()
/// ```
///
/// Connections are Hummingbird 2's on SwiftNIO, each held to `Configuration`'s limits (docs/decisions.md, 42).
public final class SiteServer: @unchecked Sendable {
    /// The address the server listens on unless told otherwise: this machine only.
    public static let defaultHost = "127.0.0.1"
    /// The port the server listens on unless told otherwise (Hugo's is 1313; 8000 is Python's http.server's).
    public static let defaultPort: UInt16 = 8000

    /// Where the server listens and what it serves.
    public struct Configuration: Sendable {
        /// The folder served.
        public var outputDirectory: URL
        /// An IPv4 or IPv6 address to listen on (`localhost` is 127.0.0.1); `0.0.0.0` listens on every interface.
        public var host: String
        /// The port; 0 picks a free one.
        public var port: UInt16
        /// The path the site is served under: `baseURL`'s (`/blog/` for `https://example.org/blog/`), as it is published.
        public var basePath: String
        /// How often open event streams are sent a comment, which finds the connections of pages that were left.
        public var heartbeat: Duration
        /// The longest request line (method, target, version) answered; a longer one gets 414.
        public var maximumRequestLineBytes: Int
        /// The most header bytes a request may have; more get 431.
        public var maximumHeaderBytes: Int
        /// How long a request may take to arrive whole from its first byte; a slower one gets 408 and is closed.
        public var requestTimeout: Duration
        /// How long a connection with no request under way stays open.
        public var idleTimeout: Duration
        /// The most connections open at once; past it, new ones wait to be accepted until one closes.
        public var maximumConnections: Int

        /// Serves `outputDirectory` on `host`:`port`, by default 127.0.0.1:8000, under `basePath`.
        public init(outputDirectory: URL, host: String = SiteServer.defaultHost, port: UInt16 = SiteServer.defaultPort,
                    basePath: String = "/", heartbeat: Duration = .seconds(15),
                    maximumRequestLineBytes: Int = 8 << 10, maximumHeaderBytes: Int = 32 << 10,
                    requestTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60), maximumConnections: Int = 4_096) {
            self.outputDirectory = outputDirectory
            self.host = host
            self.port = port
            self.basePath = basePath
            self.heartbeat = heartbeat
            self.maximumRequestLineBytes = maximumRequestLineBytes
            self.maximumHeaderBytes = maximumHeaderBytes
            self.requestTimeout = requestTimeout
            self.idleTimeout = idleTimeout
            self.maximumConnections = maximumConnections
        }
    }

    /// Where a started server listens.
    public struct ListeningAddress: Sendable, Equatable {
        /// The address, as bound (e.g. `127.0.0.1`, `::1`).
        public var host: String
        /// The port, as bound (the one picked when 0 was asked for).
        public var port: UInt16

        /// The site's home page on this address, e.g. `http://127.0.0.1:8000/`.
        public var url: String {
            let shown = host.contains(":") ? "[\(host)]" : host
            return "http://\(shown):\(port)/"
        }
    }

    /// What this server serves and where.
    public let configuration: Configuration
    /// The hub that tells open pages to reload.
    public let liveReload = LiveReload()
    /// Told when the server stopped listening after it had started (its listening socket closed), and that it
    /// listens again; set it before `start()`.
    public var onTrouble: (@Sendable (String) -> Void)?
    private let served: BasePath
    private let handler: OutputFileHandler
    private let lock = NSLock()
    private var http: Server<SiteHTTPChannel>?
    /// The listening socket of the server running now.
    private var listener: (any Channel)?
    private var runTask: Task<Void, Never>?
    private var heartbeatTask: Task<Void, Never>?
    private var runFailure: (any Error)?
    private var stopping = false
    /// Whether the task that runs the server (and starts it again) has returned.
    private var runEnded = false

    /// Prepares a server; throws when `configuration.host` is not an address.
    public init(_ configuration: Configuration) throws {
        guard Self.isAddress(configuration.host) else { throw ServeError.invalidHost(configuration.host) }
        self.configuration = configuration
        served = BasePath(OutputPathResolver(root: configuration.outputDirectory, basePath: configuration.basePath).basePath)
        handler = OutputFileHandler(root: configuration.outputDirectory, basePath: served, liveReload: liveReload)
    }

    /// The path the site is served under now; set it when a build changed `baseURL`'s path.
    public var basePath: String {
        get { served.value }
        set { served.value = OutputPathResolver(root: configuration.outputDirectory, basePath: newValue).basePath }
    }

    /// A server on `port` (the configuration's, or the one bound first), not yet running.
    private func makeServer(port: UInt16) -> Server<SiteHTTPChannel> {
        let handler = self.handler
        let channel = SiteHTTPChannel(
            responder: { request, writer, _ in try await handler.respond(to: request, writer: writer) },
            limits: RequestLimiter.Limits(maximumLineBytes: configuration.maximumRequestLineBytes,
                                          maximumHeaderBytes: configuration.maximumHeaderBytes,
                                          timeout: .nanoseconds(Int64(configuration.requestTimeout / .nanoseconds(1)))),
            idleTimeout: configuration.idleTimeout)
        let host = configuration.host == "localhost" ? "127.0.0.1" : configuration.host
        return Server(childChannelSetup: channel,
                      configuration: ServerConfiguration(address: .hostname(host, port: Int(port)),
                                                         availableConnectionsDelegate: MaximumAvailableConnections(configuration.maximumConnections)),
                      onServerRunning: { [weak self] channel in self?.lock.withLock { self?.listener = channel } },
                      eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                      logger: Logger(label: "sitegen.serve", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// Binds the address and starts answering; returns where it listens, or throws when it cannot listen there.
    /// A server that stops listening later (its listening socket closed) says so through `onTrouble` and
    /// listens again on the same port a second later.
    public func start() async throws -> ListeningAddress {
        let first = makeServer(port: configuration.port)
        let wanted = "\(configuration.host):\(configuration.port)"
        lock.withLock { http = first }
        let task = Task {
            defer { lock.withLock { runEnded = true } }
            var server = first
            while true {
                do {
                    try await server.run()
                } catch {
                    lock.withLock { runFailure = error }
                }
                // Stopped, or never listening (start() reports that): done.
                guard let bound = lock.withLock({ stopping ? nil : boundPort }) else { return }
                let reason = lock.withLock { runFailure.map(Self.reason) } ?? "the listening socket closed"
                onTrouble?("the server stopped listening (\(reason)); listening again on port \(bound) in a second")
                try? await Task.sleep(for: .seconds(1))
                guard !Task.isCancelled else { return }
                server = makeServer(port: bound)
                lock.withLock {
                    listener = nil
                    runFailure = nil
                    http = server
                }
            }
        }
        lock.withLock { runTask = task }
        // run() never returns while it serves, and fails early when it cannot bind: wait for either.
        let deadline = ContinuousClock.now + .seconds(10)
        var listening: (any Channel)?
        while listening == nil {
            if let failure = lock.withLock({ runFailure }) {
                throw ServeError.cannotListen(address: wanted, reason: Self.reason(failure))
            }
            guard ContinuousClock.now < deadline else { throw ServeError.cannotListen(address: wanted, reason: "timed out") }
            try await Task.sleep(for: .milliseconds(10))
            listening = lock.withLock { listener }
        }
        guard let local = listening?.localAddress, let port = local.port, let ip = local.ipAddress else {
            throw ServeError.cannotListen(address: wanted, reason: "the socket has no address")
        }
        let address = ListeningAddress(host: ip, port: UInt16(port))
        let heartbeat = configuration.heartbeat, liveReload = self.liveReload
        lock.withLock {
            boundPort = address.port
            heartbeatTask = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    liveReload.ping()
                }
            }
        }
        return address
    }

    /// Closes the listening socket as a failure would, without stopping the server (for tests of `onTrouble`).
    func dropListener() async {
        try? await lock.withLock { listener }?.close()
    }

    /// The port the server listened on once started (the one picked when 0 was asked for).
    private var boundPort: UInt16?

    /// Raises this process's soft limit of open files to its hard limit, as Go's servers do: each open page
    /// holds a connection, and Debian's default soft limit is 1,024. Returns the limit now in force.
    @discardableResult
    public static func raiseOpenFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(openFilesResource, &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max == rlim_t.max ? 1 << 20 : limit.rlim_max
            if setrlimit(openFilesResource, &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? IOError { return "\(error.description)" }
        return "\(error)"
    }

    /// Ends every event stream and closes the server, giving requests under way 0.2 s to finish.
    public func stop() async {
        let (http, runTask) = lock.withLock {
            stopping = true
            heartbeatTask?.cancel()
            return (self.http, self.runTask)
        }
        liveReload.finishAll()
        Task { try? await http?.shutdownGracefully() }
        let deadline = ContinuousClock.now + .milliseconds(200)
        while runTask != nil && !lock.withLock({ runEnded }) && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        // Connections still open (a client that keeps its own open) are closed by cancelling their tasks.
        runTask?.cancel()
        await runTask?.value
    }

    /// Whether `host` is an address the server can listen on (IPv4, IPv6 or `localhost`).
    public static func isAddress(_ host: String) -> Bool {
        let host = host == "localhost" ? "127.0.0.1" : host
        var ip4 = in_addr(), ip6 = in6_addr()
        return inet_pton(AF_INET, host, &ip4) == 1 || inet_pton(AF_INET6, host, &ip6) == 1
    }
}

/// Why the development server cannot start.
public enum ServeError: Error, CustomStringConvertible, Equatable {
    /// `--host` is not an IPv4 or IPv6 address.
    case invalidHost(String)
    /// Binding the address failed (the port is taken, the address is not this machine's) or timed out.
    case cannotListen(address: String, reason: String)

    public var description: String {
        switch self {
        case .invalidHost(let host):
            return "--host '\(host)': not an IPv4 or IPv6 address; pass e.g. 127.0.0.1 (this machine) or 0.0.0.0 (every interface)"
        case .cannotListen(let address, let reason):
            return "cannot listen on \(address): \(reason)"
        }
    }
}

/// `RLIMIT_NOFILE` as `getrlimit` and `setrlimit` take it: Glibc imports it as an enum case, Darwin as a number.
public let openFilesResource: Int32 = {
    #if os(Linux)
    Int32(RLIMIT_NOFILE.rawValue)
    #else
    RLIMIT_NOFILE
    #endif
}()
