import CSodiumBench
import Crypto

/// The swift-crypto reference: each primitive through swift-crypto's public API, used the way
/// its documentation shows (a `SymmetricKey` per key, `HMAC<SHA256>`, `HKDF<SHA256>`,
/// `AES.GCM`, `Curve25519`). swift-crypto has no Ed25519 → X25519 public-key conversion, so
/// that one step (with its point validation) is libsodium's, as in the floor.
enum SwiftCryptoBackend: ReferenceBackend {
    typealias SigningKey = Curve25519.Signing.PrivateKey
    typealias VerifyingKey = Curve25519.Signing.PublicKey
    typealias AgreementKey = Curve25519.KeyAgreement.PrivateKey

    static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))
        code.withUnsafeBytes { output.copyMemory(from: $0) }
    }

    static func hkdfSHA256(
        salt: UnsafeRawBufferPointer, inputKeyMaterial: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) {
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: inputKeyMaterial), salt: salt, info: info,
            outputByteCount: output.count)
        key.withUnsafeBytes { output.copyMemory(from: $0) }
    }

    static func sha256(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        SHA256.hash(data: message).withUnsafeBytes { output.copyMemory(from: $0) }
    }

    static func sha512(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        SHA512.hash(data: message).withUnsafeBytes { output.copyMemory(from: $0) }
    }

    static func aesGCMSeal(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        do {
            let box = try AES.GCM.seal(
                plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
            box.ciphertext.withUnsafeBytes { ciphertext in
                UnsafeMutableRawBufferPointer(rebasing: output[0..<ciphertext.count]).copyMemory(from: ciphertext)
                box.tag.withUnsafeBytes { tag in
                    UnsafeMutableRawBufferPointer(rebasing: output[ciphertext.count..<(ciphertext.count + 16)])
                        .copyMemory(from: tag)
                }
            }
        } catch {
            throw .invalidMessage
        }
    }

    static func aesGCMOpen(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        guard ciphertext.count >= 16 else { throw .invalidMessage }
        let split = ciphertext.count - 16
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce), ciphertext: UnsafeRawBufferPointer(rebasing: ciphertext[0..<split]),
                tag: UnsafeRawBufferPointer(rebasing: ciphertext[split...]))
            let plaintext = try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: aad)
            plaintext.withUnsafeBytes { output.copyMemory(from: $0) }
        } catch {
            throw .invalidMessage
        }
    }

    static func newAgreementKey() -> (key: AgreementKey, publicKey: [UInt8]) {
        let key = Curve25519.KeyAgreement.PrivateKey()
        return (key, Array(key.publicKey.rawRepresentation))
    }

    static func agreementKey(secret: [UInt8]) throws(ReferenceError) -> (key: AgreementKey, publicKey: [UInt8]) {
        do {
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secret)
            return (key, Array(key.publicKey.rawRepresentation))
        } catch {
            throw .invalidKey
        }
    }

    static func restoreAgreementKey(secret: [UInt8], publicKey: [UInt8]) throws(ReferenceError) -> AgreementKey {
        // swift-crypto recomputes the public key from the secret; there is no other way in.
        try agreementKey(secret: secret).key
    }

    static func secretBytes(of key: AgreementKey) -> [UInt8] { Array(key.rawRepresentation) }

    static func x25519(
        secret: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        // swift-crypto takes a secret only as a key object, which computes its public key too.
        do {
            try x25519(Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secret), publicKey: publicKey, into: output)
        } catch {
            throw .invalidKey
        }
    }

    static func x25519(
        _ key: AgreementKey, publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(ReferenceError) {
        do {
            let peer = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey)
            let shared = try key.sharedSecretFromKeyAgreement(with: peer)
            shared.withUnsafeBytes { output.copyMemory(from: $0) }
        } catch {
            throw .invalidKey
        }
    }

    static func signingKey(seed: [UInt8]) throws(ReferenceError) -> SigningKey {
        do { return try Curve25519.Signing.PrivateKey(rawRepresentation: seed) } catch { throw .invalidKey }
    }

    static func publicKey(of key: SigningKey) -> [UInt8] { Array(key.publicKey.rawRepresentation) }

    static func sign(_ message: UnsafeRawBufferPointer, with key: SigningKey, into output: UnsafeMutableRawBufferPointer) {
        guard let signature = try? key.signature(for: message) else { return }
        signature.withUnsafeBytes { output.copyMemory(from: $0) }
    }

    static func verifyingKey(_ publicKey: [UInt8]) throws(ReferenceError) -> VerifyingKey {
        do { return try Curve25519.Signing.PublicKey(rawRepresentation: publicKey) } catch { throw .invalidKey }
    }

    static func verify(_ signature: UnsafeRawBufferPointer, of message: UnsafeRawBufferPointer, with key: VerifyingKey) -> Bool {
        key.isValidSignature(signature, for: message)
    }

    static func ed25519PublicKeyToX25519(_ publicKey: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(ReferenceError) {
        try SodiumBackend.ed25519PublicKeyToX25519(publicKey, into: output)
    }

    static func ed25519SeedToX25519Secret(_ seed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        var digest = SHA512.hash(data: seed).withUnsafeBytes { Array($0) }
        digest[0] &= 248
        digest[31] &= 127
        digest[31] |= 64
        UnsafeMutableRawBufferPointer(rebasing: output[0..<32]).copyBytes(from: digest[0..<32])
        for index in digest.indices { digest[index] = 0 }
    }

    static func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        // swift-crypto has no public constant-time comparison of raw bytes: the usual loop.
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
