import SessionKit

extension TrustStore {
    /// Marks the contact's device `address` verified from a QR payload the user scanned on the
    /// contact's screen: only when the payload names the contact's user (user ids compared as
    /// UTF-8 bytes) and carries the identity key on record for the device (or, with no record
    /// yet, records it). Use this rather than `markVerified(_:for:)` with `payload.identityKey`,
    /// which would verify whatever key a scanned code carries, a third party's included. The
    /// devices of one user share its identity key: call it for each device of the contact.
    /// - Throws: `VerificationError.payloadForAnotherUser` when the payload's user id is not
    ///   `address`'s, `.identityKeyMismatch` when another key is on record for the device,
    ///   `.storage` when a backend fails; nothing changed then.
    public func markVerified(scanned payload: QRPayload, for address: ProtocolAddress) async throws(VerificationError) {
        guard payload.uidBytes.elementsEqual(address.userID.utf8) else { throw .payloadForAnotherUser(address) }
        try await markVerified(payload.identityKey, for: address)
    }
}
