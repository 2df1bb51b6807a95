import Foundation
import NIOCore

/// The first handler of every connection, before the HTTP parser: refuses a request line longer than
/// `maximumLineBytes` (414) or a header block longer than `maximumHeaderBytes` (431), and a request that
/// does not arrive whole within `timeout` of its first byte (408), then closes the connection.
///
/// It reads the bytes as they come, once each, keeping only counts (and the start of each header line, for
/// `Content-Length` and `Transfer-Encoding`, to know where a request with a body ends): a client cannot make
/// it hold or walk more than the limits. FlyingFox's parser walked its whole buffer for every byte, so a
/// 100 KB line cost 25 s of CPU (docs/decisions.md, 42). A chunked body (never a GET's) ends what it
/// follows; NIO's parser, with limits of its own above these, answers what comes after.
final class RequestLimiter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The limits one connection is held to.
    struct Limits: Sendable {
        var maximumLineBytes: Int
        var maximumHeaderBytes: Int
        var timeout: TimeAmount
    }

    private enum Phase {
        /// Before or in a request line: its bytes so far (blank lines before one are skipped, as RFC 9112 allows).
        case line(count: Int)
        /// In the header block: its bytes so far, the current line's start, and what it said of a body.
        case headers(count: Int, current: [UInt8], contentLength: Int, chunked: Bool)
        /// In a body of known length: the bytes still to come.
        case body(remaining: Int)
        /// After a chunked body began: the rest is NIO's parser's to bound.
        case passThrough
        /// Refused: the answer is sent, what else arrives is read and dropped until the client is done.
        case refused
    }

    private let limits: Limits
    private var phase = Phase.line(count: 0)
    private var deadline: Scheduled<Void>?

    /// The header lines' first bytes kept to read `Content-Length` and `Transfer-Encoding` (names and a number).
    private static let keptLineBytes = 64

    init(limits: Limits) {
        self.limits = limits
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if case .refused = phase { return }
        if case .passThrough = phase {
            context.fireChannelRead(data)
            return
        }
        var refusal: Refusal?
        buffer.withUnsafeReadableBytes { bytes in
            var index = 0
            while index < bytes.count {
                // A body is skipped whole, not a byte at a time.
                if case .body(let remaining) = phase {
                    let taken = min(remaining, bytes.count - index)
                    index += taken
                    if taken == remaining { endRequest() } else { phase = .body(remaining: remaining - taken) }
                    continue
                }
                if case .passThrough = phase { break }
                refusal = take(bytes[index], context: context)
                if refusal != nil { break }
                index += 1
            }
        }
        if let refusal {
            refuse(refusal, context: context)
        } else {
            context.fireChannelRead(data)
        }
    }

    /// Moves the phase on by one byte; what to refuse the request with, if anything.
    private func take(_ byte: UInt8, context: ChannelHandlerContext) -> Refusal? {
        switch phase {
        case .line(let count):
            if byte == UInt8(ascii: "\n") {
                // A blank line before a request is skipped; after a request line the headers begin.
                if count > 0 { phase = .headers(count: 0, current: [], contentLength: 0, chunked: false) }
                return nil
            }
            if count == 0 && byte == UInt8(ascii: "\r") { return nil }
            if count == 0 { startDeadline(context: context) }
            // A raw NUL names no file (README: such requests are 404, as `%00` is).
            if byte == 0 { return .nulInTarget }
            guard count < limits.maximumLineBytes else { return .lineTooLong }
            phase = .line(count: count + 1)
        case .headers(let count, var current, var contentLength, var chunked):
            guard count < limits.maximumHeaderBytes else { return .headersTooLarge }
            guard byte == UInt8(ascii: "\n") else {
                if current.count < Self.keptLineBytes { current.append(byte) }
                phase = .headers(count: count + 1, current: current, contentLength: contentLength, chunked: chunked)
                return nil
            }
            if current.last == UInt8(ascii: "\r") { current.removeLast() }
            if current.isEmpty {
                // The head is whole.
                if chunked {
                    endRequest()
                    phase = .passThrough
                } else if contentLength > 0 {
                    phase = .body(remaining: contentLength)
                } else {
                    endRequest()
                }
                return nil
            }
            Self.read(headerLine: current, contentLength: &contentLength, chunked: &chunked)
            phase = .headers(count: count + 1, current: [], contentLength: contentLength, chunked: chunked)
        case .body, .passThrough, .refused:
            break
        }
        return nil
    }

    /// What a header line (its first bytes) says of the body that follows.
    private static func read(headerLine line: [UInt8], contentLength: inout Int, chunked: inout Bool) {
        let text = String(decoding: line, as: UTF8.self).lowercased()
        if text.hasPrefix("content-length:") {
            contentLength = Int(text.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? contentLength
        } else if text.hasPrefix("transfer-encoding:") {
            chunked = true
        }
    }

    private func startDeadline(context: ChannelHandlerContext) {
        deadline?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: limits.timeout) {
            let (limiter, context) = loopBound.value
            limiter.refuse(.timedOut, context: context)
        }
    }

    private func endRequest() {
        deadline?.cancel()
        deadline = nil
        phase = .line(count: 0)
    }

    /// Why a request is refused, and the answer.
    private enum Refusal {
        case lineTooLong, headersTooLarge, timedOut, nulInTarget

        var status: String {
            switch self {
            case .lineTooLong: "414 URI Too Long"
            case .headersTooLarge: "431 Request Header Fields Too Large"
            case .timedOut: "408 Request Timeout"
            case .nulInTarget: "404 Not Found"
            }
        }
    }

    /// Answers with `refusal`'s status and closes: the output at once, the input once the client stops
    /// sending (or a second later), so that the answer is not lost to a reset while the client still writes.
    private func refuse(_ refusal: Refusal, context: ChannelHandlerContext) {
        if case .refused = phase { return }
        phase = .refused
        deadline?.cancel()
        deadline = nil
        let text = refusal.status + "\n"
        let head = "HTTP/1.1 \(refusal.status)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(text.utf8.count)\r\n"
            + "Connection: close\r\n\r\n" + text
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: head))).whenComplete { _ in
            loopBound.value.close(mode: .output, promise: nil)
        }
        context.eventLoop.scheduleTask(in: .seconds(1)) { loopBound.value.close(promise: nil) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client closed its side after a refusal: it has read what it will.
        if case .refused = phase, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}
