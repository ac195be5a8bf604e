import CSodiumBench

/// The floor: every primitive is one obvious libsodium call (or the obvious sequence of them).
enum SodiumBackend: ReferenceXAEADBackend {
    /// libsodium's 64-byte Ed25519 secret key (seed || public key).
    struct SigningKey {
        let secretKey: [UInt8]
        let publicKey: [UInt8]
    }

    /// libsodium verifies from the 32 raw bytes.
    typealias VerifyingKey = [UInt8]
    /// libsodium computes with the 32 secret bytes.
    typealias AgreementKey = [UInt8]

    /// `sodium_init()`, once.
    static let isReady: Bool = sodium_init() >= 0

    static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        // crypto_auth_hmacsha256 takes a 32-byte key; other lengths go through the state API.
        if key.count == Int(crypto_auth_hmacsha256_KEYBYTES) {
            crypto_auth_hmacsha256(output.u8, message.u8, UInt64(message.count), key.u8)
        } else {
            var state = crypto_auth_hmacsha256_state()
            crypto_auth_hmacsha256_init(&state, key.u8, key.count)
            crypto_auth_hmacsha256_update(&state, message.u8, UInt64(message.count))
            crypto_auth_hmacsha256_final(&state, output.u8)
        }
    }

    static func hkdfSHA256(
        salt: UnsafeRawBufferPointer, inputKeyMaterial: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) {
        // Extract: PRK = HMAC(salt, IKM).
        var prk = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var block = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var state = crypto_auth_hmacsha256_state()
        withUnsafeMutableBytes(of: &prk) { prkBytes in
            withUnsafeMutableBytes(of: &block) { t in
                crypto_auth_hmacsha256_init(&state, salt.u8, salt.count)
                crypto_auth_hmacsha256_update(&state, inputKeyMaterial.u8, UInt64(inputKeyMaterial.count))
                crypto_auth_hmacsha256_final(&state, prkBytes.u8)
                // Expand: T(i) = HMAC(PRK, T(i−1) || info || i), keying the state for every block.
                var produced = 0
                var counter: UInt8 = 1
                while produced < output.count {
                    crypto_auth_hmacsha256_init(&state, prkBytes.u8, 32)
                    if counter > 1 { crypto_auth_hmacsha256_update(&state, t.u8, 32) }
                    crypto_auth_hmacsha256_update(&state, info.u8, UInt64(info.count))
                    crypto_auth_hmacsha256_update(&state, &counter, 1)
                    crypto_auth_hmacsha256_final(&state, t.u8)
                    let take = min(32, output.count - produced)
                    UnsafeMutableRawBufferPointer(rebasing: output[produced..<(produced + take)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: t[0..<take]))
                    produced += take
                    counter &+= 1
                }
            }
        }
    }

    static func sha256(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        crypto_hash_sha256(output.u8, message.u8, UInt64(message.count))
    }

    static func sha512(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        crypto_hash_sha512(output.u8, message.u8, UInt64(message.count))
    }

    static func aesGCMSeal(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        var written: UInt64 = 0
        guard crypto_aead_aes256gcm_encrypt(
            output.u8, &written, plaintext.u8, UInt64(plaintext.count), aad.u8, UInt64(aad.count),
            nil, nonce.u8, key.u8) == 0
        else { throw .invalidMessage }
    }

    static func aesGCMOpen(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        var written: UInt64 = 0
        guard crypto_aead_aes256gcm_decrypt(
            output.u8, &written, nil, ciphertext.u8, UInt64(ciphertext.count), aad.u8, UInt64(aad.count),
            nonce.u8, key.u8) == 0
        else { throw .invalidMessage }
    }

    static func newAgreementKey() -> (key: [UInt8], publicKey: [UInt8]) {
        var secret = [UInt8](repeating: 0, count: 32)
        var publicKey = [UInt8](repeating: 0, count: 32)
        crypto_box_keypair(&publicKey, &secret)
        return (secret, publicKey)
    }

    static func agreementKey(secret: [UInt8]) throws(ReferenceError) -> (key: [UInt8], publicKey: [UInt8]) {
        guard secret.count == 32 else { throw .invalidKey }
        var publicKey = [UInt8](repeating: 0, count: 32)
        guard crypto_scalarmult_base(&publicKey, secret) == 0 else { throw .invalidKey }
        return (secret, publicKey)
    }

    static func restoreAgreementKey(secret: [UInt8], publicKey: [UInt8]) throws(ReferenceError) -> [UInt8] {
        guard secret.count == 32, publicKey.count == 32 else { throw .invalidKey }
        return secret
    }

    static func secretBytes(of key: [UInt8]) -> [UInt8] { key }

    static func x25519(
        secret: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        guard crypto_scalarmult(output.u8, secret.u8, publicKey.u8) == 0 else { throw .invalidKey }
    }

    static func x25519(
        _ key: [UInt8], publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        guard crypto_scalarmult(output.u8, key, publicKey.u8) == 0 else { throw .invalidKey }
    }

    static func signingKey(seed: [UInt8]) throws(ReferenceError) -> SigningKey {
        guard seed.count == 32 else { throw .invalidKey }
        var publicKey = [UInt8](repeating: 0, count: 32)
        var secretKey = [UInt8](repeating: 0, count: 64)
        _ = crypto_sign_seed_keypair(&publicKey, &secretKey, seed)
        return SigningKey(secretKey: secretKey, publicKey: publicKey)
    }

    static func publicKey(of key: SigningKey) -> [UInt8] { key.publicKey }

    static func sign(_ message: UnsafeRawBufferPointer, with key: SigningKey, into output: UnsafeMutableRawBufferPointer) {
        _ = crypto_sign_detached(output.u8, nil, message.u8, UInt64(message.count), key.secretKey)
    }

    static func verifyingKey(_ publicKey: [UInt8]) throws(ReferenceError) -> [UInt8] {
        guard publicKey.count == 32 else { throw .invalidKey }
        return publicKey
    }

    static func verify(_ signature: UnsafeRawBufferPointer, of message: UnsafeRawBufferPointer, with key: [UInt8]) -> Bool {
        signature.count == 64 && crypto_sign_verify_detached(signature.u8, message.u8, UInt64(message.count), key) == 0
    }

    static func ed25519PublicKeyToX25519(_ publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ReferenceError) {
        // libsodium's conversion rejects points off the curve, of small order or outside the
        // prime-order subgroup; with the canonicity of y that is SPEC §1's "valid point"
        // (`crypto_core_ed25519_is_valid_point`) without running the subgroup check twice.
        guard isCanonicalEdwardsY(publicKey), crypto_sign_ed25519_pk_to_curve25519(output.u8, publicKey.u8) == 0
        else { throw .invalidKey }
    }

    static func ed25519SeedToX25519Secret(_ seed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        var digest = [UInt8](repeating: 0, count: 64)
        crypto_hash_sha512(&digest, seed.u8, UInt64(seed.count))
        digest[0] &= 248
        digest[31] &= 127
        digest[31] |= 64
        UnsafeMutableRawBufferPointer(rebasing: output[0..<32]).copyBytes(from: digest[0..<32])
        sodium_memzero(&digest, 64)
    }

    static func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && sodium_memcmp(a.u8, b.u8, a.count) == 0
    }

    static func xchachaSeal(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        var written: UInt64 = 0
        guard crypto_aead_xchacha20poly1305_ietf_encrypt(
            output.u8, &written, plaintext.u8, UInt64(plaintext.count), aad.u8, UInt64(aad.count),
            nil, nonce.u8, key.u8) == 0
        else { throw .invalidMessage }
    }

    static func xchachaOpen(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        var written: UInt64 = 0
        guard crypto_aead_xchacha20poly1305_ietf_decrypt(
            output.u8, &written, nil, ciphertext.u8, UInt64(ciphertext.count), aad.u8, UInt64(aad.count),
            nonce.u8, key.u8) == 0
        else { throw .invalidMessage }
    }

    static func randomBytes(into output: UnsafeMutableRawBufferPointer) {
        randombytes_buf(output.u8, output.count)
    }
}
