import Foundation
import HTTPTypes
import HummingbirdCore
import NIOCore

/// Answers requests from the output folder: files through `OutputPathResolver`, HTML with the live-reload script,
/// the event stream at `LiveReload.eventsPath`, and the site's `404.html` (or a plain 404) for anything else.
struct OutputFileHandler: Sendable {
    let root: URL
    /// The path the site is served under, which a build may change (`baseURL` in `sitegen.yml`).
    let basePath: BasePath
    let liveReload: LiveReload

    /// A response as this handler makes it, before it is written: status, header fields and the whole body.
    struct Reply {
        var status: HTTPResponse.Status
        var fields: HTTPFields
        var body = Data()
    }

    /// Writes the answer to `request`.
    func respond(to request: Request, writer: consuming ResponseWriter) async throws {
        let method = request.head.method
        // The target as sent (percent-encoded); an absolute-form target (`http://host/path`) is reduced to its path.
        let target = request.head.path ?? ""
        let rawPath = String(target.prefix { $0 != "?" })
        if rawPath == LiveReload.eventsPath && method == .get {
            try await liveReload.stream(to: writer)
            return
        }
        var reply = self.reply(method: method, rawPath: rawPath, query: target.contains("?") ? String(target.drop { $0 != "?" }.dropFirst()) : "",
                               range: request.head.headerFields[.range])
        reply.fields[.contentLength] = String(reply.body.count)
        let head = HTTPResponse(status: reply.status, headerFields: reply.fields)
        // HEAD: the headers a GET would have, its length included, and no body.
        if method == .head || reply.body.isEmpty {
            try await writer.writeResponse(head)
        } else {
            try await writer.write(response: head, body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body)))
        }
    }

    /// What a request for `rawPath` (percent-encoded as sent) gets.
    func reply(method: HTTPRequest.Method, rawPath: String, query: String, range: String?) -> Reply {
        guard method == .get || method == .head else {
            return Reply(status: .methodNotAllowed, fields: [.allow: "GET, HEAD"])
        }
        let resolver = OutputPathResolver(root: root, basePath: basePath.value)
        switch resolver.resolve(rawPath: rawPath, query: query) {
        case .file(let url, let name):
            // Read whole: the build replaces files by renaming, so this is the old file or the new one, never half.
            guard let contents = try? Data(contentsOf: url) else { return notFoundReply(resolver) }
            let contentType = ContentType.of(fileNamed: name)
            // A video or audio file is played from ranges (Safari asks for nothing else).
            if let range, let part = Self.part(of: Self.served(contents, contentType: contentType), range: range) {
                return Reply(status: part.status, fields: [
                    .contentType: contentType, .cacheControl: "no-store", .contentRange: part.contentRange, .acceptRanges: "bytes",
                ], body: part.bytes)
            }
            var reply = fileReply(contents, contentType: contentType, status: .ok)
            reply.fields[.acceptRanges] = "bytes"
            return reply
        case .redirect(let location):
            return Reply(status: .movedPermanently, fields: [.location: location])
        case .notFound:
            return notFoundReply(resolver)
        }
    }

    /// The part of `body` a `Range` header asks for (`bytes=0-99`, `bytes=100-`, `bytes=-500`): 206 with it, or
    /// 416 when it starts past the end; nil, for the whole body, when the header asks for several ranges or is
    /// not one that can be read, as RFC 9110 lets a server answer.
    static func part(of body: Data, range header: String) -> (status: HTTPResponse.Status, contentRange: String, bytes: Data)? {
        let size = body.count
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        var start: Int, end: Int
        if first.isEmpty {
            // The last `n` bytes.
            guard let count = Int(last), count > 0 else { return nil }
            start = max(0, size - count)
            end = size - 1
        } else {
            guard let from = Int(first), from >= 0 else { return nil }
            start = from
            if last.isEmpty { end = size - 1 } else {
                guard let to = Int(last), to >= from else { return nil }
                end = min(to, size - 1)
            }
        }
        guard start < size else { return (.rangeNotSatisfiable, "bytes */\(size)", Data()) }
        return (.partialContent, "bytes \(start)-\(end)/\(size)", body.subdata(in: start..<(end + 1)))
    }

    private func notFoundReply(_ resolver: OutputPathResolver) -> Reply {
        if let page = resolver.notFoundPage(), let contents = try? Data(contentsOf: page) {
            return fileReply(contents, contentType: ContentType.of(fileNamed: "404.html"), status: .notFound)
        }
        // A page, not plain text, so that it reloads once a build makes the page (or the whole output folder,
        // deleted while serving) again.
        let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>404 Not Found</title></head>\n"
            + "<body><h1>404 Not Found</h1><p>Nothing is published at this address yet.</p></body>\n</html>\n"
        return Reply(status: .notFound, fields: [.contentType: "text/html; charset=utf-8"], body: LiveReload.inject(into: Data(page.utf8)))
    }

    /// The bytes sent for a file: an HTML page with the live-reload script.
    private static func served(_ contents: Data, contentType: String) -> Data {
        contentType.hasPrefix("text/html") ? LiveReload.inject(into: contents) : contents
    }

    private func fileReply(_ contents: Data, contentType: String, status: HTTPResponse.Status) -> Reply {
        // A development server: the browser must ask again after every build, never show a cached page.
        Reply(status: status, fields: [.contentType: contentType, .cacheControl: "no-store"], body: Self.served(contents, contentType: contentType))
    }
}

/// The path a server serves the site under, shared between the server, which is told of changes, and its handler.
final class BasePath: @unchecked Sendable {
    private let lock = NSLock()
    private var path: String

    init(_ path: String) { self.path = path }

    var value: String {
        get { lock.withLock { path } }
        set { lock.withLock { path = newValue } }
    }
}
