import SessionKit

/// Trust on first use (SPEC §7) for identity keys, per user.
///
/// A user's devices share one identity key, so the store keeps one record per user (user ids
/// compared as UTF-8 bytes, `TrustUserID`): the first key seen for the user is trusted
/// (`TrustStatus.trusted`); the app marks the user `verified` once the user compared the
/// safety number or scanned the contact's QR code. Every device presenting the user's key
/// inherits the user's status (a verified contact's new device is verified, and is reported
/// as `IdentityObservation.newDevice` so that the app can tell the user); a different key on
/// a device the record lists is a change (`IdentityObservation.changed`): the user drops to
/// `unverified`, and `evaluateIdentity` (the check SessionKit runs before encrypting) refuses
/// sending to every device of the user until the app accepts either key
/// (`acceptIdentityChange(_:forUser:)`, or `SessionManager.acceptIdentityChange(_:forUser:)`,
/// which also retires the sessions under the other keys), verifies one (`markVerified`) or
/// rejects the change (`rejectIdentityChange(forUser:)`, or
/// `SessionManager.rejectIdentityChange(forUser:)`). A different key on a device id the record
/// does not list is not a change of the user's key
/// (`IdentityObservation.unknownDeviceWithOtherKey`): nothing is recorded. Keys replaced by an
/// accepted change (or by a verified key) are kept as superseded, and messages under them are
/// refused.
///
/// Implementations must perform each call atomically, and apply `TrustRecord`'s transitions
/// (`TrustRecord.observing`, `.decision`, `.verifying`, `.accepting`, `.rejecting`).
/// `InMemoryTrustStore` is the reference implementation; an app may back the protocol with its
/// own database.
public protocol TrustStore: IdentityTrustEvaluator {
    /// Records `identityKey` seen on the device `address` and reports whether it is new to the
    /// user, the user's key (on a known or a new device), a change (on a listed device), or
    /// another key on a device the record does not list (nothing recorded).
    /// - Throws: `VerificationError.storage` when a backend fails.
    func observeIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) async throws(VerificationError) -> IdentityObservation

    /// The record for the user `userID`, or `nil` if no key was seen.
    /// - Throws: `VerificationError.invalidPayload` for a user id that is not 1–255 UTF-8 bytes,
    ///   `.storage` when a backend fails.
    func record(forUser userID: String) async throws(VerificationError) -> TrustRecord?

    /// The status of the user `userID` (`unverified` when no key was seen).
    /// - Throws: as `record(forUser:)`.
    func status(forUser userID: String) async throws(VerificationError) -> TrustStatus

    /// Marks `identityKey` verified for the user `userID` because the user compared the safety
    /// number for this key with the contact (`TrustRecord.verifying`): every device with this
    /// key is then verified. Verifying is accepting and marking verified in one step: it
    /// records the key if none was seen, ends a pending change (either key), and replaces
    /// another key on record (a verified contact who reinstalled: the quarantined message's
    /// `senderIdentityKey`), superseding it. Pass only a key whose safety number the user
    /// compared; for a scanned code use `markVerified(scanned:forUser:)`, which checks it.
    /// `SessionManager.acceptIdentityChange(_:forUser:)` with the same key afterwards keeps
    /// the status and retires the sessions under other keys.
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id, `.storage` when a
    ///   backend fails.
    func markVerified(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws(VerificationError)

    /// Returns a verified user to `trusted` (for example when the user withdraws the
    /// verification); other statuses are unchanged.
    /// - Throws: `VerificationError.unknownContact` when no key was seen, `.invalidPayload` for
    ///   a malformed user id, `.storage` when a backend fails.
    func clearVerification(forUser userID: String) async throws(VerificationError)

    /// Accepts `identityKey` for the user `userID` (`TrustRecord.accepting`). While a change
    /// awaits acceptance either key may be accepted: the new key becomes `trusted` and the key
    /// it replaced superseded; the key it would replace is restored, `trusted` (the pending key
    /// dropped). A key that is not on record (a quarantined message's) replaces a trusted or
    /// verified user's key, trusted, without superseding it (the user's listed devices may
    /// still present it: their messages are then reported, not refused). With no record, the
    /// key is trusted. Sending is allowed again in each case. Prefer
    /// `SessionManager.acceptIdentityChange(_:forUser:)`, which calls this and retires the
    /// sessions under other keys.
    /// - Throws: `VerificationError.identityKeyMismatch` for a third key while a change awaits
    ///   acceptance (it changed again since the app asked the user), `.invalidPayload` for a
    ///   malformed user id, `.storage` when a backend fails.
    func acceptIdentityChange(_ identityKey: Ed25519.PublicKey, forUser userID: String) async throws(VerificationError)

    /// Rejects the change of the user `userID`'s key that awaits acceptance
    /// (`TrustRecord.rejecting`): the key it would replace is restored, `trusted`, sending to it
    /// is allowed again, and the pending key is dropped (not superseded: seen again, it is
    /// reported again). Nothing changes when no change awaits acceptance. Returns the user's key
    /// on record afterwards. Prefer `SessionManager.rejectIdentityChange(forUser:)`, which calls
    /// this and retires the sessions under the pending key. The default reads the record and
    /// accepts the key before the change, in two steps; the stores of this library do it in
    /// one.
    /// - Throws: `VerificationError.unknownContact` when there is no record, `.invalidPayload`
    ///   for a malformed user id, `.storage` when a backend fails.
    @discardableResult
    func rejectIdentityChange(forUser userID: String) async throws(VerificationError) -> Ed25519.PublicKey

    /// Forgets the user `userID` (the next key seen is a first use, superseded keys included).
    /// - Throws: `VerificationError.invalidPayload` for a malformed user id, `.storage` when a
    ///   backend fails.
    func removeRecord(forUser userID: String) async throws(VerificationError)
}

extension TrustStore {
    /// The default rejection: reads the record, then accepts the key before the pending change
    /// (`acceptIdentityChange`), which restores it.
    /// - Throws: `VerificationError.unknownContact` when there is no record, the errors of
    ///   `record(forUser:)` and `acceptIdentityChange(_:forUser:)`.
    @discardableResult
    public func rejectIdentityChange(forUser userID: String) async throws(VerificationError) -> Ed25519.PublicKey {
        guard let record = try await record(forUser: userID) else { throw .unknownContact(userID) }
        guard record.isAwaitingAcceptance, let previous = record.previousIdentityKey else { return record.identityKey }
        try await acceptIdentityChange(previous, forUser: userID)
        return previous
    }

    /// SessionKit's rejection step (`IdentityTrustEvaluator`): `rejectIdentityChange(forUser:)`;
    /// `nil` when there is no record.
    /// - Throws: the errors of `rejectIdentityChange(forUser:)` other than `unknownContact`.
    public func rejectIdentity(forUser userID: String) async throws -> Ed25519.PublicKey? {
        do {
            return try await rejectIdentityChange(forUser: userID)
        } catch .unknownContact {
            return nil
        }
    }

    /// SessionKit's key lookup (`IdentityTrustEvaluator`): the key of `record(forUser:)`
    /// (after a change that awaits acceptance, the new key).
    /// - Throws: the errors of `record(forUser:)`.
    public func trustedIdentityKey(forUser userID: String) async throws -> Ed25519.PublicKey? {
        try await record(forUser: userID)?.identityKey
    }

    /// SessionKit's acceptance step (`IdentityTrustEvaluator`): `acceptIdentityChange(_:forUser:)`.
    /// - Throws: `SessionError.untrustedIdentity` for a third key while a change awaits
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
