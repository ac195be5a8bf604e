import BenchmarkHarness
import SessionKit
import SignalPrimitives
import Verification

/// The library's side of the protocol cases: SessionKit and Verification as an app calls them.
enum LibraryProtocol {
    static func bundle(_ f: ProtocolFixture) throws -> PreKeyBundle {
        PreKeyBundle(
            identityKey: try Ed25519.PublicKey(rawRepresentation: f.bobIdentityKey), signedPreKeyID: f.signedPreKeyID,
            signedPreKey: try X25519.PublicKey(rawRepresentation: f.signedPreKeyPublic),
            signedPreKeySignature: f.signedPreKeySignature,
            oneTimePreKey: .init(id: f.oneTimePreKeyID, publicKey: try X25519.PublicKey(rawRepresentation: f.oneTimePreKeyPublic)))
    }

    /// Alice's X3DH with a fresh ephemeral key per operation.
    static func x3dhInitiate(_ f: ProtocolFixture) throws -> Probe {
        let identity = try IdentityKeyPair(seed: f.aliceSeed)
        let bundle = try bundle(f)
        let fixedEphemeral = try X25519.PrivateKey(rawRepresentation: f.ephemeralSecret)
        return Probe(
            workload: .repeating {
                let ephemeral = try X25519.PrivateKey()
                blackHole(try X3DH.initiate(identity: identity, bundle: bundle, ephemeralKey: ephemeral))
            },
            output: { try X3DH.initiate(identity: identity, bundle: bundle, ephemeralKey: fixedEphemeral).sharedSecret.storage.bytes })
    }

    /// Bob's X3DH from Alice's identity and ephemeral keys (with a one-time prekey).
    static func x3dhRespond(_ f: ProtocolFixture) throws -> Probe {
        let identity = try IdentityKeyPair(seed: f.bobSeed)
        let signedPreKey = try SignedPreKey(
            id: f.signedPreKeyID, privateKey: f.signedPreKeySecret, signature: f.signedPreKeySignature)
        let oneTimePreKey = try OneTimePreKey(id: f.oneTimePreKeyID, privateKey: f.oneTimePreKeySecret)
        let initiatorIdentity = try Ed25519.PublicKey(rawRepresentation: f.aliceIdentityKey)
        let initiatorEphemeral = try X25519.PublicKey(rawRepresentation: f.ephemeralPublic)
        func respond() throws -> X3DHAgreement {
            try X3DH.respond(
                identity: identity, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey,
                initiatorIdentityKey: initiatorIdentity, initiatorEphemeralKey: initiatorEphemeral)
        }
        return Probe(workload: .repeating { blackHole(try respond()) }, output: { try respond().sharedSecret.storage.bytes })
    }

    /// Two established sessions: Alice's prekey message reached Bob and Bob's reply reached
    /// Alice, so both now send 0x01 messages.
    static func conversation(_ f: ProtocolFixture) throws -> (alice: SessionState, bob: SessionState) {
        let aliceIdentity = try IdentityKeyPair(seed: f.aliceSeed)
        let bobIdentity = try IdentityKeyPair(seed: f.bobSeed)
        let signedPreKey = try SignedPreKey(
            id: f.signedPreKeyID, privateKey: f.signedPreKeySecret, signature: f.signedPreKeySignature)
        let oneTimePreKey = try OneTimePreKey(id: f.oneTimePreKeyID, privateKey: f.oneTimePreKeySecret)
        var alice = try SessionState(initiatingWith: try bundle(f), identity: aliceIdentity)
        let first = try PreKeyMessage(serialized: try alice.encrypt(f.plaintext))
        let preKeys = PreKeySet(signedPreKeys: [signedPreKey], oneTimePreKeys: [oneTimePreKey])
        var bob = try SessionState.accept(first, identity: bobIdentity, preKeys: preKeys).session
        _ = try alice.decrypt(try bob.encrypt(f.plaintext))
        return (alice, bob)
    }

