import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

// A ws:// client on SwiftNIO alone (NIOPosix, NIOHTTP1, NIOWebSocket): an HTTP/1.1 upgrade
// request, then WebSocket frames. No TLS: the demo talks to a relay on the loopback interface.
// A real client connects with wss://, that is with a TLS handler (swift-nio-ssl's
// `NIOSSLClientHandler`, or NIOTransportServices on Apple platforms) added to the pipeline in
// front of the HTTP handlers; see Examples/README.md.

/// Connects to a WebSocket server.
enum WebSocketClient {
    /// Connects to `url` (`ws://HOST[:PORT][/PATH]`), upgrades the connection to a WebSocket,
    /// and runs `body` with its text messages (`inbound`) and a writer (`outbound`). The
    /// connection closes when `body` returns or throws.
    ///
    /// `maxMessageSize` bounds an incoming frame and a message reassembled from fragments.
    static func connect(
        to url: String,
        maxMessageSize: Int,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (_ inbound: WebSocketInbound, _ outbound: WebSocketOutbound) async throws -> Void
    ) async throws {
        let endpoint = try WebSocketEndpoint(url)
        let upgrade: EventLoopFuture<UpgradeResult> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: endpoint.host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    // After a successful upgrade the HTTP handlers are gone; NIOWebSocket added
                    // its frame decoder and encoder and the protocol error handler (which
                    // closes the connection, with a masked close frame, on a malformed frame).
                    let upgrader = NIOTypedWebSocketClientUpgrader<UpgradeResult>(maxFrameSize: maxMessageSize) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            // Reassembles fragmented messages; control frames pass through.
                            try channel.pipeline.syncOperations.addHandler(
                                NIOWebSocketFrameAggregator(
                                    minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 1024,
                                    maxAccumulatedFrameSize: maxMessageSize))
                            return .upgraded(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: endpoint.hostHeader)
                    let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: endpoint.target, headers: headers)
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<UpgradeResult>(
                        upgradeRequestHead: request, upgraders: [upgrader]
                    ) { channel in
                        channel.close(promise: nil)
                        return channel.eventLoop.makeSucceededFuture(.refused)
                    }
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
        guard case let .upgraded(channel) = try await upgrade.get() else {
            throw WebSocketError.upgradeRefused(url)
        }
        try await channel.executeThenClose { inbound, outbound in
            let writer = WebSocketOutbound(outbound)
            try await body(WebSocketInbound(inbound, writer: writer), writer)
        }
    }

    /// What the upgrade request ended with.
    private enum UpgradeResult: Sendable {
        case upgraded(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }
}

/// The text messages a WebSocket connection receives, in order. Iterating answers the
/// server's control frames: a ping with a pong, a close with a close (then the sequence ends).
/// Binary messages are skipped (the relay sends none).
struct WebSocketInbound: AsyncSequence, Sendable {
    typealias Element = String

    private let frames: NIOAsyncChannelInboundStream<WebSocketFrame>
    private let writer: WebSocketOutbound

    fileprivate init(_ frames: NIOAsyncChannelInboundStream<WebSocketFrame>, writer: WebSocketOutbound) {
        self.frames = frames
        self.writer = writer
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(frames: frames.makeAsyncIterator(), writer: writer)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate var frames: NIOAsyncChannelInboundStream<WebSocketFrame>.AsyncIterator
        fileprivate let writer: WebSocketOutbound
        private var ended = false

        fileprivate init(frames: NIOAsyncChannelInboundStream<WebSocketFrame>.AsyncIterator, writer: WebSocketOutbound) {
            self.frames = frames
            self.writer = writer
        }

        /// The next text message; nil once the server closed the WebSocket (or the connection).
        mutating func next() async throws -> String? {
            while !ended, let frame = try await frames.next() {
                switch frame.opcode {
                case .text:
                    // RFC 6455 §8.1: a text message must be valid UTF-8.
                    let data = frame.unmaskedData
                    guard let text = String(validating: data.readableBytesView, as: UTF8.self) else {
                        try await writer.close(code: .dataInconsistentWithMessage, reason: "invalid UTF-8")
                        continue
                    }
                    return text
                case .ping:
                    try await writer.pong(frame.unmaskedData)
                case .connectionClose:
                    // Either the answer to our close, or the server closing: then we answer.
                    await writer.answerClose(frame.unmaskedData)
                    ended = true
                case .binary, .pong, .continuation:
                    // No binary messages in this protocol; unsolicited pongs are allowed and
                    // ignored; continuations were reassembled by the aggregator.
                    continue
                default:
                    continue
                }
            }
            return nil
        }
    }
}

