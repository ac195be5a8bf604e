/// Prekey replenishment from the count the server reports (issue 19's lifecycle gaps).
extension SessionManager {
    /// Replenishes one-time prekeys from the counts your server reports for this device (for a
    /// `PublishedPreKeys`, its `oneTimePreKeyCount` and `oneTimeKEMPreKeyCount`), not from the
    /// count this device holds: a server hands out each key once, used or not, so only its own
    /// count says when bundles are about to go out without one. Below the policy's low-water
    /// mark it generates enough to bring the server back to a full batch (and the same for
    /// one-time KEM prekeys when this manager has a KEM and `serverOneTimeKEMPreKeyCount` is
    /// given); this device then holds at most `LocalPreKeys.heldOneTimePreKeyLimit(policy:)`
    /// keys of a kind, dropping the oldest first (keys handed out long ago and never used).
    /// Returns what to upload (`isEmpty` when the server has enough), with the registration id;
    /// with no prekeys yet, everything, as `maintainPreKeys()` does the first time. Run it when
    /// the server reports its count (on connect, or when it says the stock is low), and
    /// `maintainPreKeys()` for rotation.
    /// - Throws: `SessionError.invalidConfiguration` for a negative count, `.storage` when the
    ///   store fails, `.primitive` when libsodium is unusable, the errors of the KEM; nothing
    ///   changed then.
    public func replenishPreKeys(
        serverOneTimePreKeyCount: Int, serverOneTimeKEMPreKeyCount: Int? = nil
    ) async throws(SessionError) -> PreKeyUpload {
        let identity = try await localIdentity()
        let registrationID = try await localRegistrationID()
        let (now, policy, random, kem) = (clock.now(), preKeyPolicy, random, kem)
        do {
            return try await store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) -> PreKeyUpload in
                guard var current = keys else {
                    let fresh = try LocalPreKeys(identity: identity, now: now, policy: policy, kem: kem, random: random)
                    keys = fresh
                    return fresh.fullUpload(identityKey: identity.publicKey).with(registrationID: registrationID)
                }
                let upload = try current.replenish(
                    serverOneTimePreKeyCount: serverOneTimePreKeyCount, serverOneTimeKEMPreKeyCount: serverOneTimeKEMPreKeyCount,
                    identity: identity, policy: policy, kem: kem, random: random)
                keys = current
                return upload.with(registrationID: registrationID)
            }
        } catch {
            throw Self.stored(error, .preKeys)
        }
    }
}
