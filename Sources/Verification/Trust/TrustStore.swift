import SessionKit

/// Trust on first use (SPEC §7) for identity keys, per (user, device).
///
/// The store records the first identity key seen for each `ProtocolAddress` and trusts it
/// (`TrustStatus.trusted`); the app marks a contact `verified` once the user compared the
/// safety number or scanned the contact's QR code. A different key later is reported as
/// `IdentityObservation.changed`: the contact drops to `unverified` (also from `verified`),
/// and `evaluateIdentity` (the check SessionKit runs before encrypting) refuses sending until the
/// app calls `acceptIdentityChange` (or `markVerified`) for the new key.
///
/// Implementations must perform each call atomically. `InMemoryTrustStore` is the reference
/// implementation; an app may back the protocol with its own database.
public protocol TrustStore: IdentityTrustEvaluator {
    /// Records `identityKey` for `address` and reports whether it is new, the same, or a change.
    /// - Throws: `VerificationError.storage` when a backend fails.
    func observeIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) -> IdentityObservation

    /// The record for `address`, or `nil` if no key was seen.
    /// - Throws: `VerificationError.storage` when a backend fails.
    func record(for address: ProtocolAddress) async throws(VerificationError) -> TrustRecord?

    /// The status of `address` (`unverified` when no key was seen).
    /// - Throws: `VerificationError.storage` when a backend fails.
    func status(for address: ProtocolAddress) async throws(VerificationError) -> TrustStatus

    /// Marks `identityKey` verified for `address` (the user compared the safety number or
    /// scanned the QR code for this key). Records the key if none was seen; verifying the new
    /// key after a change also accepts the change.
    /// - Throws: `VerificationError.identityKeyMismatch` when another key is on record,
    ///   `.storage` when a backend fails.
    func markVerified(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError)

    /// Returns a verified contact to `trusted` (for example when the user withdraws the
    /// verification); other statuses are unchanged.
    /// - Throws: `VerificationError.unknownContact` when no key was seen, `.storage` when a backend fails.
    func clearVerification(for address: ProtocolAddress) async throws(VerificationError)

    /// Accepts the changed key `identityKey` for `address`: the contact becomes `trusted` and
    /// sending is allowed again. Does nothing when no change awaits acceptance for this key.
    /// - Throws: `VerificationError.unknownContact` when no key was seen,
    ///   `.identityKeyMismatch` when `identityKey` is not the key on record (it changed again
    ///   since the app asked the user), `.storage` when a backend fails.
    func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError)

    /// Forgets `address` (the next key seen is a first use).
    /// - Throws: `VerificationError.storage` when a backend fails.
    func removeRecord(for address: ProtocolAddress) async throws(VerificationError)
}
