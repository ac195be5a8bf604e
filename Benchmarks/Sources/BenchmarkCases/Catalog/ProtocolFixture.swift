/// The fixed inputs of the protocol cases: the same bytes for every contender, so that the
/// deterministic operations (X3DH, sender-key encryption, self-encryption with a fixed nonce,
/// safety numbers) can be compared byte for byte before they are timed.
struct ProtocolFixture {
    let aliceSeed: [UInt8]
    let bobSeed: [UInt8]
    let aliceIdentityKey: [UInt8]
    let bobIdentityKey: [UInt8]
    let aliceAddress = ReferenceAddress(uid: Array("alice@example.org".utf8), deviceID: 1)
    let bobAddress = ReferenceAddress(uid: Array("bob@example.org".utf8), deviceID: 2)
    let ephemeralSecret: [UInt8]
    let ephemeralPublic: [UInt8]
    let signedPreKeySecret: [UInt8]
    let signedPreKeyPublic: [UInt8]
    /// spk_sig with `kem` = 0 (a bundle without a KEM prekey).
    let signedPreKeySignature: [UInt8]
    /// spk_sig with `kem` = 1 (a bundle with a KEM prekey).
    let kemSignedPreKeySignature: [UInt8]
    let oneTimePreKeySecret: [UInt8]
    let oneTimePreKeyPublic: [UInt8]
    let signedPreKeyID: UInt32 = 7
    let oneTimePreKeyID: UInt32 = 11
    let kemPreKeyID: UInt32 = 13
    /// The KEM prekey's seed `d || z` (its `ek`, signature and a fixed encapsulation to it are
    /// in `KEMFixture`).
    let kemSeed: [UInt8]
    /// The 64-byte message of the ratchet and sender-key cases.
    let plaintext: [UInt8]
    let senderChainKey: [UInt8]
    let senderSigningSeed: [UInt8]
    /// The group of the sender-key cases (a UUID's 16 bytes) and its sender (Alice).
    let groupID: [UInt8]
    let aliceUserID = Array("alice@example.org".utf8)
    let bobUserID = Array("bob@example.org".utf8)
    /// Safety-number iterations (libsignal's and Signal's count).
    let iterations = 5200
    /// The self-encryption cases: 1 KiB sealed under Alice's identity, bound to a context.
    let selfPlaintext: [UInt8]
    let selfContext = Array("conversation:bob@example.org".utf8)
    /// The nonce of the deterministic self-encryption output (the timed seals draw their own).
    let selfNonce: [UInt8]
    /// A forged ratchet message: a fresh ratchet key no session knows, pn = n = MAX_SKIP
    /// (256), 80 random bytes of "ciphertext" (a 64-byte padded body and a tag).
    let forgedMessage: [UInt8]
    /// The KEM prekey's `ek`, signature and fixed encapsulation, computed once (`kem()`), so
    /// that every contender sees the same ciphertext.
    private let kemCache = KEMFixtureCache()

    init() throws {
        aliceSeed = Fixture.bytes(32)
        bobSeed = Fixture.bytes(32)
        aliceIdentityKey = try ReferenceIdentity<SodiumBackend>(seed: aliceSeed).publicKey
        let bob = try ReferenceIdentity<SodiumBackend>(seed: bobSeed)
        bobIdentityKey = bob.publicKey
        ephemeralSecret = Fixture.bytes(32)
        ephemeralPublic = try SodiumBackend.agreementKey(secret: ephemeralSecret).publicKey
        signedPreKeySecret = Fixture.bytes(32)
        signedPreKeyPublic = try SodiumBackend.agreementKey(secret: signedPreKeySecret).publicKey
        signedPreKeySignature = bob.signSignedPreKey(signedPreKeyPublic, kem: false)
        kemSignedPreKeySignature = bob.signSignedPreKey(signedPreKeyPublic, kem: true)
        oneTimePreKeySecret = Fixture.bytes(32)
        oneTimePreKeyPublic = try SodiumBackend.agreementKey(secret: oneTimePreKeySecret).publicKey
        kemSeed = Fixture.bytes(64)
        plaintext = Fixture.bytes(64)
        senderChainKey = Fixture.bytes(32)
        senderSigningSeed = Fixture.bytes(32)
        groupID = Fixture.bytes(16)
        selfPlaintext = Fixture.bytes(1024)
        selfNonce = Fixture.bytes(24)
        var forged: [UInt8] = [ReferenceConstants.messageType]
        forged += SodiumBackend.newAgreementKey().publicKey
        forged.appendU32(UInt32(ReferenceConstants.maxSkip))
        forged.appendU32(UInt32(ReferenceConstants.maxSkip))
        forged += Fixture.bytes(64 + ReferenceConstants.tagCount)
        forgedMessage = forged
    }
}

extension ProtocolFixture {
    /// The KEM prekey of the fixture, computed on first use and then shared by every contender.
    @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    func kem() throws -> KEMFixture {
        if let cached = kemCache.value as? KEMFixture { return cached }
        let value = try KEMFixture(self)
        kemCache.value = value
        return value
    }
}

/// Holds the fixture's `KEMFixture` once computed (its encapsulation is random).
final class KEMFixtureCache {
    var value: Any?
}

/// The KEM prekey of the fixture: its `ek` (ML-KEM-768 key generation from the seed), its
/// signature, and one encapsulation to it, fixed so that PQXDH's outputs can be compared.
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
struct KEMFixture {
    let encapsulationKey: [UInt8]
    /// kem_sig = Ed25519.sign(IK_B, "SessionKit KEM v2" || 0x0B || ek).
    let signature: [UInt8]
    let ciphertext: [UInt8]
    let sharedSecret: [UInt8]

    init(_ f: ProtocolFixture) throws {
        encapsulationKey = try ReferenceKEM.encapsulationKey(seed: f.kemSeed)
        signature = try ReferenceIdentity<SodiumBackend>(seed: f.bobSeed).signKEMPreKey(encapsulationKey)
        (ciphertext, sharedSecret) = try ReferenceKEM.encapsulate(to: encapsulationKey)
    }
}
