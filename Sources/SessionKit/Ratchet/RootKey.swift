import SignalPrimitives

/// The Double Ratchet root key RK (SPEC §4), advanced by KDF_RK at every DH ratchet step.
struct RootKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Length of a root key.
    static let byteCount = 32
    /// The 32 secret bytes.
    let storage: SecureBytes

    /// Wraps 32 secret bytes (the X3DH shared secret SK for a new session).
    init(storage: SecureBytes) { self.storage = storage }

    /// KDF_RK(rk, dh) = HKDF(rk, dh, "SessionKit Ratchet v2", 64) → (rk' = [0,32), ck = [32,64)).
    func ratchet(dhOutput: UnsafeRawBufferPointer) -> (rootKey: RootKey, chainKey: ChainKey) {
        withSecretScratch(96) { (scratch: UnsafeMutableRawBufferPointer) -> (RootKey, ChainKey) in
            let prk = scratch.slice(0 ..< 32)
            let okm = scratch.slice(32 ..< 96)
            var extract = HMACSHA256(key: storage)
            extract.update(bytes: dhOutput)
            // Fixed 32- and 64-byte buffers: neither call can fail.
            try? extract.finalize(into: prk)
            ProtocolInfo.ratchet.withUnsafeBytes { info in
                try? HKDF.expand(pseudoRandomKey: UnsafeRawBufferPointer(prk), info: info, into: okm)
            }
            let rootKey = SecureBytes(copying: UnsafeRawBufferPointer(okm.slice(0 ..< 32)))
            let chainKey = SecureBytes(copying: UnsafeRawBufferPointer(okm.slice(32 ..< 64)))
            return (RootKey(storage: rootKey), ChainKey(storage: chainKey))
        }
    }

    /// KDF_RK(rk, DH(privateKey, publicKey)).
    /// - Throws: `SessionError.invalidKey` when the DH output is all zeros.
    func ratchet(privateKey: X25519.PrivateKey, publicKey: X25519.PublicKey) throws(SessionError) -> (rootKey: RootKey, chainKey: ChainKey) {
        try withSecretScratch(X25519.keyByteCount) { (shared: UnsafeMutableRawBufferPointer) throws(SessionError) in
            do throws(CryptoError) { try privateKey.sharedSecret(with: publicKey, into: shared) } catch { throw SessionError(error) }
            return ratchet(dhOutput: UnsafeRawBufferPointer(shared))
        }
    }

    /// A redacted description.
    var description: String { "RootKey(redacted)" }
    /// A redacted description.
    var debugDescription: String { description }
}
