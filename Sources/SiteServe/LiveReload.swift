import Foundation
import HTTPTypes
import HummingbirdCore
import NIOCore

/// Tells every open page of the site that a build wrote files, over a server-sent-events stream, so it reloads;
/// and that a build failed, so it shows the errors over the page until a build succeeds.
///
/// Pages learn of the stream from `script`, which the server injects into every HTML response.
public final class LiveReload: @unchecked Sendable {
    /// The path of the event stream.
    public static let eventsPath = "/_sitegen/live"
    /// The id of the element that shows a failed build's errors over the page.
    public static let failureID = "sitegen-failure"
    /// The script injected before `</body>`: it reloads the page on `reload` events, shows a failed build's
    /// errors (`failure` events, a JSON array of `file:line:column: message` lines) over the page, and takes
    /// them away on `fixed`.
    public static let script = """
        <script>/* sitegen serve: live reload */(function(){if(!window.EventSource)return;\
        var s=new EventSource("\(eventsPath)");s.addEventListener("reload",function(){s.close();location.reload();});\
        s.addEventListener("failure",function(e){var o=document.getElementById("\(failureID)");if(!o){\
        o=document.createElement("div");o.id="\(failureID)";o.setAttribute("role","alert");o.style.cssText=\
        "position:fixed;top:0;left:0;right:0;z-index:2147483647;max-height:80vh;overflow:auto;margin:0;padding:1rem 1.25rem;\
        background:#7f1d1d;color:#fff;font:14px/1.5 ui-monospace,monospace;white-space:pre-wrap;box-shadow:0 2px 12px #0006";\
        document.body.appendChild(o);}o.textContent="sitegen: the last build failed\\n\\n"+JSON.parse(e.data).join("\\n");});\
        s.addEventListener("fixed",function(){var o=document.getElementById("\(failureID)");if(o)o.remove();});})();</script>
        """

    private let lock = NSLock()
    private var listeners: [Int: AsyncStream<[UInt8]>.Continuation] = [:]
    private var nextListener = 0
    private var reloads = 0
    /// The `failure` event of the last build, while it has not been fixed: a page opened meanwhile shows it too.
    private var failure: [UInt8]?

    /// An empty hub: no page listens yet.
    public init() {}

    /// How many event streams are open.
    public var listenerCount: Int { lock.withLock { listeners.count } }

    /// Sends a `reload` event to every open stream.
    public func reload() {
        let continuations = lock.withLock {
            reloads += 1
            return (reloads, Array(listeners.values))
        }
        let event = Array("event: reload\ndata: \(continuations.0)\n\n".utf8)
        for continuation in continuations.1 { continuation.yield(event) }
    }

    /// Shows a failed build's `errors` (each `file:line:column: message`) over every open page, and over the
    /// pages opened until `clearFailure()`.
    public func showFailure(_ errors: [String]) {
        // One line of JSON: a server-sent event's data ends at a line break.
        let json = (try? JSONSerialization.data(withJSONObject: errors, options: [.withoutEscapingSlashes])).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        let event = Array("event: failure\ndata: \(json)\n\n".utf8)
        let continuations = lock.withLock {
            failure = event
            return Array(listeners.values)
        }
        for continuation in continuations { continuation.yield(event) }
    }

    /// Takes a failed build's errors off every open page: a build succeeded. Nothing is sent when none failed.
    public func clearFailure() {
        let continuations: [AsyncStream<[UInt8]>.Continuation]? = lock.withLock {
            guard failure != nil else { return nil }
            failure = nil
            return Array(listeners.values)
        }
        let event = Array("event: fixed\ndata: \n\n".utf8)
        for continuation in continuations ?? [] { continuation.yield(event) }
    }

    /// Sends a comment to every open stream. A page that was left keeps its connection open until something is
    /// written to it; without this, each page view held a file descriptor until the next build that wrote files,
    /// and at the process's limit (1,024 by default) the server stopped accepting connections.
    public func ping() {
        let continuations = lock.withLock { Array(listeners.values) }
        let comment = Array(": ping\n\n".utf8)
        for continuation in continuations { continuation.yield(comment) }
    }

    /// Ends every open stream, as the server stops.
    public func finishAll() {
        let continuations = lock.withLock {
            defer { listeners = [:] }
            return Array(listeners.values)
        }
        for continuation in continuations { continuation.finish() }
    }

    /// The bytes of a new event stream: a comment at once (so the client knows it is connected), then events;
    /// and the stream's number, for `unsubscribe`.
    func subscribe() -> (events: AsyncStream<[UInt8]>, id: Int) {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let (id, failure) = lock.withLock {
            nextListener += 1
            listeners[nextListener] = continuation
            return (nextListener, self.failure)
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        // A browser that loses the stream (the server restarted) tries again after a second.
        continuation.yield(Array(": sitegen live reload\nretry: 1000\n\n".utf8))
        if let failure { continuation.yield(failure) }
        return (stream, id)
    }

    /// Forgets the stream `id`: its page is gone (a write to it failed) or it ended.
    func unsubscribe(_ id: Int) {
        let continuation = lock.withLock { listeners.removeValue(forKey: id) }
        continuation?.finish()
    }

    /// Answers with an event stream, written as events come, until it is finished or its page is gone.
    func stream(to writer: consuming ResponseWriter) async throws {
        let (events, id) = subscribe()
        // A write to a page that was left fails: the stream is forgotten then, not at the next build.
        defer { unsubscribe(id) }
        var body = try await writer.writeHead(HTTPResponse(status: .ok, headerFields: [
            .contentType: "text/event-stream", .cacheControl: "no-store",
        ]))
        for await event in events {
            try await body.write(ByteBuffer(bytes: event))
        }
        try await body.finish(nil)
    }

    /// `html` with `script` inserted before its last `</body>` (any case), or after it when it has none.
    public static func inject(into html: Data) -> Data {
        let closing = Array("</body>".utf8)
        let bytes = [UInt8](html)
        var index = bytes.count - closing.count
        while index >= 0 {
            if zip(bytes[index..<index + closing.count], closing).allSatisfy({ lowercase($0) == $1 }) {
                return Data(bytes[..<index]) + Data(script.utf8) + Data(bytes[index...])
            }
            index -= 1
        }
        return html + Data(script.utf8)
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}
