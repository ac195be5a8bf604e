/// Text envelopes and the one entry point for incoming messages: an app that carries
/// `MessageEnvelope`s never parses type bytes or remembers which call takes which message.
extension SessionManager {
    /// Encrypts `plaintext` for `address` like `encrypt(_:to:)`, as an envelope from this
    /// device to `address`.
    /// - Throws: the errors of `encrypt(_:to:)`; `.invalidConfiguration` for a plaintext over
    ///   `maximumEnvelopePlaintextByteCount` bytes (checked before anything is encrypted).
    public func encryptEnvelope(_ plaintext: [UInt8], to address: ProtocolAddress) async throws(SessionError) -> MessageEnvelope {
        try Self.checkEnvelopeSize(plaintext)
        let bytes = try await encrypt(plaintext, to: address)
        return try Self.envelope(from: localAddress, to: address, kind: .message, group: nil, body: bytes)
    }

    /// Encrypts `plaintext` for every member of `group` like `groupEncrypt(_:for:)`, as one
    /// envelope (no recipient: the same bytes go to every member device).
    /// - Throws: the errors of `groupEncrypt(_:for:)`; `.invalidConfiguration` for a plaintext
    ///   over `maximumEnvelopePlaintextByteCount` bytes (checked before anything is encrypted).
    public func groupEncryptEnvelope(_ plaintext: [UInt8], for group: GroupID) async throws(SessionError) -> MessageEnvelope {
        try Self.checkEnvelopeSize(plaintext)
        let bytes = try await groupEncrypt(plaintext, for: group)
        return try Self.envelope(from: localAddress, to: nil, kind: .groupMessage, group: group, body: bytes)
    }

    /// Processes any incoming envelope addressed to this device: a pairwise message (ratchet
    /// or prekey, told apart by its type byte) with `decrypt(_:from:)`, a sender-key
    /// distribution with `processSenderKeyDistribution(encrypted:for:from:)` followed by
    /// `releasePendingGroupMessages(for:from:beforePersisting:)` (the group messages that
    /// waited for it), a group message with `groupDecrypt(_:for:from:)` (one whose chain has
    /// not arrived yet is kept by the manager: `unknownChain`, acknowledge it), a retry notice
    /// with `processRetryNotice(_:from:)` (`.retryNotice`: see its action). Each is persisted
    /// before this returns (decrypt → persist → acknowledge): acknowledge the message to the
    /// server afterwards, and react to an error by its `SessionError.disposition`.
    ///
    /// A message that fails because this device's state for its sender is lost or unusable
    /// (SPEC §9: see `UndecryptableMessage` for exactly which failures) is returned as
    /// `.undecryptable` instead of thrown: send its `retryNotice` envelope to the sender when
    /// it has one (the manager hands out at most one per ratchet key or group chain, and one
    /// per hour per device) and start a new session when it says so.
    /// - Throws: `SessionError.invalidMessage` for an envelope whose recipient is another
    ///   device (filter a shared channel's envelopes by `recipient` first), and the errors of
    ///   the call it dispatches to (other than those returned as `.undecryptable`).
    public func receive(_ envelope: MessageEnvelope) async throws(SessionError) -> ReceivedMessage {
        try await receive(envelope, beforePersisting: { (_: ReceivedMessage) async throws(SessionError) in })
    }

    /// Processes an incoming envelope like `receive(_:)`, handing a decrypted pairwise or group
    /// message to `process` before the advanced state is persisted (decrypt → process → persist
    /// → acknowledge, with the crash consistency of `decrypt(_:from:beforePersisting:)`).
    /// `process` is not called for a sender-key distribution itself, which has nothing to show,
    /// but for each group message it releases.
    /// - Throws: the errors of `receive(_:)`, and whatever `process` throws (nothing is then
    ///   persisted and the same envelope can be retried).
    public func receive(
        _ envelope: MessageEnvelope,
        beforePersisting process: @escaping @Sendable (ReceivedMessage) async throws(SessionError) -> Void
    ) async throws(SessionError) -> ReceivedMessage {
        if let recipient = envelope.recipient, recipient != localAddress { throw .invalidMessage }
        do throws(SessionError) {
            return try await dispatch(envelope, beforePersisting: process)
        } catch {
            let undecryptable: UndecryptableMessage?
            switch envelope.kind {
            case .message, .senderKeyDistribution:
                undecryptable = try await self.undecryptable(envelope.body, from: envelope.sender, failedWith: error)
            case .groupMessage:
                guard let group = envelope.group else { throw error }
                undecryptable = try await undecryptableGroupMessage(envelope.body, for: group, from: envelope.sender, failedWith: error)
            case .retryNotice:
                undecryptable = nil
            }
            guard let undecryptable else { throw error }
            return .undecryptable(undecryptable)
        }
    }

