import Foundation
import FlyingFox
import FlyingSocks

/// The development server of `sitegen serve`: the output folder over HTTP, with live reload, on one address.
///
/// ```swift
/// let server = try SiteServer(SiteServer.Configuration(outputDirectory: output))
/// let address = try await server.start()   // address.url: http://127.0.0.1:8000/
/// server.liveReload.reload()               // after a build that wrote files
/// await server.stop()
/// ```
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

        /// Serves `outputDirectory` on `host`:`port`, by default 127.0.0.1:8000, under `basePath`.
        public init(outputDirectory: URL, host: String = SiteServer.defaultHost, port: UInt16 = SiteServer.defaultPort,
                    basePath: String = "/", heartbeat: Duration = .seconds(15)) {
            self.outputDirectory = outputDirectory
            self.host = host
            self.port = port
            self.basePath = basePath
            self.heartbeat = heartbeat
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
    /// Told when the server stopped listening after it had started (out of file descriptors, say), and that it
    /// listens again; set it before `start()`.
    public var onTrouble: (@Sendable (String) -> Void)?
    private let served: BasePath
    private let handler: OutputFileHandler
    private let lock = NSLock()
    private var http: HTTPServer
    private var runTask: Task<Void, Never>?
    private var heartbeatTask: Task<Void, Never>?
    private var runFailure: (any Error)?
    private var stopping = false

    /// Prepares a server; throws when `configuration.host` is not an address.
    public init(_ configuration: Configuration) throws {
        self.configuration = configuration
        served = BasePath(OutputPathResolver(root: configuration.outputDirectory, basePath: configuration.basePath).basePath)
        handler = OutputFileHandler(root: configuration.outputDirectory, basePath: served, liveReload: liveReload)
        http = HTTPServer(address: try Self.socketAddress(host: configuration.host, port: configuration.port),
                          timeout: 15, logger: .disabled, handler: handler)
    }

    /// The path the site is served under now; set it when a build changed `baseURL`'s path.
    public var basePath: String {
        get { served.value }
        set { served.value = OutputPathResolver(root: configuration.outputDirectory, basePath: newValue).basePath }
    }

    /// Binds the address and starts answering; returns where it listens, or throws when it cannot listen there.
    /// A server that stops listening later (its accept fails) says so through `onTrouble` and listens again on
    /// the same port a second later.
    public func start() async throws -> ListeningAddress {
        let first = lock.withLock { http }
        let wanted = "\(configuration.host):\(configuration.port)"
        let task = Task {
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
                guard !Task.isCancelled, let address = try? Self.socketAddress(host: configuration.host, port: bound) else { return }
                server = HTTPServer(address: address, timeout: 15, logger: .disabled, handler: handler)
                lock.withLock { http = server }
            }
        }
        lock.withLock { runTask = task }
        // run() never returns while it serves, and fails early when it cannot bind: wait for either.
        let deadline = ContinuousClock.now + .seconds(10)
        while await !first.isListening {
            if let failure = lock.withLock({ runFailure }) {
                throw ServeError.cannotListen(address: wanted, reason: Self.reason(failure))
            }
            guard ContinuousClock.now < deadline else { throw ServeError.cannotListen(address: wanted, reason: "timed out") }
            try await Task.sleep(for: .milliseconds(10))
        }
        let address: ListeningAddress
        switch await first.listeningAddress {
        case .ip4(let host, let port)?: address = ListeningAddress(host: host, port: port)
        case .ip6(let host, let port)?: address = ListeningAddress(host: host, port: port)
        default: throw ServeError.cannotListen(address: wanted, reason: "the socket has no address")
        }
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

    /// Closes the listening socket as a failing accept does, without stopping the server (for tests of
    /// `onTrouble`).
    func dropListener() async {
        await lock.withLock { http }.stop(timeout: 0)
    }

    /// The port the server listened on once started (the one picked when 0 was asked for).
    private var boundPort: UInt16?

    /// Raises this process's soft limit of open files to its hard limit, as Go's servers do: each open page
    /// holds a connection, and Debian's default soft limit is 1,024. Returns the limit now in force.
    @discardableResult
    public static func raiseOpenFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max == rlim_t.max ? 1 << 20 : limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? SocketError, case .failed(let call, let code, _) = error {
            return "\(call): \(String(cString: strerror(code)))"
        }
        return "\(error)"
    }

    /// Ends every event stream and closes the server, giving requests under way 0.2 s to finish.
    public func stop() async {
        let http = lock.withLock {
            stopping = true
            heartbeatTask?.cancel()
            return self.http
        }
        liveReload.finishAll()
        await http.stop(timeout: 0.2)
        lock.withLock { runTask }?.cancel()
    }

    /// Whether `host` is an address the server can listen on (IPv4, IPv6 or `localhost`).
    public static func isAddress(_ host: String) -> Bool {
        (try? socketAddress(host: host, port: 0)) != nil
    }

    private static func socketAddress(host: String, port: UInt16) throws -> any SocketAddress {
        let host = host == "localhost" ? "127.0.0.1" : host
        if let address = try? sockaddr_in.inet(ip4: host, port: port) { return address }
        if let address = try? sockaddr_in6.inet6(ip6: host, port: port) { return address }
        throw ServeError.invalidHost(host)
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
