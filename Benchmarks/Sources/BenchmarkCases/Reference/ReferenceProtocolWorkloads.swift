import BenchmarkHarness

/// The protocol cases for a naive reference (the floor on libsodium, or swift-crypto).
enum ReferenceProtocolWorkloads<B: ReferenceBackend> {
    /// Bob's bundle without a KEM prekey (spk_sig with `kem` = 0), with or without his OPK.
    static func bundle(_ f: ProtocolFixture, oneTimePreKey: Bool = true) -> ReferenceBundle {
        ReferenceBundle(
            identityKey: f.bobIdentityKey, signedPreKey: f.signedPreKeyPublic, signedPreKeyID: f.signedPreKeyID,
            signature: f.signedPreKeySignature, oneTimePreKey: oneTimePreKey ? f.oneTimePreKeyPublic : nil,
            oneTimePreKeyID: oneTimePreKey ? f.oneTimePreKeyID : nil)
    }

    /// For bundles without a KEM prekey: never called.
    static func noEncapsulation(_ key: [UInt8]) throws(ReferenceError) -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
        throw .invalidKey
    }

    /// For prefixes without a KEM part: never called.
    static func noDecapsulation(_ ciphertext: [UInt8], _ seed: [UInt8]) throws(ReferenceError) -> [UInt8] {
        throw .invalidKey
    }

    /// SK || AD, what the X3DH cases compare.
    static func output(_ result: ReferenceX3DHResult) -> [UInt8] { result.sharedSecret + result.associatedData }

    /// Alice's X3DH (bundle with a one-time prekey) with a fresh ephemeral key per operation.
    static func x3dhInitiate(_ f: ProtocolFixture) throws -> Probe {
        let identity = try ReferenceIdentity<B>(seed: f.aliceSeed)
        let bundle = bundle(f)
        let fixedEphemeral = try B.agreementKey(secret: f.ephemeralSecret)
        func initiate(_ ephemeral: (key: B.AgreementKey, publicKey: [UInt8])) throws -> ReferenceX3DHResult {
            try ReferenceX3DH<B>.initiate(
                identity: identity, localAddress: f.aliceAddress, remoteAddress: f.bobAddress, ephemeral: ephemeral,
                bundle: bundle, encapsulate: noEncapsulation)
        }
        return Probe(
            workload: .repeating { blackHole(try initiate(B.newAgreementKey())) },
            output: { output(try initiate(fixedEphemeral)) })
    }

    /// Bob's X3DH from Alice's prefix (with a one-time prekey).
    static func x3dhRespond(_ f: ProtocolFixture) throws -> Probe {
        let identity = try ReferenceIdentity<B>(seed: f.bobSeed)
        let signedPreKey = try B.agreementKey(secret: f.signedPreKeySecret).key
        let oneTimePreKey = try B.agreementKey(secret: f.oneTimePreKeySecret).key
        let prefix = ReferencePrefix(
            identityKey: f.aliceIdentityKey, baseKey: f.ephemeralPublic, signedPreKeyID: f.signedPreKeyID,
            oneTimePreKeyID: f.oneTimePreKeyID, kemPreKeyID: nil, ciphertext: nil)
        func respond() throws -> ReferenceX3DHResult {
            try ReferenceX3DH<B>.respond(
                identity: identity, localAddress: f.bobAddress, remoteAddress: f.aliceAddress, signedPreKey: signedPreKey,
                oneTimePreKey: oneTimePreKey, kemSeed: nil, prefix: prefix, decapsulate: noDecapsulation)
        }
        return Probe(workload: .repeating { blackHole(try respond()) }, output: { output(try respond()) })
    }

    // MARK: Sessions

    /// Alice starts a session from Bob's bundle (no KEM prekey) and her first message, a
    /// prekey message, reaches Bob, who creates his session from it (X3DH as responder, then
    /// the first DH ratchet step).
    static func establish(
        _ f: ProtocolFixture, oneTimePreKey: Bool
    ) throws -> (alice: ReferenceSessionRecord<B>, bob: ReferenceSessionRecord<B>) {
        let aliceIdentity = try ReferenceIdentity<B>(seed: f.aliceSeed)
        let bobIdentity = try ReferenceIdentity<B>(seed: f.bobSeed)
        let ephemeral = B.newAgreementKey()
        let x3dh = try ReferenceX3DH<B>.initiate(
            identity: aliceIdentity, localAddress: f.aliceAddress, remoteAddress: f.bobAddress, ephemeral: ephemeral,
            bundle: bundle(f, oneTimePreKey: oneTimePreKey), encapsulate: noEncapsulation)
        var digest = [UInt8](repeating: 0, count: 32)
        x3dh.prefix.bytes.withUnsafeBytes { p in digest.withUnsafeMutableBytes { B.sha256(p, into: $0) } }
        var alice = ReferenceSessionRecord(
            role: 1, localIdentityKey: aliceIdentity.publicKey, remoteIdentityKey: bobIdentity.publicKey,
            localAddress: f.aliceAddress, remoteAddress: f.bobAddress, baseKey: ephemeral.publicKey, prefixDigest: digest,
            pendingPrefix: x3dh.prefix.bytes,
            ratchet: try ReferenceRatchet<B>.initiator(
                sharedSecret: x3dh.sharedSecret, associatedData: x3dh.associatedData,
                remoteSignedPreKey: f.signedPreKeyPublic, keySource: B.newAgreementKey))
        let first = try alice.encrypt(f.plaintext)
        // Bob reads the prefix and runs X3DH as responder.
        let (prefix, prefixCount) = try ReferencePrefix.parse(first[1...])
        let signedPreKey = try B.agreementKey(secret: f.signedPreKeySecret)
        let responded = try ReferenceX3DH<B>.respond(
            identity: bobIdentity, localAddress: f.bobAddress, remoteAddress: f.aliceAddress, signedPreKey: signedPreKey.key,
            oneTimePreKey: prefix.oneTimePreKeyID == nil ? nil : try B.agreementKey(secret: f.oneTimePreKeySecret).key,
            kemSeed: nil, prefix: prefix, decapsulate: noDecapsulation)
        var bob = ReferenceSessionRecord(
            role: 2, localIdentityKey: bobIdentity.publicKey, remoteIdentityKey: prefix.identityKey,
            localAddress: f.bobAddress, remoteAddress: f.aliceAddress, baseKey: prefix.baseKey, prefixDigest: digest,
            pendingPrefix: nil,
            ratchet: ReferenceRatchet<B>.responder(
                sharedSecret: responded.sharedSecret, associatedData: responded.associatedData, signedPreKey: signedPreKey,
                keySource: B.newAgreementKey))
        _ = try bob.decrypt(Array(first[(1 + prefixCount)...]))
        return (alice, bob)
    }

    /// Two established sessions: Alice's prekey message reached Bob, Bob's reply reached
    /// Alice, so both send 0x21 messages.
    static func conversation(_ f: ProtocolFixture) throws -> (alice: ReferenceSessionRecord<B>, bob: ReferenceSessionRecord<B>) {
        var (alice, bob) = try establish(f, oneTimePreKey: true)
        _ = try alice.decrypt(try bob.encrypt(f.plaintext))
        return (alice, bob)
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

    /// Bob's sessions with Alice's device: `previous` + 1 sessions, each created by a prekey
    /// message (one message each); the most recent previous one has received 256 messages, so
    /// that its receiving counter equals the forged message's pn (the bound lets a message on
    /// an unknown ratchet key take a DH step there).
    static func recordWithPreviousSessions(_ f: ProtocolFixture, previous: Int) throws -> ReferencePeerRecord<B> {
        var record = ReferencePeerRecord<B>()
        for index in 0...previous {
            var (alice, bob) = try establish(f, oneTimePreKey: false)
            if index == previous - 1 {
                for _ in 1..<ReferenceConstants.maxSkip { _ = try bob.decrypt(try alice.ratchet.encrypt(f.plaintext)) }
            }
            record.promote(bob)
        }
        return record
    }

    /// A forged ratchet message (a fresh ratchet key, pn = n = 256) against Bob's record with
    /// `previous` previous sessions: it must fail, and leave every session as it was.
    static func forgedReject(_ f: ProtocolFixture, previous: Int) throws -> Probe {
        var record = try recordWithPreviousSessions(f, previous: previous)
        let forged = f.forgedMessage
        func snapshot() -> [[UInt8]] {
            ([record.current].compactMap { $0 } + record.previous).map(ReferenceSessionCodec<B>.save)
        }
        return Probe(
            workload: .repeating {
                if (try? record.decrypt(forged)) != nil { throw CheckFailure("a forged message decrypted") }
            },
            output: {
                let before = snapshot()
                let outcome: String
                do {
                    _ = try record.decrypt(forged)
                    outcome = "decrypted"
                } catch {
                    outcome = "\(error)"
                }
                return Array(outcome.utf8) + [snapshot() == before ? 1 : 0]
            })
    }

    // MARK: Sender keys

    /// One sender-key message of 64 bytes: KDF_CK, HKDF (76 bytes), AES-GCM and an Ed25519
    /// signature, bound to the group and to Alice as the sender.
    static func senderKeyEncrypt(_ f: ProtocolFixture) throws -> Probe {
        func chain() throws -> ReferenceSenderChain<B> {
            try ReferenceSenderChain<B>(
                group: f.groupID, sender: f.aliceAddress, chainKey: f.senderChainKey, signingSeed: f.senderSigningSeed)
        }
        var sender = try chain()
        let first = try chain()
        let plaintext = f.plaintext
        return Probe(
            workload: .repeating { blackHole(try sender.encrypt(plaintext)) },
            output: {
                var fresh = first
                return try fresh.encrypt(plaintext)
            })
    }

    /// Verifying and decrypting sender-key messages, delivered in order; the messages of each
    /// batch are encrypted, untimed, just before it.
    static func senderKeyDecrypt(_ f: ProtocolFixture) throws -> Probe {
        var sender = try ReferenceSenderChain<B>(
            group: f.groupID, sender: f.aliceAddress, chainKey: f.senderChainKey, signingSeed: f.senderSigningSeed)
        var receiver = ReferenceSenderKeyReceiver<B>()
        try receiver.process(distribution: sender.distribution, group: f.groupID)
        var pending: [[UInt8]] = []
        let plaintext = f.plaintext
        let group = f.groupID, from = f.aliceAddress
        let workload = Workload(
            prepare: { n in pending = try (0..<n).map { _ in try sender.encrypt(plaintext) } },
            run: { n in
                for index in 0..<n { blackHole(try receiver.decrypt(pending[index], group: group, sender: from)) }
            })
        return Probe(workload: workload, output: { try receiver.decrypt(try sender.encrypt(plaintext), group: group, sender: from) })
    }

    // MARK: Persistence and verification

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

// MARK: PQXDH

@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
extension ReferenceProtocolWorkloads {
    /// Bob's bundle with his one-time prekey and his KEM prekey (spk_sig with `kem` = 1).
    static func kemBundle(_ f: ProtocolFixture, _ k: KEMFixture) -> ReferenceBundle {
        ReferenceBundle(
            identityKey: f.bobIdentityKey, signedPreKey: f.signedPreKeyPublic, signedPreKeyID: f.signedPreKeyID,
            signature: f.kemSignedPreKeySignature, oneTimePreKey: f.oneTimePreKeyPublic, oneTimePreKeyID: f.oneTimePreKeyID,
            kemPreKey: k.encapsulationKey, kemPreKeyID: f.kemPreKeyID, kemSignature: k.signature)
    }

    /// Alice's PQXDH: the bundle's two signatures, the `ek` input check, a fresh encapsulation
    /// (swift-crypto's `MLKEM768`), a fresh ephemeral key, four DHs, SHA-256(P) and HKDF.
    static func pqxdhInitiate(_ f: ProtocolFixture) throws -> Probe {
        let k = try f.kem()
        let identity = try ReferenceIdentity<B>(seed: f.aliceSeed)
        let bundle = kemBundle(f, k)
        let fixedEphemeral = try B.agreementKey(secret: f.ephemeralSecret)
        let fixed = (ciphertext: k.ciphertext, sharedSecret: k.sharedSecret)
        return Probe(
            workload: .repeating {
                blackHole(try ReferenceX3DH<B>.initiate(
                    identity: identity, localAddress: f.aliceAddress, remoteAddress: f.bobAddress,
                    ephemeral: B.newAgreementKey(), bundle: bundle, encapsulate: ReferenceKEM.encapsulate))
            },
            output: {
                output(try ReferenceX3DH<B>.initiate(
                    identity: identity, localAddress: f.aliceAddress, remoteAddress: f.bobAddress, ephemeral: fixedEphemeral,
                    bundle: bundle, encapsulate: { (key) throws(ReferenceError) in
                        guard ReferenceKEM.isValidEncapsulationKey(key) else { throw .invalidKey }
                        return fixed
                    }))
            })
    }

    /// Bob's PQXDH from Alice's prefix: decapsulation from the 64-byte seed, four DHs,
    /// SHA-256(P) and HKDF.
    static func pqxdhRespond(_ f: ProtocolFixture) throws -> Probe {
        let k = try f.kem()
        let identity = try ReferenceIdentity<B>(seed: f.bobSeed)
        let signedPreKey = try B.agreementKey(secret: f.signedPreKeySecret).key
        let oneTimePreKey = try B.agreementKey(secret: f.oneTimePreKeySecret).key
        let prefix = ReferencePrefix(
            identityKey: f.aliceIdentityKey, baseKey: f.ephemeralPublic, signedPreKeyID: f.signedPreKeyID,
            oneTimePreKeyID: f.oneTimePreKeyID, kemPreKeyID: f.kemPreKeyID, ciphertext: k.ciphertext)
        func respond() throws -> ReferenceX3DHResult {
            try ReferenceX3DH<B>.respond(
                identity: identity, localAddress: f.bobAddress, remoteAddress: f.aliceAddress, signedPreKey: signedPreKey,
                oneTimePreKey: oneTimePreKey, kemSeed: f.kemSeed, prefix: prefix, decapsulate: ReferenceKEM.decapsulate)
        }
        return Probe(workload: .repeating { blackHole(try respond()) }, output: { output(try respond()) })
    }
}

// MARK: Self-encryption

extension ReferenceProtocolWorkloads where B: ReferenceXAEADBackend {
    /// Sealing 1 KiB to oneself: a random 24-byte nonce, padding to 2048 bytes, XChaCha20-Poly1305.
    static func selfSeal(_ f: ProtocolFixture) -> Probe {
        let sealer = ReferenceSelfEncryption<B>(identitySeed: f.aliceSeed)
        return Probe(
            workload: .repeating { blackHole(try sealer.seal(f.selfPlaintext, context: f.selfContext)) },
            output: { try sealer.seal(f.selfPlaintext, context: f.selfContext, nonce: f.selfNonce) })
    }

    /// Opening a sealed 1 KiB blob.
    static func selfOpen(_ f: ProtocolFixture) throws -> Probe {
        let sealer = ReferenceSelfEncryption<B>(identitySeed: f.aliceSeed)
        let sealed = try sealer.seal(f.selfPlaintext, context: f.selfContext, nonce: f.selfNonce)
        return Probe(
            workload: .repeating { blackHole(try sealer.open(sealed, context: f.selfContext)) },
            output: { try sealer.open(sealed, context: f.selfContext) })
    }
}
