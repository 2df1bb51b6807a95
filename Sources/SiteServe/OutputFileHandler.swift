import Foundation
import FlyingFox

/// Answers requests from the output folder: files through `OutputPathResolver`, HTML with the live-reload script,
/// the event stream at `LiveReload.eventsPath`, and the site's `404.html` (or a plain 404) for anything else.
struct OutputFileHandler: HTTPHandler {
    let root: URL
    /// The path the site is served under, which a build may change (`baseURL` in `sitegen.yml`).
    let basePath: BasePath
    let liveReload: LiveReload

    func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.method == .GET || request.method == .HEAD else {
            return HTTPResponse(statusCode: .methodNotAllowed, headers: HTTPHeaders([.init("Allow"): "GET, HEAD"]))
        }
        let rawPath = request.target.path(percentEncoded: true)
        if rawPath == LiveReload.eventsPath && request.method == .GET {
            return liveReload.eventStreamResponse()
        }
        let resolver = OutputPathResolver(root: root, basePath: basePath.value)
        var response: HTTPResponse
        switch resolver.resolve(rawPath: rawPath, query: request.target.query(percentEncoded: true)) {
        case .file(let url, let name):
            // Read whole: the build replaces files by renaming, so this is the old file or the new one, never half.
            if let contents = try? Data(contentsOf: url) {
                let contentType = ContentType.of(fileNamed: name)
                // A video or audio file is played from ranges (Safari asks for nothing else).
                if let range = request.headers[.range], let part = Self.part(of: Self.served(contents, contentType: contentType), range: range) {
                    response = HTTPResponse(statusCode: part.status, headers: HTTPHeaders([
                        .contentType: contentType, .cacheControl: "no-store", .contentRange: part.contentRange, .acceptRanges: "bytes",
                    ]), body: part.bytes)
                } else {
                    response = fileResponse(contents, contentType: contentType, status: .ok)
                    response.headers[.acceptRanges] = "bytes"
                }
            } else {
                response = notFoundResponse(resolver)
            }
        case .redirect(let location):
            response = HTTPResponse(statusCode: .movedPermanently, headers: HTTPHeaders([.location: location]))
        case .notFound:
            response = notFoundResponse(resolver)
        }
        if request.method == .HEAD, case .httpBody(let body) = response.payload {
            response.headers[.contentLength] = String(body.count ?? 0)
            response.payload = .httpBody(HTTPBodySequence(data: Data()))
        }
        return response
    }

    /// The part of `body` a `Range` header asks for (`bytes=0-99`, `bytes=100-`, `bytes=-500`): 206 with it, or
    /// 416 when it starts past the end; nil, for the whole body, when the header asks for several ranges or is
    /// not one that can be read, as RFC 9110 lets a server answer.
    static func part(of body: Data, range header: String) -> (status: HTTPStatusCode, contentRange: String, bytes: Data)? {
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

    private func notFoundResponse(_ resolver: OutputPathResolver) -> HTTPResponse {
        if let page = resolver.notFoundPage(), let contents = try? Data(contentsOf: page) {
            return fileResponse(contents, contentType: ContentType.of(fileNamed: "404.html"), status: .notFound)
        }
        // A page, not plain text, so that it reloads once a build makes the page (or the whole output folder,
        // deleted while serving) again.
        let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>404 Not Found</title></head>\n"
            + "<body><h1>404 Not Found</h1><p>Nothing is published at this address yet.</p></body>\n</html>\n"
        return HTTPResponse(statusCode: .notFound, headers: HTTPHeaders([.contentType: "text/html; charset=utf-8"]),
                            body: LiveReload.inject(into: Data(page.utf8)))
    }

    /// The bytes sent for a file: an HTML page with the live-reload script.
    private static func served(_ contents: Data, contentType: String) -> Data {
        contentType.hasPrefix("text/html") ? LiveReload.inject(into: contents) : contents
    }

    private func fileResponse(_ contents: Data, contentType: String, status: HTTPStatusCode) -> HTTPResponse {
        let body = Self.served(contents, contentType: contentType)
        // A development server: the browser must ask again after every build, never show a cached page.
        return HTTPResponse(statusCode: status, headers: HTTPHeaders([.contentType: contentType, .cacheControl: "no-store"]), body: body)
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
