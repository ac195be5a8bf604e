/// The fixed inputs of the protocol cases: the same bytes for every contender, so that the
/// deterministic operations (X3DH, sender-key encryption, safety numbers) can be compared
/// byte for byte before they are timed.
struct ProtocolFixture {
    let aliceSeed: [UInt8]
    let bobSeed: [UInt8]
    let aliceIdentityKey: [UInt8]
    let bobIdentityKey: [UInt8]
    let ephemeralSecret: [UInt8]
    let ephemeralPublic: [UInt8]
    let signedPreKeySecret: [UInt8]
    let signedPreKeyPublic: [UInt8]
    let signedPreKeySignature: [UInt8]
    let oneTimePreKeySecret: [UInt8]
    let oneTimePreKeyPublic: [UInt8]
    let signedPreKeyID: UInt32 = 7
    let oneTimePreKeyID: UInt32 = 11
    /// The 64-byte message of the ratchet and sender-key cases.
    let plaintext: [UInt8]
    let senderChainKey: [UInt8]
    let senderSigningSeed: [UInt8]
    let aliceUserID = Array("alice@example.org".utf8)
    let bobUserID = Array("bob@example.org".utf8)
    /// Safety-number iterations (libsignal's and Signal's count).
    let iterations = 5200

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
        let encoded = [ReferenceConstants.signalKeyType] + signedPreKeyPublic
        var signature = [UInt8](repeating: 0, count: 64)
        encoded.withUnsafeBytes { m in signature.withUnsafeMutableBytes { SodiumBackend.sign(m, with: bob.signingKey, into: $0) } }
        signedPreKeySignature = signature
        oneTimePreKeySecret = Fixture.bytes(32)
        oneTimePreKeyPublic = try SodiumBackend.agreementKey(secret: oneTimePreKeySecret).publicKey
        plaintext = Fixture.bytes(64)
        senderChainKey = Fixture.bytes(32)
        senderSigningSeed = Fixture.bytes(32)
    }
}
