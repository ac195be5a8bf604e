import RelayWire
import SessionKit

/// The client's side of the relay's WebSocket: requests with their answers, and the frames the
/// relay pushes (deliveries), which the inbound loop hands to `answer(_:)`.
actor RelayConnection {
    private let outbound: WebSocketOutbound
    private var nextID = 1
    private var waiting: [Int: CheckedContinuation<ServerFrame, any Error>] = [:]
    /// Answers that arrived before their request started waiting for them.
    private var early: [Int: ServerFrame] = [:]
    private var closed = false

    /// A connection writing to `outbound`.
    init(_ outbound: WebSocketOutbound) {
        self.outbound = outbound
    }

    /// Says which device this connection speaks for; the relay then delivers what is queued.
    func hello(_ device: ProtocolAddress) async throws {
        try await write(.hello(device: device))
    }

    /// Publishes `prekeys` (`PreKeyUpload.serialized`).
    func upload(_ prekeys: [UInt8]) async throws {
        _ = try await request { .upload(id: $0, prekeys: WireCoding.base64(prekeys)) }
    }

    /// One bundle per device of `user` (empty when `user` has not registered).
    func bundles(of user: String) async throws -> [PublishedBundle] {
        guard case let .bundles(_, bundles) = try await request({ .fetch(id: $0, user: user) }) else {
            throw RelayConnectionError.unexpectedAnswer
        }
        return bundles
    }

    /// Hands `envelope` to the relay for each of `recipients`; returns once it is queued there.
    func send(_ envelope: String, to recipients: [ProtocolAddress]) async throws {
        _ = try await request { .send(id: $0, to: recipients, envelope: envelope) }
    }

    /// Hands `messages` for the devices of `user` to the relay with the device list `devices`
    /// (SPEC §9): returns `nil` once they are queued, or the relay's `DeviceListMismatch` when
    /// it refused them (nothing queued).
    func send(
        _ messages: [DeviceEnvelope], toUser user: String, naming devices: [DeviceRegistration]
    ) async throws -> DeviceListMismatch? {
        switch try await request({ .sendToUser(id: $0, user: user, devices: devices, messages: messages) }) {
        case .ok: return nil
        case let .mismatch(_, stale, missing, extra): return DeviceListMismatch(stale: stale, missing: missing, extra: extra)
        default: throw RelayConnectionError.unexpectedAnswer
        }
    }

    /// How many one-time prekeys and one-time KEM prekeys the relay still holds for this device.
    func preKeyCount() async throws -> (oneTime: Int, oneTimeKEM: Int) {
        guard case let .preKeyCount(_, oneTime, oneTimeKEM) = try await request({ .preKeyCount(id: $0) }) else {
            throw RelayConnectionError.unexpectedAnswer
        }
        return (oneTime, oneTimeKEM)
    }

    /// Stores an attachment's ciphertext at the relay; returns its id there.
    func putAttachment(_ ciphertext: [UInt8]) async throws -> String {
        guard case let .attachmentStored(_, id) = try await request({ .putAttachment(id: $0, ciphertext: WireCoding.base64(ciphertext)) }) else {
            throw RelayConnectionError.unexpectedAnswer
        }
        return id
    }

    /// The ciphertext of the attachment `id` at the relay.
    func attachment(_ id: String) async throws -> [UInt8] {
        guard case let .attachment(_, text) = try await request({ .getAttachment(id: $0, attachment: id) }),
              let bytes = WireCoding.bytes(base64: text) else {
            throw RelayConnectionError.unexpectedAnswer
        }
        return bytes
    }

    /// Tells the relay that delivery `message` was processed and persisted: it deletes it.
    func acknowledge(_ message: UInt64) async throws {
        try await write(.ack(message: message))
    }

    /// Routes an answer (`ok`, `failed`, `bundles`) to the request waiting for it.
    func answer(_ frame: ServerFrame) {
        let id: Int
        switch frame {
        case let .ok(answered), let .failed(answered, _), let .bundles(answered, _), let .mismatch(answered, _, _, _),
             let .preKeyCount(answered, _, _), let .attachmentStored(answered, _), let .attachment(answered, _):
            id = answered
        case .welcome, .deliver: return
        }
        if let continuation = waiting.removeValue(forKey: id) {
            continuation.resume(returning: frame)
        } else {
            early[id] = frame
        }
    }

    /// Fails every waiting request: the connection is gone.
    func close() {
        closed = true
        for continuation in waiting.values { continuation.resume(throwing: RelayConnectionError.closed) }
        waiting = [:]
    }

    /// Sends the request `make(id)` and waits for its answer; `failed` becomes an error.
    private func request(_ make: (Int) -> ClientFrame) async throws -> ServerFrame {
        let id = nextID
        nextID += 1
        try await write(make(id))
        let frame: ServerFrame
        if let answered = early.removeValue(forKey: id) {
            frame = answered
        } else {
            guard !closed else { throw RelayConnectionError.closed }
            frame = try await withCheckedThrowingContinuation { waiting[id] = $0 }
        }
        if case let .failed(_, reason) = frame { throw RelayConnectionError.refused(reason) }
        return frame
    }

    private func write(_ frame: ClientFrame) async throws {
        guard !closed else { throw RelayConnectionError.closed }
        try await outbound.write(try WireCoding.text(frame))
    }
}

/// Why a relay request failed.
enum RelayConnectionError: Error, CustomStringConvertible {
    /// The connection closed before the answer came.
    case closed
    /// The relay refused the request.
    case refused(String)
    /// The relay answered with another kind of frame.
    case unexpectedAnswer

    var description: String {
        switch self {
        case .closed: return "the connection to the relay closed"
        case let .refused(reason): return "the relay refused: \(reason)"
        case .unexpectedAnswer: return "unexpected answer from the relay"
        }
    }
}
