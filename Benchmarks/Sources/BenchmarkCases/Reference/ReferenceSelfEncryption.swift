/// SPEC §6 self-encryption, composed naively:
///
///     self_key = HKDF(ZERO32, identity seed, "SessionKit Self v2", 32)
///     sealed   = 0x25 || nonce (24, random) || XAEAD(self_key, nonce, pad(plaintext), aad = 0x25 || nonce || context)
///
/// The key is derived once per identity (as the library's `SelfEncryption` does at
/// initialisation); each seal draws its nonce from the backend's CSPRNG.
struct ReferenceSelfEncryption<B: ReferenceXAEADBackend> {
    private let key: [UInt8]
    private let paddedScratch = ScratchBuffer(count: 2048)

    init(identitySeed: [UInt8]) {
        var key = [UInt8](repeating: 0, count: 32)
        key.withUnsafeMutableBytes { out in
            ReferenceConstants.zero32.withUnsafeBytes { salt in
                identitySeed.withUnsafeBytes { seed in
                    ReferenceConstants.selfInfo.withUnsafeBytes { info in
                        B.hkdfSHA256(salt: salt, inputKeyMaterial: seed, info: info, into: out)
                    }
                }
            }
        }
        self.key = key
    }

    /// Seals under a random nonce.
    func seal(_ plaintext: [UInt8], context: [UInt8]) throws -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 24)
        nonce.withUnsafeMutableBytes { B.randomBytes(into: $0) }
        return try seal(plaintext, context: context, nonce: nonce)
    }

    /// Seals under a given nonce (the vectors fix it).
    func seal(_ plaintext: [UInt8], context: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        let paddedCount = ReferencePadding.paddedCount(plaintext.count)
        let padded = paddedScratch.prefix(paddedCount)
        ReferencePadding.pad(plaintext, into: padded)
        let aad = [ReferenceConstants.selfEncryptedType] + nonce + context
        var sealed = [UInt8](repeating: 0, count: 25 + paddedCount + ReferenceConstants.tagCount)
        sealed[0] = ReferenceConstants.selfEncryptedType
        try sealed.withUnsafeMutableBytes { out in
            slice(out, 1, 24).copyBytes(from: nonce)
            try key.withUnsafeBytes { k in
                try nonce.withUnsafeBytes { n in
                    try aad.withUnsafeBytes { a in
                        try B.xchachaSeal(
                            key: k, nonce: n, plaintext: UnsafeRawBufferPointer(padded), aad: a,
                            into: slice(out, 25, paddedCount + ReferenceConstants.tagCount))
                    }
                }
            }
        }
        return sealed
    }

    /// Opens a sealed blob bound to `context`.
    func open(_ sealed: [UInt8], context: [UInt8]) throws -> [UInt8] {
        guard let type = sealed.first else { throw ReferenceError.invalidMessage }
        guard type == ReferenceConstants.selfEncryptedType else { throw ReferenceError.unsupportedVersion }
        guard sealed.count >= 25 + ReferenceConstants.tagCount else { throw ReferenceError.invalidMessage }
        let aad = Array(sealed[0..<25]) + context
        let padded = paddedScratch.prefix(sealed.count - 25 - ReferenceConstants.tagCount)
        return try sealed.withUnsafeBytes { all in
            try key.withUnsafeBytes { k in
                try aad.withUnsafeBytes { a in
                    try B.xchachaOpen(
                        key: k, nonce: UnsafeRawBufferPointer(rebasing: all[1..<25]),
                        ciphertext: UnsafeRawBufferPointer(rebasing: all[25...]), aad: a, into: padded)
                }
            }
            return try ReferencePadding.unpad(UnsafeRawBufferPointer(padded))
        }
    }
}
