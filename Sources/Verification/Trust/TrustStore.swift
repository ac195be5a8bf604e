import SessionKit

/// Trust on first use (SPEC §7) for identity keys, per user.
///
/// A user's devices share one identity key, so the store keeps one record per user (user ids
/// compared as UTF-8 bytes, `TrustUserID`): the first key seen for the user is trusted
/// (`TrustStatus.trusted`); the app marks the user `verified` once the user compared the
/// safety number or scanned the contact's QR code. Every device presenting the user's key
/// inherits the user's status (a verified contact's new device is verified, and is reported
/// as `IdentityObservation.newDevice` so that the app can tell the user); a different key on
/// any device, a new device id included, is a change (`IdentityObservation.changed`): the user
/// drops to `unverified`, and `evaluateIdentity` (the check SessionKit runs before encrypting)
/// refuses sending to every device of the user until the app accepts the new key
/// (`acceptIdentityChange(_:forUser:)`, or `SessionManager.acceptIdentityChange(_:forUser:)`, which
/// also retires the sessions under the old key) or verifies it (`markVerified`). Keys the app
/// replaced are kept as superseded, and messages under them are refused.
///
/// Implementations must perform each call atomically, and apply `TrustRecord`'s transitions
/// (`TrustRecord.observing`, `.decision`, `.verifying`, `.accepting`). `InMemoryTrustStore`
/// is the reference implementation; an app may back the protocol with its own database.
public protocol TrustStore: IdentityTrustEvaluator {
    /// Records `identityKey` seen on the device `address` and reports whether it is new to the
    /// user, the user's key (on a known or a new device), or a change.
    /// - Throws: `VerificationError.storage` when a backend fails.
    func observeIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) -> IdentityObservation

    /// The record for the user `userID`, or `nil` if no key was seen.
    /// - Throws: `VerificationError.invalidPayload` for a user id that is not 1–255 UTF-8 bytes,
    ///   `.storage` when a backend fails.
    func record(forUser userID: String) async throws(VerificationError) -> TrustRecord?

    /// The status of the user `userID` (`unverified` when no key was seen).
    /// - Throws: as `record(forUser:)`.
    func status(forUser userID: String) async throws(VerificationError) -> TrustStatus

    /// Marks `identityKey` verified for the user `userID` (the user compared the safety number
    /// or scanned the QR code for this key): every device with this key is then verified.
    /// Records the key if none was seen; verifying the new key after a change also accepts
    /// the change.
    /// - Throws: `VerificationError.identityKeyMismatch` when another key is on record,
    ///   `.invalidPayload` for a malformed user id, `.storage` when a backend fails.
    func markVerified(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws(VerificationError)

    /// Returns a verified user to `trusted` (for example when the user withdraws the
    /// verification); other statuses are unchanged.
    /// - Throws: `VerificationError.unknownContact` when no key was seen, `.invalidPayload` for
    ///   a malformed user id, `.storage` when a backend fails.
    func clearVerification(forUser userID: String) async throws(VerificationError)

    /// Accepts `identityKey` for the user `userID` (`TrustRecord.accepting`): the key on record
    /// after a change becomes `trusted` and sending is allowed again; a key that is not on
    /// record (a quarantined message's) replaces a trusted or verified user's key, trusted.
    /// The replaced key becomes superseded. With no record, the key is trusted. Prefer
    /// `SessionManager.acceptIdentityChange(_:forUser:)`, which calls this and retires the
    /// sessions under other keys.
    /// - Throws: `VerificationError.identityKeyMismatch` when a change to another key awaits
    ///   acceptance (it changed again since the app asked the user), `.invalidPayload` for a
    ///   malformed user id, `.storage` when a backend fails.
    func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws(VerificationError)

    /// Forgets the user `userID` (the next key seen is a first use, superseded keys included).
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id, `.storage` when a
    ///   backend fails.
    func removeRecord(forUser userID: String) async throws(VerificationError)
}

extension TrustStore {
    /// SessionKit's key lookup (`IdentityTrustEvaluator`): the key of `record(forUser:)`
    /// (after a change that awaits acceptance, the new key).
    /// - Throws: the errors of `record(forUser:)`.
    public func trustedIdentityKey(forUser userID: String) async throws -> Ed25519.PublicKey? {
        try await record(forUser: userID)?.identityKey
    }

    /// SessionKit's acceptance step (`IdentityTrustEvaluator`): `acceptIdentityChange(_:forUser:)`.
    /// - Throws: `SessionError.untrustedIdentity` when a change to another key awaits
    ///   acceptance (`VerificationError.identityKeyMismatch`: the key changed again since the
    ///   app asked the user, so ask again), the other errors of
    ///   `acceptIdentityChange(_:forUser:)`.
    public func acceptIdentity(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws {
        do {
            try await acceptIdentityChange(identityKey, forUser: userID)
        } catch .identityKeyMismatch {
            throw SessionError.untrustedIdentity
        }
    }
}