    /// `receive`'s dispatch by kind.
    private func dispatch(
        _ envelope: MessageEnvelope, beforePersisting process: @escaping @Sendable (ReceivedMessage) async throws(SessionError) -> Void
    ) async throws(SessionError) -> ReceivedMessage {
        switch envelope.kind {
        case .message:
            let message = try await decrypt(envelope.body, from: envelope.sender, beforePersisting: {
                (message: DecryptedMessage) async throws(SessionError) in
                try await process(.message(message))
            })
            return .message(message)
        case .retryNotice:
            return .retryNotice(try await processRetryNotice(envelope.body, from: envelope.sender))
        case .senderKeyDistribution:
            guard let group = envelope.group else { throw .invalidMessage }
            let observation = try await processSenderKeyDistribution(encrypted: envelope.body, for: group, from: envelope.sender)
            // The group messages kept while this chain was missing decrypt now; those older than
            // the distribution are reported as they would be arriving after it.
            let release = try await releasePending(for: group, from: envelope.sender) {
                (message: DecryptedGroupMessage) async throws(SessionError) in
                try await process(.groupMessage(message))
            }
            var undecryptable: [UndecryptableMessage] = []
            for (message, error) in release.unreadable {
                if let report = try await undecryptableGroupMessage(message, for: group, from: envelope.sender, failedWith: error) {
                    undecryptable.append(report)
                }
            }
            return .senderKeyDistribution(
                group: group, sender: envelope.sender, identityObservation: observation, releasedMessages: release.released,
                undecryptableMessages: undecryptable)
        case .groupMessage:
            guard let group = envelope.group else { throw .invalidMessage }
            let sender = envelope.sender
            let plaintext = try await groupDecrypt(envelope.body, for: group, from: sender, beforePersisting: {
                (plaintext: [UInt8]) async throws(SessionError) in
                try await process(.groupMessage(DecryptedGroupMessage(group: group, sender: sender, plaintext: plaintext)))
            })
            return .groupMessage(DecryptedGroupMessage(group: group, sender: sender, plaintext: plaintext))
        }
    }

    /// The largest plaintext the envelope calls take (1 MiB less 64 KiB and 5 bytes): padded
    /// (SPEC §2: to a multiple of 64 KiB above 64 KiB) it is at most 15 × 64 KiB, so that its
    /// message, with headers, MAC and a post-quantum prekey prefix, fits
    /// `MessageEnvelope.maximumBodyByteCount`.
    public static let maximumEnvelopePlaintextByteCount = MessageEnvelope.maximumBodyByteCount - 65_536 - MessagePadding.overhead

    /// Refuses a plaintext whose message might not fit an envelope, before anything advances.
    static func checkEnvelopeSize(_ plaintext: [UInt8]) throws(SessionError) {
        guard plaintext.count <= maximumEnvelopePlaintextByteCount else {
            throw .invalidConfiguration("a plaintext of \(plaintext.count) bytes is over the envelope limit (\(maximumEnvelopePlaintextByteCount))")
        }
    }

    /// An envelope for bytes this manager produced (within the size checked before).
    static func envelope(
        from sender: ProtocolAddress, to recipient: ProtocolAddress?, kind: MessageEnvelope.Kind, group: GroupID?, body: [UInt8]
    ) throws(SessionError) -> MessageEnvelope {
        do {
            return try MessageEnvelope(sender: sender, recipient: recipient, kind: kind, group: group, body: body)
        } catch {
            throw .invalidConfiguration("envelope: \(error)")
        }
    }
}
