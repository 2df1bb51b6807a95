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
                response = fileResponse(contents, contentType: ContentType.of(fileNamed: name), status: .ok)
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

    private func notFoundResponse(_ resolver: OutputPathResolver) -> HTTPResponse {
        if let page = resolver.notFoundPage(), let contents = try? Data(contentsOf: page) {
            return fileResponse(contents, contentType: ContentType.of(fileNamed: "404.html"), status: .notFound)
        }
        return HTTPResponse(statusCode: .notFound, headers: HTTPHeaders([.contentType: "text/plain; charset=utf-8"]),
                            body: Data("404 Not Found\n".utf8))
    }

    private func fileResponse(_ contents: Data, contentType: String, status: HTTPStatusCode) -> HTTPResponse {
        let body = contentType.hasPrefix("text/html") ? LiveReload.inject(into: contents) : contents
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
