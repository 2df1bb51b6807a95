import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1 connection, with `RequestLimiter` in front of NIO's parser: Hummingbird's own
/// `HTTP1Channel` adds handlers only after the parser, where a request line is already read whole.
struct SiteHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let limits: RequestLimiter.Limits
    /// How long a connection with no request under way stays open.
    let idleTimeout: Duration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // NIO's own limits stand behind the limiter's (after a chunked body, which it leaves alone), above
            // them so that the limiter answers first; past them Hummingbird answers 400.
            var decoderLimits = NIOHTTPDecoderLimitConfiguration()
            decoderLimits.maxHeaderFieldSize = limits.maximumLineBytes + limits.maximumHeaderBytes
            decoderLimits.maxHeaderListSize = limits.maximumLineBytes + limits.maximumHeaderBytes
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(), withDecoderLimitConfiguration: decoderLimits
            )
            try channel.pipeline.syncOperations.addHandler(RequestLimiter(limits: limits), position: .first)
            try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}
