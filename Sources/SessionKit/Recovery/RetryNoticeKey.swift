import SignalPrimitives

/// The key K of a retry notice between two identities and the notice's MAC (SPEC §9):
///
///     K   = HKDF(ZERO32, DH(x(IK_local).sk, x(IK_remote).pk), "SessionKit Retry v2", 32)
///     mac = HMAC(K, every byte of the notice before mac)
///
/// Both parties compute the same K (B with its identity and IK_A, A with its identity and
/// IK_B), so the MAC is deniable: it proves nothing to a third party.
struct RetryNoticeKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The MAC's length.
    static let macByteCount = HMACSHA256.byteCount

    /// K (32 secret bytes).
    private let storage: SecureBytes

    /// K between our identity `local` and the peer's identity key `remote`.
    /// - Throws: `SessionError.invalidKey` when `remote` is not a valid Ed25519 point (or the
    ///   DH is all zeros), `.primitive` when the point check cannot run.
    init(local: IdentityKeyPair, remote: Ed25519.PublicKey) throws(SessionError) {
        let remoteAgreementKey: X25519.PublicKey
        do { remoteAgreementKey = try remote.convertToX25519() } catch { throw SessionError(error) }
        storage = try withSecretScratch(X25519.keyByteCount) { (shared: UnsafeMutableRawBufferPointer) throws(SessionError) -> SecureBytes in
            do throws(CryptoError) { try local.agreementKey.sharedSecret(with: remoteAgreementKey, into: shared) } catch { throw SessionError(error) }
            return try SecureBytes(count: 32) { (out: UnsafeMutableRawBufferPointer) throws(SessionError) in
                try ProtocolInfo.retryNotice.withBytes { (info: UnsafeRawBufferPointer) throws(SessionError) in
                    do throws(CryptoError) {
                        try ZeroSaltHKDF.extractor.deriveKey(inputKeyMaterial: UnsafeRawBufferPointer(shared), info: info, into: out)
                    } catch {
                        throw .primitive(error)
                    }
                }
            }
        }
    }

    /// HMAC(K, `bytes`).
    func mac(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var hmac = HMACSHA256(key: storage)
        bytes.withUnsafeBytes { hmac.update(bytes: $0) }
        return hmac.finalize()
    }

    /// A redacted description.
    var description: String { "RetryNoticeKey(redacted)" }
    /// A redacted description.
    var debugDescription: String { description }
}
