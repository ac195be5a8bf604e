#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignalPrimitives

/// Why `PublishedPreKeys` refused an upload or a stored value. Nothing changed when it is
/// thrown. Descriptions name ids and counts, never key bytes (all of it is public anyway).
///
/// For a server: `otherIdentity` and `otherRegistration` are a re-registration
/// (`PublishedPreKeys(registering:)`);
/// `staleSignedPreKey` is a replayed or reordered upload (answer it as a conflict: the device
/// already published a newer signed prekey); `tooManyKeys` is a device that uploads more than
/// any `SessionManager` holds; every other case is a malformed or forged upload.
public enum PublishedPreKeysError: Error, Equatable, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// The upload is of another identity key than the one registered: the device registered
    /// again (use `PublishedPreKeys(registering:)`, which drops what was published before).
    case otherIdentity
    /// The upload carries another registration id (`uploaded`) than the one registered
    /// (`held`): the installation was reinstalled or restored with the same identity (SPEC §9);
    /// use `PublishedPreKeys(registering:)`, which drops what was published before (the old
    /// installation's prekeys are gone with it).
    case otherRegistration(held: RegistrationID, uploaded: RegistrationID)
    /// The identity key is not a valid Ed25519 point (not canonical, not on the curve, of
    /// small order or outside the prime-order subgroup: `Ed25519.PublicKey.isValidPoint`).
    /// Every initiator would refuse its bundles.
    case invalidIdentityKey
    /// A first upload (or a stored value) without a signed prekey.
    case missingSignedPreKey
    /// The upload's signed prekey (id `uploaded`) is older than the one held (id `held`): a
    /// replayed or reordered upload, which must not bring back a replaced signed prekey.
    case staleSignedPreKey(held: UInt32, uploaded: UInt32)
    /// A key with the id of a held key (`id`) but other bytes: the signed prekey (or its
    /// last-resort KEM prekey), a one-time prekey or a one-time KEM prekey.
    case conflictingKey(id: UInt32)
    /// More than `PublishedPreKeys.maximumHeldKeys` one-time prekeys (or one-time KEM prekeys)
    /// would be held for the device.
    case tooManyKeys(limit: Int)
    /// A key is unusable: a one-time prekey or signed prekey that is not a canonical X25519 key,
    /// or an ML-KEM key that fails FIPS 203's input check.
    case invalidKey
    /// The signature of the signed prekey or of a KEM prekey does not verify under the
    /// identity key.
    case invalidSignature
    /// A malformed upload or stored value: KEM prekeys that do not match the signed prekey's
    /// `kem` bit (one-time KEM prekeys for a signed prekey that does not sign them, a missing or
    /// extra last-resort KEM prekey), or bytes that do not decode
    /// (`PublishedPreKeys(serialized:)`).
    case invalidPayload
    /// A stored value of a version this library does not read (`PublishedPreKeys(serialized:)`).
    case unsupportedVersion
    /// libsodium is unusable, or its point validation is unsound (SPEC §1's self-check): the
    /// identity key could not be checked.
    case primitive(CryptoError)

    /// The error for a key check of SessionKit that failed with `error`.
    init(_ error: SessionError) {
        switch error {
        case .invalidKey: self = .invalidKey
        case .invalidSignature: self = .invalidSignature
        case .unsupportedVersion: self = .unsupportedVersion
        case let .primitive(cause): self = .primitive(cause)
        default: self = .invalidPayload
        }
    }

    /// A short description (ids and counts only).
    public var description: String {
        switch self {
        case .otherIdentity: return "the upload is of another identity key (a re-registration)"
        case let .otherRegistration(held, uploaded):
            return "the upload's registration id \(uploaded) is not the registered \(held) (a re-registration)"
        case .invalidIdentityKey: return "the identity key is not a valid Ed25519 point"
        case .missingSignedPreKey: return "the upload has no signed prekey"
        case let .staleSignedPreKey(held, uploaded):
            return "the upload's signed prekey \(uploaded) is older than the published signed prekey \(held)"
        case let .conflictingKey(id): return "the upload has a key with the id \(id) of a published key, but other bytes"
        case let .tooManyKeys(limit): return "the upload would publish more than \(limit) one-time keys of a kind"
        case .invalidKey: return "the upload has an invalid key"
        case .invalidSignature: return "a signature of the upload does not verify"
        case .invalidPayload: return "the upload is malformed"
        case .unsupportedVersion: return "the stored published prekeys have an unsupported version"
        case let .primitive(error): return "the keys could not be checked: \(error)"
        }
    }

    /// The description as a sentence.
    public var errorDescription: String? { "Prekey upload refused: \(description)." }
}
