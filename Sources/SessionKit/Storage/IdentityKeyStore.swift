/// Where this device's own identity key pair lives.
public protocol IdentityKeyStore: Sendable {
    /// This device's identity key pair. It does not change while a `SessionManager` uses the
    /// store (the manager reads it once).
    /// - Throws: `SessionError.storage` when the backend fails (or `.invalidPayload` /
    ///   `.unsupportedVersion` for a stored blob that does not load).
    func localIdentity() async throws(SessionError) -> IdentityKeyPair
}
