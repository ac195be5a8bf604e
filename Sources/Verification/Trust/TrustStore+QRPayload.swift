import SessionKit

extension TrustStore {
    /// Marks the user `userID` verified from a QR payload the user scanned on the contact's
    /// screen: only when the payload names that user (user ids compared as UTF-8 bytes) and
    /// carries the identity key on record for the user, or the key a pending change would
    /// replace (or, with no record yet, records it). Every device of the user with that key is
    /// then verified. Use this rather than `markVerified(_:forUser:)` with
    /// `payload.identityKey`, which would verify whatever key a scanned code carries, a third
    /// party's included. A verified contact who reinstalled has a key that is not on record
    /// (its messages were quarantined): when the scanned key is the quarantined message's
    /// `senderIdentityKey`, pass it to `markVerified(_:forUser:)`.
    /// - Throws: `VerificationError.payloadForAnotherUser` when the payload's user id is not
    ///   `userID`, `.identityKeyMismatch` when another key is on record for the user,
    ///   `.invalidPayload` for a malformed user id, `.storage` when a backend fails; nothing
    ///   changed then.
    public func markVerified(scanned payload: QRPayload, forUser userID: String) async throws(VerificationError) {
        guard payload.uidBytes.elementsEqual(userID.utf8) else { throw .payloadForAnotherUser(userID) }
        if let record = try await record(forUser: userID), record.identityKey != payload.identityKey,
           !record.isKeyBeforePendingChange(payload.identityKey) {
            throw .identityKeyMismatch(userID)
        }
        try await markVerified(payload.identityKey, forUser: userID)
    }
}
