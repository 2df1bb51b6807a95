import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import NIOHTTP1

/// Fetches remote sources over HTTP(S) with async-http-client: conditional GETs, gzip and deflate,
/// redirects followed by hand (to report permanent ones and stop loops), a time limit for the connection
/// and one for the whole fetch, a size cap, and at most `requestsPerHost` requests to one host at a time.
///
/// ```swift
/// let responses = RemoteFetcher(settings: FetchSettings()).fetchWaiting([RemoteRequest(url: "https://example.org/feed.xml")])
/// ```
public struct RemoteFetcher: Sendable {
    public let settings: FetchSettings

    /// A fetcher with these limits.
    public init(settings: FetchSettings) {
        self.settings = settings
    }

    /// Fetches every request, hosts side by side, and returns one response per request, in their order.
    /// Never throws: a request that fails has a `.failed` outcome with its reason.
    public func fetch(_ requests: [RemoteRequest], progress: (@Sendable (FetchProgress) -> Void)? = nil) async -> [RemoteResponse] {
        guard !requests.isEmpty else { return [] }
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
        let counter = FinishedCounter(total: requests.count, progress: progress)
        // Grouped by host, in the order first named: each host's queue runs `requestsPerHost` workers.
        var hosts: [String: [Int]] = [:], hostOrder: [String] = []
        for (index, request) in requests.enumerated() {
            let host = Self.hostKey(request.url)
            if hosts[host] == nil { hostOrder.append(host) }
            hosts[host, default: []].append(index)
        }
        var responses = [RemoteResponse?](repeating: nil, count: requests.count)
        await withTaskGroup(of: [(Int, RemoteResponse)].self) { group in
            var next = 0
            func startHost() {
                let indexes = hosts[hostOrder[next]]!
                next += 1
                group.addTask { await fetchHost(indexes.map { ($0, requests[$0]) }, client: client, counter: counter) }
            }
            while next < hostOrder.count && next < max(1, settings.hostsAtOnce) { startHost() }
            for await finished in group {
                for (index, response) in finished { responses[index] = response }
                if next < hostOrder.count { startHost() }
            }
        }
        try? await client.shutdown()
        return responses.enumerated().map { $1 ?? RemoteResponse(url: requests[$0].url, outcome: .failed("not fetched")) }
    }

    /// `fetch` for synchronous callers (a build): waits on this thread, which must not be one of Swift
    /// concurrency's own, while the fetches run on others.
    public func fetchWaiting(_ requests: [RemoteRequest], progress: (@Sendable (FetchProgress) -> Void)? = nil) -> [RemoteResponse] {
        let box = ResponseBox(), done = DispatchSemaphore(value: 0)
        Task.detached {
            box.responses = await fetch(requests, progress: progress)
            done.signal()
        }
        done.wait()
        return box.responses
    }