    /// Alice encrypts 64 bytes and Bob decrypts them, on one chain.
    static func ratchetRoundTrip(_ f: ProtocolFixture) throws -> Probe {
        var (alice, bob) = try conversation(f)
        let plaintext = f.plaintext
        func roundTrip() throws -> [UInt8] { try bob.decrypt(try alice.encrypt(plaintext)) }
        return Probe(workload: .repeating { blackHole(try roundTrip()) }, output: { try roundTrip() })
    }

    /// One message each way in turn: every decryption performs a DH ratchet step.
    static func ratchetPingPong(_ f: ProtocolFixture) throws -> Probe {
        var (alice, bob) = try conversation(f)
        var aliceSends = true
        let plaintext = f.plaintext
        func step() throws -> [UInt8] {
            defer { aliceSends.toggle() }
            return aliceSends ? try bob.decrypt(try alice.encrypt(plaintext)) : try alice.decrypt(try bob.encrypt(plaintext))
        }
        return Probe(workload: .repeating { blackHole(try step()) }, output: { try step() })
    }

    /// One sender-key message of 64 bytes.
    static func senderKeyEncrypt(_ f: ProtocolFixture) throws -> Probe {
        let signingKey = try Ed25519.PrivateKey(seed: f.senderSigningSeed)
        var group = GroupSession(sendingChain: try SenderKeySendingChain(initialChainKey: f.senderChainKey, signingKey: signingKey))
        let first = try SenderKeySendingChain(initialChainKey: f.senderChainKey, signingKey: signingKey)
        let plaintext = f.plaintext
        return Probe(
            workload: .repeating { blackHole(try group.encrypt(plaintext)) },
            output: {
                var fresh = first
                return try fresh.encrypt(plaintext)
            })
    }

    /// Verifying and decrypting sender-key messages from one member, in order; each batch's
    /// messages are encrypted, untimed, just before it.
    static func senderKeyDecrypt(_ f: ProtocolFixture) throws -> Probe {
        let signingKey = try Ed25519.PrivateKey(seed: f.senderSigningSeed)
        var sender = try SenderKeySendingChain(initialChainKey: f.senderChainKey, signingKey: signingKey)
        let member = ProtocolAddress(userID: "alice@example.org", deviceID: 1)
        var group = try GroupSession()
        try group.processDistribution(try sender.distributionMessage().serialized, from: member)
        var pending: [[UInt8]] = []
        let plaintext = f.plaintext
        let workload = Workload(
            prepare: { n in pending = try (0..<n).map { _ in try sender.encrypt(plaintext) } },
            run: { n in
                for index in 0..<n { blackHole(try group.decrypt(pending[index], from: member)) }
            })
        return Probe(workload: workload, output: { try group.decrypt(try sender.encrypt(plaintext), from: member) })
    }

    /// Alice's established session, serialized.
    static func sessionSave(_ f: ProtocolFixture) throws -> (probe: Probe, session: SessionState) {
        let alice = try conversation(f).alice
        return (Probe(workload: .repeating { blackHole(alice.serialized()) }, output: { alice.serialized() }), alice)
    }

    /// Loading Alice's established session.
    static func sessionLoad(blob: [UInt8]) -> Probe {
        Probe(
            workload: .repeating { blackHole(try SessionState(serialized: blob)) },
            output: { try SessionState(serialized: blob).serialized() })
    }

    /// The safety number and scannable fingerprint between Alice and Bob (no cache).
    static func safetyNumber(_ f: ProtocolFixture) -> Probe {
        func compute() throws -> [UInt8] {
            let fingerprint = try Fingerprint(
                version: 2, iterations: f.iterations, localIdentifier: f.aliceUserID, localIdentityKey: f.aliceIdentityKey,
                remoteIdentifier: f.bobUserID, remoteIdentityKey: f.bobIdentityKey)
            return Array(fingerprint.displayable.digits.utf8) + fingerprint.scannable.serialized
        }
        return Probe(workload: .repeating { blackHole(try compute()) }, output: compute)
    }
}
