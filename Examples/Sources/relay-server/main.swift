#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import RelayWire
import SessionKit

// relay-server [--host 127.0.0.1] [--port 0] [--attachments DIR]
//
// A relay for the chat-client example: a prekey directory and a mailbox per device, in memory,
// behind one WebSocket endpoint (`/relay`, JSON frames: RelayWire). It stores and forwards
// opaque envelopes; it never holds a plaintext. Port 0 picks a free port; the first line on
// standard output says which (`listening on 127.0.0.1:PORT`). Attachment ciphertexts are kept
// as files in DIR (default: a new folder in the temporary directory).

/// Prints one line, written at once (`print` would buffer it when standard output is a file).
@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Serves one WebSocket connection: a `hello` first, then requests, and the relay's pushes.
func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, relay: Relay) async {
    // Everything the server sends goes through `pushes`, in order: the queued envelopes pushed
    // by `Relay.connect`, answers, and envelopes arriving while connected.
    let (frames, pushes) = AsyncStream.makeStream(of: ServerFrame.self)
    let writer = Task {
        for await frame in frames {
            guard let text = try? WireCoding.text(frame) else { continue }
            do { try await outbound.write(.text(text)) } catch { break }
        }
    }
    var device: ProtocolAddress?
    var connection = 0
    do {
        for try await message in inbound.messages(maxSize: WireCoding.maximumFrameSize) {
            guard case let .text(text) = message, let frame = try? WireCoding.decode(ClientFrame.self, from: text) else {
                say("relay: ignored a frame that is not a ClientFrame")
                continue
            }
            if case let .hello(name) = frame {
                if let device { await relay.disconnect(device, connection: connection) }
                device = name
                connection = await relay.connect(name, frames: pushes)
            } else if let device {
                await answer(frame, from: device, into: pushes, relay: relay)
            } else if let id = frame.requestID {
                pushes.yield(.failed(id: id, reason: "say hello first"))
            }
        }
    } catch {
        say("relay: connection \(device.map { "of \($0) " } ?? "")ended: \(error)")
    }
    if let device { await relay.disconnect(device, connection: connection) }
    pushes.finish()
    await writer.value
}

/// Carries out one request of `device` and queues the answer.
func answer(_ frame: ClientFrame, from device: ProtocolAddress, into pushes: AsyncStream<ServerFrame>.Continuation, relay: Relay) async {
    switch frame {
    case .hello:
        break
    case let .upload(id, prekeys):
        do {
            guard let bytes = WireCoding.bytes(base64: prekeys) else { throw RelayError("prekeys are not base64") }
            let upload: PreKeyUpload
            do { upload = try PreKeyUpload(serialized: bytes) } catch { throw RelayError("not a prekey upload: \(error)") }
            try await relay.publish(upload, for: device)
            pushes.yield(.ok(id: id))
        } catch {
            pushes.yield(.failed(id: id, reason: "\(error)"))
        }
    case let .fetch(id, user):
        pushes.yield(.bundles(id: id, bundles: await relay.bundles(of: user, for: device)))
    case let .send(id, to, envelope):
        await relay.send(envelope, from: device, to: to)
        pushes.yield(.ok(id: id))
    case let .ack(message):
        await relay.acknowledge(message, by: device)
    case let .sendToUser(id, user, devices, messages):
        do {
            let mismatch = try await relay.send(messages, toUser: user, naming: devices, from: device)
            pushes.yield(mismatch.isEmpty ? .ok(id: id) : .mismatch(id: id, stale: mismatch.stale, missing: mismatch.missing, extra: mismatch.extra))
        } catch {
            pushes.yield(.failed(id: id, reason: "\(error)"))
        }
    case let .preKeyCount(id):
        let count = await relay.preKeyCount(of: device)
        pushes.yield(.preKeyCount(id: id, oneTime: count.oneTime, oneTimeKEM: count.oneTimeKEM))
    case let .putAttachment(id, ciphertext):
        do {
            guard let bytes = WireCoding.bytes(base64: ciphertext) else { throw RelayError("the ciphertext is not base64") }
            pushes.yield(.attachmentStored(id: id, attachment: try await relay.storeAttachment(bytes, from: device)))
        } catch {
            pushes.yield(.failed(id: id, reason: "\(error)"))
        }
    case let .getAttachment(id, attachment):
        do {
            pushes.yield(.attachment(id: id, ciphertext: WireCoding.base64(try await relay.attachment(attachment, for: device))))
        } catch {
            pushes.yield(.failed(id: id, reason: "\(error)"))
        }
    }
}

extension ClientFrame {
    /// The id of a request that expects an answer.
    var requestID: Int? {
        switch self {
        case let .upload(id, _), let .fetch(id, _), let .send(id, _, _), let .sendToUser(id, _, _, _), let .preKeyCount(id),
             let .putAttachment(id, _), let .getAttachment(id, _):
            return id
        case .hello, .ack: return nil
        }
    }
}

/// Parses the arguments, then serves until SIGTERM or SIGINT.
func runServer() async throws {
    var host = "127.0.0.1"
    var port = 0
    var attachments = FileManager.default.temporaryDirectory.appendingPathComponent("relay-attachments-\(getpid())")
    var arguments = CommandLine.arguments.dropFirst()
    while let argument = arguments.popFirst() {
        switch argument {
        case "--host": host = arguments.popFirst() ?? host
        case "--port": port = arguments.popFirst().flatMap { Int($0) } ?? port
        case "--attachments": attachments = arguments.popFirst().map { URL(fileURLWithPath: $0) } ?? attachments
        default:
            say("usage: relay-server [--host 127.0.0.1] [--port 0] [--attachments DIR]")
            exit(2)
        }
    }
    let (boundHost, requestedPort) = (host, port)
    let relay = try Relay(attachments: attachments, log: { line in say("relay: \(line)") })
    let router = Router()
    router.get("/health") { _, _ in "ok" }
    let app = Application(
        router: router,
        server: .http1WebSocketUpgrade(configuration: .init(ws: .init(maxFrameSize: WireCoding.maximumFrameSize))) { request, _, _ in
            guard request.path == "/relay" else { return .dontUpgrade }
            return .upgrade([:]) { inbound, outbound, _ in await serve(inbound, outbound, relay: relay) }
        },
        configuration: .init(address: .hostname(boundHost, port: requestedPort), serverName: "relay-server"),
        onServerRunning: { channel in
            say("listening on \(boundHost):\(channel.localAddress?.port ?? requestedPort)")
        },
        logger: {
            var logger = Logger(label: "relay-server")
            logger.logLevel = .warning
            return logger
        }()
    )
    try await app.runService()
}

try await runServer()
