import BenchmarkHarness

/// The protocol cases for a naive reference (the floor on libsodium, or swift-crypto).
enum ReferenceProtocolWorkloads<B: ReferenceBackend> {
    static func bundle(_ f: ProtocolFixture) -> ReferenceBundle {
        ReferenceBundle(
            identityKey: f.bobIdentityKey, signedPreKey: f.signedPreKeyPublic, signedPreKeyID: f.signedPreKeyID,
            signature: f.signedPreKeySignature, oneTimePreKey: f.oneTimePreKeyPublic, oneTimePreKeyID: f.oneTimePreKeyID)
    }

    /// Alice's X3DH with a fresh ephemeral key per operation.
    static func x3dhInitiate(_ f: ProtocolFixture) throws -> Probe {
        let identity = try ReferenceIdentity<B>(seed: f.aliceSeed)
        let bundle = bundle(f)
        let fixedEphemeral = try B.agreementKey(secret: f.ephemeralSecret).key
        return Probe(
            workload: .repeating {
                let ephemeral = B.newAgreementKey()
                blackHole(try ReferenceX3DH<B>.initiate(identity: identity, ephemeral: ephemeral.key, bundle: bundle))
            },
            output: { try ReferenceX3DH<B>.initiate(identity: identity, ephemeral: fixedEphemeral, bundle: bundle).sharedSecret })
    }

    /// Bob's X3DH from Alice's identity and ephemeral keys (with a one-time prekey).
    static func x3dhRespond(_ f: ProtocolFixture) throws -> Probe {
        let identity = try ReferenceIdentity<B>(seed: f.bobSeed)
        let signedPreKey = try B.agreementKey(secret: f.signedPreKeySecret).key
        let oneTimePreKey = try B.agreementKey(secret: f.oneTimePreKeySecret).key
        func respond() throws -> ReferenceX3DHResult {
            try ReferenceX3DH<B>.respond(
                identity: identity, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey,
                initiatorIdentity: f.aliceIdentityKey, initiatorEphemeral: f.ephemeralPublic)
        }
        return Probe(workload: .repeating { blackHole(try respond()) }, output: { try respond().sharedSecret })
    }

    /// Two established sessions: Alice's first message reached Bob, Bob's reply reached Alice,
    /// so both send 0x01 messages.
    static func conversation(_ f: ProtocolFixture) throws -> (alice: ReferenceSessionRecord<B>, bob: ReferenceSessionRecord<B>) {
        let aliceIdentity = try ReferenceIdentity<B>(seed: f.aliceSeed)
        let bobIdentity = try ReferenceIdentity<B>(seed: f.bobSeed)
        let ephemeral = B.newAgreementKey()
        let x3dh = try ReferenceX3DH<B>.initiate(identity: aliceIdentity, ephemeral: ephemeral.key, bundle: bundle(f))
        var alice = try ReferenceRatchet<B>.initiator(
            sharedSecret: x3dh.sharedSecret, associatedData: x3dh.associatedData,
            remoteSignedPreKey: f.signedPreKeyPublic, keySource: B.newAgreementKey)
        let signedPreKey = try B.agreementKey(secret: f.signedPreKeySecret)
        let responded = try ReferenceX3DH<B>.respond(
            identity: bobIdentity, signedPreKey: signedPreKey.key, oneTimePreKey: try B.agreementKey(secret: f.oneTimePreKeySecret).key,
            initiatorIdentity: aliceIdentity.publicKey, initiatorEphemeral: ephemeral.publicKey)
        var bob = ReferenceRatchet<B>.responder(
            sharedSecret: responded.sharedSecret, associatedData: responded.associatedData, signedPreKey: signedPreKey,
            keySource: B.newAgreementKey)
        _ = try bob.decrypt(try alice.encrypt(f.plaintext))
        _ = try alice.decrypt(try bob.encrypt(f.plaintext))
        func record(_ session: ReferenceRatchet<B>, role: UInt8, local: [UInt8], remote: [UInt8]) -> ReferenceSessionRecord<B> {
            ReferenceSessionRecord(
                role: role, localIdentityKey: local, remoteIdentityKey: remote, prefixIdentityKey: aliceIdentity.publicKey,
                prefixBaseKey: ephemeral.publicKey, signedPreKeyID: f.signedPreKeyID, oneTimePreKeyID: f.oneTimePreKeyID,
                sendsPreKeyMessages: false, ratchet: session)
        }
        return (record(alice, role: 1, local: aliceIdentity.publicKey, remote: bobIdentity.publicKey),
                record(bob, role: 2, local: bobIdentity.publicKey, remote: aliceIdentity.publicKey))
    }

