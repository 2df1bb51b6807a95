import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import Foundation

extension RemoteFetcher {
    /// A failed fetch's reason, as a user reads it: what went wrong, not the client's type names.
    static func describe(_ error: Error, settings: FetchSettings) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "no connection within \(seconds(settings.connectTimeout)) (timeout)"
            case .deadlineExceeded, .readTimeout: return "no complete answer within \(seconds(settings.wholeTimeout)) (timeout)"
            case .remoteConnectionClosed: return "the server closed the connection before the body was complete (truncated)"
            case .invalidURL, .emptyHost, .emptyScheme: return "not a URL sitegen can fetch (\(error))"
            case .cancelled: return "cancelled"
            default: return "\(error)"
            }
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return "the host '\(error.host)' was not found (DNS)"
            }
            if let first = error.connectionErrors.first { return describe(first.error, settings: settings) }
            return "no connection to \(error.host):\(error.port)"
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case ECONNRESET: return "connection reset by the server (truncated)"
            case ETIMEDOUT: return "no connection (timeout)"
            default: return error.description
            }
        }
        if let error = error as? HTTPParserError {
            // The connection ended inside the body: fewer bytes than its length, or a chunk cut off.
            if error == .invalidEOFState { return "the connection closed before the body was complete (truncated)" }
            return "the server's answer is not HTTP (\(error))"
        }
        if error is NIOTooManyBytesError { return "the body is more than the cap of \(settings.maximumBytes) bytes" }
        return String(describing: error)
    }
}