/// Writes frames on a WebSocket connection. Every frame is masked with a fresh random key, as
/// RFC 6455 §5.3 requires of a client (NIOWebSocket's frame encoder applies the mask). After a
/// close frame was sent, only the close handshake goes on.
actor WebSocketOutbound {
    private let frames: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    /// A close frame was sent (ours, or our answer to the server's).
    private var closeSent = false

    fileprivate init(_ frames: NIOAsyncChannelOutboundWriter<WebSocketFrame>) {
        self.frames = frames
    }

    /// Sends `text` as one text frame.
    func write(_ text: String) async throws {
        guard !closeSent else { throw WebSocketError.closed }
        try await send(.text, ByteBuffer(string: text))
    }

    /// Starts the close handshake (does nothing when a close frame was already sent): the
    /// server answers with a close frame, which ends the inbound messages.
    func close(code: WebSocketErrorCode = .normalClosure, reason: String = "") async throws {
        guard !closeSent else { return }
        closeSent = true
        var payload = ByteBuffer()
        payload.write(webSocketErrorCode: code)
        payload.writeString(reason)
        try await send(.connectionClose, payload)
    }

    /// Answers a ping with a pong carrying the same data (RFC 6455 §5.5.3).
    fileprivate func pong(_ data: ByteBuffer) async throws {
        guard !closeSent else { return }
        try await send(.pong, data)
    }

    /// Answers the server's close frame with a close frame carrying its status code (none if it
    /// sent none), unless this is the answer to ours.
    fileprivate func answerClose(_ payload: ByteBuffer) async {
        guard !closeSent else { return }
        closeSent = true
        var answer = ByteBuffer()
        if let code = payload.peekWebSocketErrorCode() { answer.write(webSocketErrorCode: code) }
        // The server may already have closed the connection: nothing left to do then.
        try? await send(.connectionClose, answer)
    }

    private func send(_ opcode: WebSocketOpcode, _ data: ByteBuffer) async throws {
        try await frames.write(WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data))
    }
}

/// Where a ws:// URL points.
private struct WebSocketEndpoint {
    var host: String
    var port: Int
    /// The request target: path and query.
    var target: String
    /// The `Host` header's value.
    var hostHeader: String

    init(_ url: String) throws(WebSocketError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { throw .invalidURL(url) }
        switch scheme {
        case "ws": break
        case "wss": throw .tlsNotSupported(url)
        default: throw .invalidURL(url)
        }
        self.host = host
        self.port = components.port ?? 80
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.target = components.percentEncodedQuery.map { path + "?" + $0 } ?? path
        let name = host.contains(":") ? "[\(host)]" : host
        self.hostHeader = components.port == nil ? name : "\(name):\(port)"
    }
}

/// Why a WebSocket connection failed.
enum WebSocketError: Error, CustomStringConvertible {
    case invalidURL(String)
    case tlsNotSupported(String)
    case upgradeRefused(String)
    case closed

    var description: String {
        switch self {
        case let .invalidURL(url): return "not a ws:// URL: \(url)"
        case let .tlsNotSupported(url): return "wss:// needs TLS, which this example client leaves out: \(url)"
        case let .upgradeRefused(url): return "the server did not accept the WebSocket upgrade: \(url)"
        case .closed: return "the WebSocket is closing"
        }
    }
}