    private var clientConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Self.nanoseconds(settings.connectTimeout))),
            connectionPool: .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, settings.requestsPerHost)),
            decompression: .enabled(limit: .ratio(200)))
        configuration.httpVersion = .http1Only
        return configuration
    }

    /// One host's requests, `requestsPerHost` at a time.
    private func fetchHost(_ work: [(Int, RemoteRequest)], client: HTTPClient, counter: FinishedCounter) async -> [(Int, RemoteResponse)] {
        let queue = WorkQueue(work)
        return await withTaskGroup(of: [(Int, RemoteResponse)].self) { group in
            for _ in 0..<min(max(1, settings.requestsPerHost), work.count) {
                group.addTask {
                    var done: [(Int, RemoteResponse)] = []
                    while let (index, request) = await queue.next() {
                        let response = await fetchWithinTime(request, client: client)
                        done.append((index, response))
                        counter.finished(request.url)
                    }
                    return done
                }
            }
            var all: [(Int, RemoteResponse)] = []
            for await done in group { all += done }
            return all
        }
    }

    /// One fetch, failed when it takes longer than `wholeTimeout` (the client's deadline covers the head;
    /// a server that trickles its body is stopped here).
    private func fetchWithinTime(_ request: RemoteRequest, client: HTTPClient) async -> RemoteResponse {
        let limit = settings.wholeTimeout
        return await withTaskGroup(of: RemoteResponse?.self) { group in
            group.addTask { await fetchFollowingRedirects(request, client: client) }
            group.addTask {
                try? await Task.sleep(for: limit)
                return Task.isCancelled ? nil
                    : RemoteResponse(url: request.url, outcome: .failed("no complete answer within \(Self.seconds(limit)) (timeout)"))
            }
            let first = await group.next()!
            group.cancelAll()
            return first ?? RemoteResponse(url: request.url, outcome: .failed("cancelled"))
        }
    }

    /// GETs `request.url`, following up to `maximumRedirects` redirects.
    private func fetchFollowingRedirects(_ request: RemoteRequest, client: HTTPClient) async -> RemoteResponse {
        var url = request.url, visited: Set<String> = [url], movedTo: String?, permanentSoFar = true
        let deadline = NIODeadline.now() + .nanoseconds(Self.nanoseconds(settings.wholeTimeout))
        do {
            for _ in 0...settings.maximumRedirects {
                let response = try await client.execute(httpRequest(url, validators: request), deadline: deadline)
                let status = Int(response.status.code)
                switch status {
                case 301, 302, 303, 307, 308:
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    guard let location = response.headers.first(name: "location"),
                          let next = URL(string: location, relativeTo: URL(string: url))?.absoluteURL.absoluteString else {
                        return RemoteResponse(url: request.url, outcome: .failed("HTTP \(status) without a Location"), status: status)
                    }
                    permanentSoFar = permanentSoFar && (status == 301 || status == 308)
                    if permanentSoFar { movedTo = next }
                    guard visited.insert(next).inserted else {
                        return RemoteResponse(url: request.url, outcome: .failed("redirect loop (\(url) → \(next))"), status: status)
                    }
                    url = next
                case 304:
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    return RemoteResponse(url: request.url, outcome: .notModified, status: status, movedPermanentlyTo: movedTo)
                case 200..<300:
                    return try await body(of: response, for: request, status: status, movedTo: movedTo)
                default:
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    let reason = response.status.reasonPhrase
                    return RemoteResponse(url: request.url, outcome: .failed("HTTP \(status)" + (reason.isEmpty ? "" : " \(reason)")), status: status,
                                          movedPermanentlyTo: movedTo)
                }
            }
            return RemoteResponse(url: request.url, outcome: .failed("more than \(settings.maximumRedirects) redirects"))
        } catch {
            return RemoteResponse(url: request.url, outcome: .failed(Self.describe(error, settings: settings)), movedPermanentlyTo: movedTo)
        }
    }

    /// The body of a 2xx answer, up to the size cap.
    private func body(of response: HTTPClientResponse, for request: RemoteRequest, status: Int, movedTo: String?) async throws -> RemoteResponse {
        let cap = settings.maximumBytes
        // A declared length past the cap is refused before a byte of the body is read.
        if let declared = response.headers.first(name: "content-length").flatMap(Int.init), declared > cap,
           response.headers.first(name: "content-encoding") == nil {
            return RemoteResponse(url: request.url, outcome: .failed("the body is \(declared) bytes, more than the cap of \(cap)"), status: status)
        }
        let buffer: ByteBuffer
        do {
            buffer = try await response.body.collect(upTo: cap)
        } catch is NIOTooManyBytesError {
            return RemoteResponse(url: request.url, outcome: .failed("the body is more than the cap of \(cap) bytes"), status: status)
        }
        return RemoteResponse(url: request.url, outcome: .fetched(body: Array(buffer.readableBytesView), etag: response.headers.first(name: "etag"),
                                                                   lastModified: response.headers.first(name: "last-modified")),
                              status: status, movedPermanentlyTo: movedTo)
    }

    private func httpRequest(_ url: String, validators: RemoteRequest) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: settings.userAgent)
        request.headers.add(name: "Accept-Encoding", value: "gzip, deflate")
        request.headers.add(name: "Accept", value: "application/atom+xml, application/rss+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8")
        if let etag = validators.etag { request.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified = validators.lastModified { request.headers.add(name: "If-Modified-Since", value: lastModified) }
        return request
    }

    /// The host and port a URL reaches, which the per-host limit counts by.
    static func hostKey(_ url: String) -> String {
        guard let components = URLComponents(string: url) else { return url }
        return (components.host ?? "").lowercased() + ":" + String(components.port ?? (components.scheme == "http" ? 80 : 443))
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    static func seconds(_ duration: Duration) -> String {
        let value = Double(nanoseconds(duration)) / 1e9
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// Hands out a host's requests to its workers one at a time.
private actor WorkQueue {
    private var items: [(Int, RemoteRequest)]
    private var position = 0

    init(_ items: [(Int, RemoteRequest)]) { self.items = items }

    func next() -> (Int, RemoteRequest)? {
        guard position < items.count else { return nil }
        defer { position += 1 }
        return items[position]
    }
}

/// Counts finished fetches and tells the progress callback.
private final class FinishedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    let total: Int
    let progress: (@Sendable (FetchProgress) -> Void)?

    init(total: Int, progress: (@Sendable (FetchProgress) -> Void)?) {
        self.total = total
        self.progress = progress
    }

    func finished(_ url: String) {
        let count = lock.withLock { self.count += 1; return self.count }
        progress?(FetchProgress(finished: count, total: total, url: url))
    }
}

/// Carries the responses out of the detached task `fetchWaiting` waits on (written before the semaphore
/// is signalled, read after it).
private final class ResponseBox: @unchecked Sendable {
    var responses: [RemoteResponse] = []
}
