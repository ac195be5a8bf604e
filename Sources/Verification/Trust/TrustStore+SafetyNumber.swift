import SessionKit

extension TrustStore {
    /// The safety number of the local user with the user `userID`, from the identity key on
    /// record for that user (one number per pair of users, whichever device shows it): show
    /// `displayable`, and `scannable` as a QR code, then mark the user verified with
    /// `markVerified(_:forUser:)` (or `markVerified(scanned:forUser:)`) once they compared.
    /// Both phones show the same digits when each holds the other's key.
    /// - Parameters:
    ///   - userID: the contact.
    ///   - localUserID: the local user's id.
    ///   - localIdentityKey: the local identity key (`IdentityKeyPair.publicKey`).
    ///   - generator: the generator (keep one: it caches each side's half).
    ///   - version: the fingerprint version (2, as libsignal uses for service ids).
    /// - Throws: `VerificationError.unknownContact` when no key is on record for the user,
    ///   `.invalidPayload` for a malformed user id, `.storage` when a backend fails.
    public func safetyNumber(
        withUser userID: String, localUserID: String, localIdentityKey: Ed25519.PublicKey,
        generator: FingerprintGenerator, version: UInt32 = 2
    ) async throws(VerificationError) -> Fingerprint {
        guard let record = try await record(forUser: userID) else { throw .unknownContact(userID) }
        return generator.fingerprint(
            version: version, localUserID: localUserID, localIdentityKey: localIdentityKey,
            remoteUserID: userID, remoteIdentityKey: record.identityKey)
    }
}
