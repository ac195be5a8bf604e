import CSodium

extension Ed25519.PublicKey {
    /// The X25519 public key of the same point: u = (1 + y) / (1 − y) mod p.
    ///
    /// The key must first be a valid point (canonical, on the curve, not of small order, in
    /// the prime-order subgroup, as `crypto_core_ed25519_is_valid_point` decides). The map is
    /// computed with this library's GF(2^255 − 19) arithmetic; it equals libsodium's
    /// `crypto_sign_ed25519_pk_to_curve25519`.
    /// - Throws: `CryptoError.invalidKey` for an invalid point, `.unsoundPointValidation` when
    ///   the linked libsodium failed the self-check of SPEC §1 (see `Sodium`).
    public func convertToX25519() throws(CryptoError) -> X25519.PublicKey {
        try validatePoint()
        let y = FieldElement(bytes: rawRepresentation)
        return try X25519.PublicKey(rawRepresentation: FieldElement.montgomeryU(fromEdwardsY: y).encoded)
    }
}

extension X25519.PublicKey {
    /// The Ed25519 public key with sign bit 0 for this u-coordinate (XEdDSA's `convert_mont`):
    /// u' = u with bit 255 cleared, reduced mod p; y = (u' − 1)·(u' + 1)^(p−2) mod p.
    /// Defined for every 32-byte input (u' = p − 1 gives y = 0).
    public func convertToEd25519() -> Ed25519.PublicKey {
        let u = FieldElement(bytes: rawRepresentation)
        let y = (u - FieldElement.one) * (u + FieldElement.one).inverted()
        return Ed25519.PublicKey(uncheckedBytes: y.encoded)
    }
}

extension Ed25519.PrivateKey {
    /// The X25519 private key for the same identity: the first 32 bytes of SHA-512(seed),
    /// clamped (h[0] &= 248, h[31] &= 127, h[31] |= 64). Its public key equals
    /// `publicKey.convertToX25519()`.
    public func convertToX25519() -> X25519.PrivateKey {
        let scalar = SecureBytes(count: X25519.keyByteCount) { (out: UnsafeMutableRawBufferPointer) in
            var digest = SHA512()
            withUnsafeSeedBytes { digest.update(bytes: $0) }
            var h = digest.finalize()
            h[0] &= 248
            h[31] &= 127
            h[31] |= 64
            out.copyBytes(from: h[0..<32])
            SecureMemory.zero(&h)
        }
        return X25519.PrivateKey(exactly32: scalar)
    }
}
