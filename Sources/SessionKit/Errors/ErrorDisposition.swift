/// What an app should do about a `SessionError` (`SessionError.disposition`): one of a few
/// reactions, so that an app handles every error without knowing every case.
///
/// For an incoming message, "acknowledge" means telling the server it may delete its copy.
public enum ErrorDisposition: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The input is malformed, forged, re-attributed or refused by policy: it can never
    /// succeed. Acknowledge and discard it; count it if you monitor abuse. Nothing changed.
    /// For a device link (`deviceLinkMismatch`, or any error of `DeviceLinkRequest.open`):
    /// abort the link, warn the user, and start again with a new request.
    case drop
    /// A replay of a message this device already processed (`duplicateMessage`): acknowledge and
    /// discard it without telling the user, who has already seen it.
    case dropSilently
    /// Not decryptable yet (`unknownChain`: a group message that arrived before its sender's
    /// distribution). `SessionManager` keeps it in its store: acknowledge it; it is returned,
    /// decrypted, with the sender's distribution (`ReceivedMessage.senderKeyDistribution`'s
    /// released messages, or `SessionManager.releasePendingGroupMessages`), and dropped after
    /// `SessionManager.pendingGroupMessageLifetime`.
    case retryLater
    /// Authentic perhaps, but never decryptable on this device (`messageKeyUnavailable`: sent
    /// before this device joined the chain; `unknownPreKey`: its prekey is gone). Acknowledge it,
    /// show a placeholder ("a message could not be decrypted") and, if your protocol has one,
    /// ask the sender to resend.
    case neverDecryptable
    /// There is no usable session (`noSession`; `chainExhausted` for a session or chain that
    /// reached 2^32 messages). To send: fetch the peer's bundle and call
    /// `SessionManager.processBundle(_:for:)`, or rotate a group's sender key. An incoming
    /// message in this state cannot be decrypted; the next session fixes the ones after it.
    case startNewSession
    /// The peer's identity key changed and the user has not accepted it
    /// (`untrustedIdentity`): show the new safety number, ask the user, and if they accept,
    /// call `SessionManager.acceptIdentityChange(_:forUser:)`, then retry the call.
    case askUser
    /// A transient failure (`storage`: the store failed, for example a busy database;
    /// `staleState`: another process kept writing the same state; `cancelled`: the task was
    /// cancelled while it waited; `file`: an attachment's file could not be read or written,
    /// for example a full disk): retry the same call later with the same bytes. Nothing
    /// changed.
    case retry
    /// This device's own stored state is damaged (`damagedState`, naming the kind) or its
    /// cryptography is unusable (`primitive`): retrying cannot help. Report it and keep the
    /// damaged state for diagnosis. What still works depends on the kind: a damaged identity
    /// or prekeys stop the whole store; a damaged session or group chain affects that peer or
    /// group only (other rows of `SessionKitSQLite`'s store stay usable), and the app may then
    /// delete it (`SessionStore.deleteSession(for:)`, `SenderKeyStore.removeReceiverState`) and
    /// start again with a new session or sender key, losing what was in flight; damaged group
    /// members (`.groupMembers`) affect that group only: set them again
    /// (`SessionManager.setGroupMembers(_:for:)`).
    case stopAndReport
    /// The call itself is wrong (an invalid address, group id or configuration, a call back
    /// into the manager from inside a call, a bundle with a KEM prekey given to a manager
    /// without a KEM): a programming error to fix in the app.
    case fixCaller

    /// The disposition's name.
    public var description: String { rawValue }
}

extension SessionError {
    /// What the app should do about this error (see `ErrorDisposition`).
    public var disposition: ErrorDisposition {
        switch self {
        case .invalidKey, .invalidSignature, .invalidMessage, .tooManySkippedMessages, .invalidPadding,
             .unsupportedVersion, .invalidPayload, .postQuantumRequired, .supersededIdentity, .ownDeviceIdentityMismatch, .notAGroupMember, .deviceLinkMismatch:
            return .drop
        case .duplicateMessage: return .dropSilently
        case .unknownChain: return .retryLater
        case .messageKeyUnavailable, .unknownPreKey: return .neverDecryptable
        case .noSession, .chainExhausted: return .startNewSession
        case .untrustedIdentity: return .askUser
        case .storage, .staleState, .cancelled, .file: return .retry
        case .damagedState, .primitive: return .stopAndReport
        case .invalidAddress, .invalidGroupID, .invalidConfiguration, .reentrantCall, .kemUnavailable: return .fixCaller
        }
    }
}
