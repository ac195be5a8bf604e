/// Where this device's own identity key pair and registration id live.
public protocol IdentityKeyStore: Sendable {
    /// This device's identity key pair. It does not change while a `SessionManager` uses the
    /// store (the manager reads it once).
    /// - Throws: `SessionError.storage` when the backend fails (or `.invalidPayload` /
    ///   `.unsupportedVersion` for a stored blob that does not load).
    func localIdentity() async throws(SessionError) -> IdentityKeyPair

    /// This installation's registration id (SPEC §9): drawn once when the store is created
    /// (`RegistrationID.random()`), kept with the identity, and never reused by another
    /// installation, also one that restores the same identity (it draws its own). It does not
    /// change while a `SessionManager` uses the store (the manager reads it once).
    /// - Throws: `SessionError.storage` when the backend fails (or `.invalidPayload` for a
    ///   stored value that does not load).
    func localRegistrationID() async throws(SessionError) -> RegistrationID
}
