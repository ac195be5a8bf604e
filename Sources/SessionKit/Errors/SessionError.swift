import SignalPrimitives

/// The errors of SessionKit. The first thirteen cases and `untrustedIdentity` (SPEC §9's
/// untrusted-identity outcome of a retry notice) are the error names of SPEC §8, which every
/// implementation of the protocol reports identically; `specName` gives that name.
///
/// What an app should do about an error is `disposition`; `errorDescription` (`LocalizedError`)
/// is a sentence for logs and support screens, never holding a key or a plaintext.
public enum SessionError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// A key is unusable: non-canonical on the wire, an invalid Ed25519 point, or an all-zero DH.
    case invalidKey
    /// A signature (signed prekey, sender-key message) does not verify.
    case invalidSignature
    /// A message is malformed, fails authentication or does not match its session.
    case invalidMessage
    /// A message was already decrypted (its key is gone and its counter is behind the chain).
    case duplicateMessage
    /// A message would skip more keys than the configured `maxSkip`.
    case tooManySkippedMessages
    /// A sender-key message names a chain this receiver does not hold.
    case unknownChain
    /// A prekey message names a signed or one-time prekey this responder does not hold.
    case unknownPreKey
    /// A (non-prekey) message arrived for a peer with no session.
    case noSession
    /// An authenticated plaintext does not carry valid padding (SPEC §2).
    case invalidPadding
    /// An unknown version or type byte. Random or damaged bytes usually fail with this too (their
    /// first byte is rarely a known type): drop the message; it is not by itself a sign that the
    /// sender runs a newer version.
    case unsupportedVersion
    /// A malformed payload: an upload, a bundle or another encoded value passed in. A stored
    /// state that does not load reaches a `SessionManager` caller as `damagedState` instead.
    case invalidPayload
    /// A chain counter would exceed 2^32 − 1.
    case chainExhausted
    /// A group message was sent before this member was given the chain (its iteration is below
    /// the one the member's copy of the chain starts at): it can never be decrypted here. Not a
    /// duplicate: the app has not seen it.
    case messageKeyUnavailable

    /// The peer's identity key changed and the app has not accepted the new key yet.
    case untrustedIdentity
    /// A message came under an identity key that the peer's user had before the app accepted
    /// another one (`SessionManager.acceptIdentityChange(_:forUser:)`): an old device, a
    /// restored old state, or someone holding the old key. Refused, nothing recorded.
    case supersededIdentity
    /// A device of the local user (same user id as `SessionManager.localAddress`) presented an
    /// identity key other than the local identity key: a user's devices share one identity
    /// key, so this is a device the server added to the account, not one of ours. Refused,
    /// nothing recorded; a linked device must share the identity (`DeviceLink`).
    case ownDeviceIdentityMismatch
    /// A sender-key distribution or group message from a device that is not a member of the
    /// group (`SessionManager.setGroupMembers(_:for:)`): a stranger, or a removed member.
    /// Refused, nothing stored.
    case notAGroupMember
    /// Linking a device failed in a way that only an attack or a mix-up explains
    /// (`DeviceLinkRequest.open`): the seal was made without the request's secret, for another
    /// request, device or user, or holds another identity than the user's; or (`DeviceLink.seal`)
    /// the scanned code names a device of another user. Never a question for the user: abort
    /// the link and start again with a new request.
    case deviceLinkMismatch
    /// The calling task was cancelled while the call waited for a lock (another call on the
    /// same peer or group held it). Nothing changed: call again when it is still wanted.
    case cancelled
    /// A user id that is empty or longer than 255 UTF-8 bytes (`ProtocolAddress`).
    case invalidAddress
    /// A group id that is empty or longer than 255 bytes (`GroupID`).
    case invalidGroupID
    /// A bundle carries a KEM prekey but this party has no KEM to encapsulate with (pass one,
    /// such as `SessionKitMLKEM`'s `SwiftCryptoMLKEM768`, to the manager).
    case kemUnavailable
    /// Code running inside a `SessionManager` call (a `beforePersisting` step) called back into
    /// the same manager, which would wait for a lock its own task holds.
    case reentrantCall
    /// Post-quantum sessions are required (`SessionConfiguration.requirePostQuantum`) and the
    /// bundle's signed prekey is signed without a KEM prekey, or a prekey message has no KEM
    /// part.
    case postQuantumRequired
    /// A state changed in the store since it was loaded (another process or manager on the same
    /// store wrote it, or an old copy was written back; or it recorded, since, the EK_A of the
    /// prekey message being committed): the write was refused so that no message key is used
    /// twice, no consumed key comes back and no EK_A creates two sessions. `SessionManager`
    /// retries the call from the fresh state; it reaches the app only when the retries are used
    /// up. Also thrown by `SessionRecord.promote` for a session older than the one held.
    case staleState
    /// A state this device stored (named by `kind`) does not load: it was damaged on disk,
    /// written by a broken writer or by a newer version of the library. Not caused by the
    /// message or peer at hand. `peer` names the device whose session (`.session`) or whose
    /// chains (`.senderKeyReceiverState`) it is, when the manager read it for one: only that
    /// device is affected, and deleting its state (`SessionStore.deleteSession(for:)`,
    /// `SenderKeyStore.removeReceiverState(for:sender:)`) and starting anew recovers. A damaged
    /// identity or prekeys stop the whole store (see `disposition`).
    case damagedState(StoredStateKind, peer: ProtocolAddress? = nil)
    /// A configuration value is out of range (for example `maxSkip > maxStored`).
    case invalidConfiguration(String)
    /// A primitive failed for a reason not covered above (for example AES-GCM unavailable).
    case primitive(CryptoError)
    /// A storage backend failed.
    case storage(String)
    /// A file could not be read, written or renamed (attachments: the path and the system's
    /// reason, such as a missing file or a full disk). Nothing was left half-written.
    case file(String)

    /// The SPEC §8 error name, or `nil` for the library-only cases.
    public var specName: String? {
        switch self {
        case .invalidKey: return "invalidKey"
        case .invalidSignature: return "invalidSignature"
        case .invalidMessage: return "invalidMessage"
        case .duplicateMessage: return "duplicateMessage"
        case .tooManySkippedMessages: return "tooManySkippedMessages"
        case .unknownChain: return "unknownChain"
        case .unknownPreKey: return "unknownPreKey"
        case .noSession: return "noSession"
        case .invalidPadding: return "invalidPadding"
        case .unsupportedVersion: return "unsupportedVersion"
        case .invalidPayload: return "invalidPayload"
        case .chainExhausted: return "chainExhausted"
        case .messageKeyUnavailable: return "messageKeyUnavailable"
        case .untrustedIdentity: return "untrustedIdentity"
        case .supersededIdentity, .ownDeviceIdentityMismatch, .notAGroupMember, .deviceLinkMismatch, .cancelled, .invalidAddress, .invalidGroupID, .kemUnavailable, .postQuantumRequired, .reentrantCall,
             .staleState, .damagedState, .invalidConfiguration, .primitive, .storage, .file:
            return nil
        }
    }

    /// Maps a primitive error to the protocol error a receiver reports.
    public init(_ error: CryptoError) {
        switch error {
        case .invalidKey: self = .invalidKey
        case .authenticationFailure, .ciphertextTooShort: self = .invalidMessage
        case .invalidKeyLength, .invalidSignatureLength, .invalidNonceLength: self = .invalidMessage
        default: self = .primitive(error)
        }
    }

    /// A short description without secrets.
    public var description: String {
        switch self {
        case let .invalidConfiguration(why): return "invalidConfiguration(\(why))"
        case let .primitive(error): return "primitive(\(error))"
        case let .storage(why): return "storage(\(why))"
        case let .file(why): return "file(\(why))"
        case .untrustedIdentity: return "untrustedIdentity"
        case .supersededIdentity: return "supersededIdentity"
        case .ownDeviceIdentityMismatch: return "ownDeviceIdentityMismatch"
        case .notAGroupMember: return "notAGroupMember"
        case .deviceLinkMismatch: return "deviceLinkMismatch"
        case .cancelled: return "cancelled"
        case .invalidAddress: return "invalidAddress"
        case .invalidGroupID: return "invalidGroupID"
        case .kemUnavailable: return "kemUnavailable"
        case .postQuantumRequired: return "postQuantumRequired"
        case .reentrantCall: return "reentrantCall"
        case .staleState: return "staleState"
        case let .damagedState(kind, peer): return "damagedState(\(kind)\(peer.map { ", \($0)" } ?? ""))"
        default: return specName ?? "unknown"
        }
    }
}

/// The kind of stored state that failed to load (`SessionError.damagedState`).
public enum StoredStateKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// This device's identity key pair.
    case identity
    /// This device's own prekeys (signed, one-time and KEM prekeys, EK_A records).
    case preKeys
    /// The sessions with one peer device.
    case session
    /// This device's sending chain for a group.
    case senderKeySendingChain
    /// The chains received from one sender in a group.
    case senderKeyReceiverState
    /// A trust record (a peer's identity key and its verification status).
    case trust
    /// A group's member devices, or a group message kept until its distribution arrives.
    case groupMembers

    /// The kind's name.
    public var description: String { rawValue }
}
