@_spi(Storage) import SessionKit

extension SQLiteProtocolStore: IdentityKeyStore {
    /// This device's identity key pair, read (or created) when the store was opened.
    public func localIdentity() async throws(SessionError) -> IdentityKeyPair { identity }

    /// This installation's registration id (SPEC §9), read (or drawn) when the store was opened.
    public func localRegistrationID() async throws(SessionError) -> RegistrationID { registrationID }
}