    /// Alice encrypts 64 bytes and Bob decrypts them, on one chain.
    static func ratchetRoundTrip(_ f: ProtocolFixture) throws -> Probe {
        let sessions = try conversation(f)
        var alice = sessions.alice.ratchet, bob = sessions.bob.ratchet
        let plaintext = f.plaintext
        func roundTrip() throws -> [UInt8] { try bob.decrypt(try alice.encrypt(plaintext)) }
        return Probe(workload: .repeating { blackHole(try roundTrip()) }, output: { try roundTrip() })
    }

    /// One message each way in turn: every decryption performs a DH ratchet step.
    static func ratchetPingPong(_ f: ProtocolFixture) throws -> Probe {
        let sessions = try conversation(f)
        var alice = sessions.alice.ratchet, bob = sessions.bob.ratchet
        var aliceSends = true
        let plaintext = f.plaintext
        func step() throws -> [UInt8] {
            defer { aliceSends.toggle() }
            return aliceSends ? try bob.decrypt(try alice.encrypt(plaintext)) : try alice.decrypt(try bob.encrypt(plaintext))
        }
        return Probe(workload: .repeating { blackHole(try step()) }, output: { try step() })
    }

    /// One sender-key message of 64 bytes: KDF_CK, HKDF, AES-GCM and an Ed25519 signature.
    static func senderKeyEncrypt(_ f: ProtocolFixture) throws -> Probe {
        var chain = try ReferenceSenderChain<B>(chainKey: f.senderChainKey, signingSeed: f.senderSigningSeed)
        let first = try ReferenceSenderChain<B>(chainKey: f.senderChainKey, signingSeed: f.senderSigningSeed)
        let plaintext = f.plaintext
        return Probe(
            workload: .repeating { blackHole(try chain.encrypt(plaintext)) },
            output: {
                var fresh = first
                return try fresh.encrypt(plaintext)
            })
    }

    /// Verifying and decrypting sender-key messages, delivered in order; the messages of each
    /// batch are encrypted, untimed, just before it.
    static func senderKeyDecrypt(_ f: ProtocolFixture) throws -> Probe {
        var chain = try ReferenceSenderChain<B>(chainKey: f.senderChainKey, signingSeed: f.senderSigningSeed)
        var receiver = ReferenceSenderKeyReceiver<B>()
        try receiver.process(distribution: chain.distribution)
        var pending: [[UInt8]] = []
        let plaintext = f.plaintext
        let workload = Workload(
            prepare: { n in pending = try (0..<n).map { _ in try chain.encrypt(plaintext) } },
            run: { n in
                for index in 0..<n { blackHole(try receiver.decrypt(pending[index])) }
            })
        return Probe(workload: workload, output: { try receiver.decrypt(try chain.encrypt(plaintext)) })
    }

    /// The serialized form of Alice's established session.
    static func sessionSave(_ f: ProtocolFixture) throws -> Probe {
        let alice = try conversation(f).alice
        return Probe(
            workload: .repeating { blackHole(ReferenceSessionCodec<B>.save(alice)) },
            output: { ReferenceSessionCodec<B>.save(alice) })
    }

    /// Loading Alice's established session.
    static func sessionLoad(_ f: ProtocolFixture) throws -> Probe {
        let blob = ReferenceSessionCodec<B>.save(try conversation(f).alice)
        return Probe(
            workload: .repeating { blackHole(try ReferenceSessionCodec<B>.load(blob, keySource: B.newAgreementKey)) },
            output: { ReferenceSessionCodec<B>.save(try ReferenceSessionCodec<B>.load(blob, keySource: B.newAgreementKey)) })
    }

    /// The safety number and scannable fingerprint between Alice and Bob.
    static func safetyNumber(_ f: ProtocolFixture) -> Probe {
        func compute() -> [UInt8] {
            let result = ReferenceSafetyNumber<B>.fingerprint(
                version: 2, iterations: f.iterations, localID: f.aliceUserID, localKey: f.aliceIdentityKey,
                remoteID: f.bobUserID, remoteKey: f.bobIdentityKey)
            return Array(result.displayable.utf8) + result.scannable
        }
        return Probe(workload: .repeating { blackHole(compute()) }, output: compute)
    }
}
