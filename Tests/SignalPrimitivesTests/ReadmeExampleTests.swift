import SignalPrimitives
import XCTest

/// The SignalPrimitives example of README.md, verbatim between the markers, so the README
/// cannot show code that does not compile or work.
final class ReadmeExampleTests: XCTestCase {
    func testReadmeExampleRuns() throws {
        try XCTSkipUnless(AES256GCM.isAvailable, "the example seals with AES-256-GCM, which needs AES-NI and PCLMUL")
        // README example begins
        // X25519 key agreement: both sides derive the same secret.
        let alice = try X25519.PrivateKey()
        let bob = try X25519.PrivateKey()
        let secret = try alice.sharedSecret(with: bob.publicKey)

        // HKDF-SHA256 turns the secret into a 32-byte AES-256-GCM key.
        let key = try HKDF.deriveKey(inputKeyMaterial: secret, salt: [],
                                     info: Array("example v1".utf8), outputByteCount: 32)

        // AES-256-GCM: 12-byte nonce, 16-byte tag appended to the ciphertext.
        let nonce = SecureRandom.bytes(AES256GCM.nonceByteCount)
        let sealed = try AES256GCM.seal(Array("hello".utf8), using: key, nonce: nonce)
        let opened = try AES256GCM.open(sealed, using: key, nonce: nonce)

        // XChaCha20-Poly1305: a 24-byte nonce, safe to draw at random for any number of messages.
        let xnonce = SecureRandom.bytes(XChaCha20Poly1305.nonceByteCount)
        let xsealed = try XChaCha20Poly1305.seal(Array("hello".utf8), using: key, nonce: xnonce)

        // Ed25519 signatures, verified strictly (libsodium).
        let identity = try Ed25519.PrivateKey()
        let signature = identity.signature(for: sealed)
        let valid = identity.publicKey.isValidSignature(signature, for: sealed)
        // README example ends

        XCTAssertEqual(secret, try bob.sharedSecret(with: alice.publicKey))
        XCTAssertEqual(key.byteCount, 32)
        XCTAssertEqual(sealed.count, 5 + AES256GCM.tagByteCount)
        XCTAssertEqual(opened, Array("hello".utf8))
        XCTAssertTrue(valid)
        XCTAssertEqual(try XChaCha20Poly1305.open(xsealed, using: key, nonce: xnonce), Array("hello".utf8))
    }
}
