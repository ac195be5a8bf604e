import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Every type that holds a secret renders without it: `description`, `debugDescription`,
/// interpolation and `dump`. Where two values can differ only in their secret, they must
/// render identically, so nothing derived from the secret (an HMAC state, a hash) leaks either.
final class SecretRedactionTests: XCTestCase {
    let (k1, k2) = Redaction.secrets

    // MARK: SignalPrimitives

    func testSecureBytesAndSymmetricKeysRenderOnlyTheirLength() {
        Redaction.assertHides(k1, in: SecureBytes(copying: k1), "SecureBytes")
        Redaction.assertRendersIndependentlyOfSecret(SecureBytes(copying: k1), SecureBytes(copying: k2), "SecureBytes")
        Redaction.assertHides(k1, in: SymmetricKey(data: k1), "SymmetricKey")
        Redaction.assertRendersIndependentlyOfSecret(SymmetricKey(data: k1), SymmetricKey(data: k2), "SymmetricKey")
    }

    func testPrivateKeysRenderTheirPublicKeyOnly() throws {
        let x = try X25519.PrivateKey(rawRepresentation: k1)
        Redaction.assertHides(k1, in: x, "X25519.PrivateKey")
        XCTAssertTrue(x.description.contains(x.publicKey.hexString))
        let ed = try Ed25519.PrivateKey(seed: k1)
        Redaction.assertHides(k1, in: ed, "Ed25519.PrivateKey seed")
        // libsodium's expanded signing key is seed || public key; its secret half is the seed,
        // and the SHA-512 of the seed (the signing scalar) must not show either.
        Redaction.assertHides(Array(SHA512.hash(k1).prefix(32)), in: ed, "Ed25519.PrivateKey scalar")
        XCTAssertTrue(ed.description.contains(ed.publicKey.hexString))
        let converted = ed.convertToX25519()
        Redaction.assertHides(converted.rawRepresentation, in: converted, "converted X25519.PrivateKey")
        let shared = try x.sharedSecret(with: try X25519.PrivateKey(rawRepresentation: k2).publicKey)
        Redaction.assertHides(shared.withUnsafeBytes { Array($0) }, in: shared, "DH output")
    }

    func testAKeyedHMACDoesNotRenderItsKeyedState() {
        var first = HMACSHA256(key: k1)
        var second = HMACSHA256(key: k2)
        Redaction.assertHides(k1, in: first, "HMACSHA256")
        Redaction.assertRendersIndependentlyOfSecret(first, second, "HMACSHA256")
        first.update(Array("same message".utf8))
        second.update(Array("same message".utf8))
        Redaction.assertRendersIndependentlyOfSecret(first, second, "HMACSHA256 after update")
    }

    func testAnHKDFExtractorDoesNotRenderItsKeyedSalt() {
        // The ratchet uses the root key as HKDF salt, so a salt can be a secret.
        Redaction.assertHides(k1, in: HKDF.Extractor(salt: k1), "HKDF.Extractor")
        Redaction.assertRendersIndependentlyOfSecret(HKDF.Extractor(salt: k1), HKDF.Extractor(salt: k2), "HKDF.Extractor")
    }

    // MARK: SessionKit sender keys and self-encryption

    func testSenderKeyChainsAndMessageKeysRenderWithoutKeys() throws {
        let signing = try Ed25519.PrivateKey(seed: k2)
        let group = groupID("g"), sender = address("alice", 1)
        var chain = try SenderKeySendingChain(group: group, sender: sender, initialChainKey: k1, signingKey: signing)
        Redaction.assertHides(k1, in: chain, "SenderKeySendingChain chain key")
        Redaction.assertHides(k2, in: chain, "SenderKeySendingChain signing seed")

        let distribution = try chain.distributionMessage()
        Redaction.assertHides(k1, in: distribution, "SenderKeyDistributionMessage")

        let chainKey = SenderChainKey(iteration: 0, key: SecureBytes(copying: k1))
        Redaction.assertRendersIndependentlyOfSecret(chainKey, SenderChainKey(iteration: 0, key: SecureBytes(copying: k2)), "SenderChainKey")
        let (messageKey, next) = chainKey.step()
        Redaction.assertHides(messageKey.bytes, in: next, "next SenderChainKey")
        let keys = SenderMessageKeys(messageKey: SecureBytes(copying: k1))
        Redaction.assertRendersIndependentlyOfSecret(keys, SenderMessageKeys(messageKey: SecureBytes(copying: k2)), "SenderMessageKeys")

        // A receiver with a current chain key and stored skipped keys.
        var receiver = SenderKeyReceiverState()
        try receiver.processDistribution(distribution.serialized, for: group)
        var last: [UInt8] = []
        for index in 0 ..< 3 { last = try chain.encrypt([UInt8(index)]) }
        XCTAssertEqual(try receiver.decrypt(last, for: group, from: sender), [2])
        let ck0 = k1
        let ck1 = HMACSHA256.authenticationCode(for: [0x02], using: ck0)
        let ck3 = HMACSHA256.authenticationCode(for: [0x02], using: HMACSHA256.authenticationCode(for: [0x02], using: ck1))
        let skipped0 = HMACSHA256.authenticationCode(for: [0x01], using: ck0)
        for (secret, what) in [(ck3, "current chain key"), (skipped0, "skipped message key"), (k1, "initial chain key")] {
            Redaction.assertHides(secret, in: receiver, "SenderKeyReceiverState \(what)")
            Redaction.assertHides(secret, in: receiver.chains[0], "SenderKeyReceivingChain \(what)")
        }
        Redaction.assertHides(ck3, in: chain, "SenderKeySendingChain after three messages")

        var session = GroupSession(sendingChain: chain)
        try session.processDistribution(distribution.serialized, from: address("bob", 1))
        for secret in [k1, k2, ck3] { Redaction.assertHides(secret, in: session, "GroupSession") }
    }

    func testSelfEncryptionDoesNotRenderTheIdentitySeedOrTheSelfKey() throws {
        let first = SelfEncryption(identityKey: try Ed25519.PrivateKey(seed: k1))
        let second = SelfEncryption(identityKey: try Ed25519.PrivateKey(seed: k2))
        let selfKey = try HKDF.deriveKey(inputKeyMaterial: k1, salt: [UInt8](repeating: 0, count: 32),
                                         info: Array("SessionKit Self v2".utf8), outputByteCount: 32)
        Redaction.assertHides(k1, in: first, "SelfEncryption seed")
        Redaction.assertHides(selfKey, in: first, "SelfEncryption key")
        Redaction.assertRendersIndependentlyOfSecret(first, second, "SelfEncryption")
    }

    // MARK: Persisted state in the making

    func testStateWritersAndReadersDoNotRenderTheSecretsTheyCarry() throws {
        var writer = StateWriter(kind: .senderKeySender, version: 1)
        writer.writeFixed(SecureBytes(copying: k1))
        var other = StateWriter(kind: .senderKeySender, version: 1)
        other.writeFixed(SecureBytes(copying: k2))
        Redaction.assertHides(k1, in: writer, "StateWriter")
        Redaction.assertRendersIndependentlyOfSecret(writer, other, "StateWriter")

        let blob = writer.finish()
        let reader = try StateReader(blob, kind: .senderKeySender, supportedVersions: 1 ... 1)
        let otherReader = try StateReader(other.finish(), kind: .senderKeySender, supportedVersions: 1 ... 1)
        Redaction.assertHides(k1, in: reader, "StateReader")
        Redaction.assertRendersIndependentlyOfSecret(reader, otherReader, "StateReader")
    }
}
