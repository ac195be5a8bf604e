#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SessionError: LocalizedError {
    /// A sentence for logs and support screens. It names the error and the state kind, never a
    /// key, a plaintext or a message's bytes.
    public var errorDescription: String? {
        switch self {
        case .invalidKey: return "A key is invalid (not canonical, not a valid point, or an all-zero shared secret)."
        case .invalidSignature: return "A signature does not verify."
        case .invalidMessage: return "The message is malformed, forged or does not belong to its session."
        case .duplicateMessage: return "The message was already decrypted."
        case .tooManySkippedMessages: return "The message would skip more message keys than the session allows."
        case .unknownChain: return "The group message's sender key has not been received yet."
        case .unknownPreKey: return "The message names a prekey this device no longer holds."
        case .noSession: return "There is no session with this device."
        case .invalidPadding: return "The decrypted message has invalid padding."
        case .unsupportedVersion: return "The message or value has an unsupported version."
        case .invalidPayload: return "The encoded value is malformed."
        case .chainExhausted: return "The chain has sent its maximum number of messages; start a new session or sender key."
        case .messageKeyUnavailable: return "The group message was sent before this device received the sender key; it cannot be decrypted here."
        case .untrustedIdentity: return "The contact's identity key changed and has not been accepted."
        case .supersededIdentity: return "The message came under an identity key the contact had before the accepted change; it was refused."
        case .cancelled: return "The call was cancelled while it waited for another call on the same peer or group; nothing changed."
        case .notAGroupMember: return "The sender is not a member of the group; its message was refused."
        case .ownDeviceIdentityMismatch: return "A device of this account presented another identity key; it is not one of this user's devices."
        case .deviceLinkMismatch: return "The device link does not match this request, device or user identity; it was aborted."
        case .invalidAddress: return "The user id is empty or longer than 255 UTF-8 bytes."
        case .invalidGroupID: return "The group id is empty or longer than 255 bytes."
        case .kemUnavailable: return "The bundle has a post-quantum prekey but no KEM was given to the session manager."
        case .reentrantCall: return "A step running inside a session manager call called back into the same manager."
        case .postQuantumRequired: return "A post-quantum session is required, but the bundle or message is classic."
        case .staleState: return "The stored state kept changing under this call (another writer on the same store)."
        case let .damagedState(kind, peer):
            switch kind {
            case .identity, .preKeys: return "This device's stored \(kind) state does not load: the store is damaged."
            case .session:
                return "This device's stored session\(peer.map { " with \($0)" } ?? "") does not load; other sessions are unaffected: delete it and start a new session."
            default:
                return "This device's stored \(kind) state\(peer.map { " for \($0)" } ?? "") does not load; the rest of the store is unaffected: delete it and start anew."
            }
        case let .invalidConfiguration(why): return "Invalid configuration: \(why)."
        case let .primitive(error): return "A cryptographic primitive failed: \(error)."
        case let .storage(why): return "The store failed: \(why)."
        case let .file(why): return "A file could not be read or written: \(why)."
        }
    }
}
