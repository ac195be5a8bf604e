import BenchmarkHarness
@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification

/// The library's side of the protocol cases: SessionKit and Verification as an app calls them.
enum LibraryProtocol {
    static func address(_ address: ReferenceAddress) throws -> ProtocolAddress {
        try ProtocolAddress(userID: String(decoding: address.uid, as: UTF8.self), deviceID: address.deviceID)
    }

    /// Bob's bundle without a KEM prekey (spk_sig with `kem` = 0), with or without his OPK.
    static func bundle(_ f: ProtocolFixture, oneTimePreKey: Bool = true) throws -> PreKeyBundle {
        try PreKeyBundle(
            identityKey: try Ed25519.PublicKey(rawRepresentation: f.bobIdentityKey), signedPreKeyID: f.signedPreKeyID,
            signedPreKey: try X25519.PublicKey(rawRepresentation: f.signedPreKeyPublic),
            signedPreKeySignature: f.signedPreKeySignature,
            oneTimePreKey: oneTimePreKey
                ? .init(id: f.oneTimePreKeyID, publicKey: try X25519.PublicKey(rawRepresentation: f.oneTimePreKeyPublic)) : nil)
    }

    /// SK || AD, what the X3DH cases compare.
    static func output(_ agreement: X3DHAgreement) -> [UInt8] { agreement.sharedSecret.storage.bytes + agreement.associatedData }

    /// Alice's X3DH as `SessionState(initiatingWith:)` runs it, without the ratchet: the
    /// bundle's checks, a fresh ephemeral key per operation, the prefix P, then X3DH.
    static func x3dhInitiate(_ f: ProtocolFixture) throws -> Probe {
        let identity = try IdentityKeyPair(seed: f.aliceSeed)
        let bundle = try bundle(f)
        let local = try address(f.aliceAddress), remote = try address(f.bobAddress)
        let fixedEphemeral = try X25519.PrivateKey(rawRepresentation: f.ephemeralSecret)
        func initiate(_ ephemeral: X25519.PrivateKey) throws -> X3DHAgreement {
            guard try X3DH.checkBundle(bundle) == nil else { throw CheckFailure("unexpected KEM prekey") }
            let prefix = PreKeyMessage.Prefix(
                identityKey: identity.publicKey, baseKey: ephemeral.publicKey, signedPreKeyID: bundle.signedPreKeyID,
                oneTimePreKeyID: bundle.oneTimePreKey?.id, kem: nil)
            return try X3DH.initiate(
                identity: identity, localAddress: local, remoteAddress: remote, bundle: bundle, ephemeralKey: ephemeral,
                prefix: prefix, kemSharedSecret: nil)
        }
        return Probe(
            workload: .repeating { blackHole(try initiate(try X25519.PrivateKey())) },
            output: { output(try initiate(fixedEphemeral)) })
    }

    /// Bob's X3DH from Alice's prefix (with a one-time prekey).
    static func x3dhRespond(_ f: ProtocolFixture) throws -> Probe {
        let identity = try IdentityKeyPair(seed: f.bobSeed)
        let signedPreKey = try SignedPreKey(
            id: f.signedPreKeyID, privateKey: f.signedPreKeySecret, signature: f.signedPreKeySignature, signsKEMPreKeys: false)
        let oneTimePreKey = try OneTimePreKey(id: f.oneTimePreKeyID, privateKey: f.oneTimePreKeySecret)
        let local = try address(f.bobAddress), remote = try address(f.aliceAddress)
        let prefix = PreKeyMessage.Prefix(
            identityKey: try Ed25519.PublicKey(rawRepresentation: f.aliceIdentityKey),
            baseKey: try X25519.PublicKey(rawRepresentation: f.ephemeralPublic), signedPreKeyID: f.signedPreKeyID,
            oneTimePreKeyID: f.oneTimePreKeyID, kem: nil)
        func respond() throws -> X3DHAgreement {
            try X3DH.respond(
                identity: identity, localAddress: local, remoteAddress: remote, prefix: prefix, signedPreKey: signedPreKey,
                oneTimePreKey: oneTimePreKey, kemSharedSecret: nil)
        }
        return Probe(workload: .repeating { blackHole(try respond()) }, output: { output(try respond()) })
    }

    // MARK: Sessions

    /// Bob's prekeys: the signed prekey (`kem` = 0) and the one-time prekey.
    static func preKeys(_ f: ProtocolFixture) throws -> PreKeySet {
        PreKeySet(
            signedPreKeys: [try SignedPreKey(
                id: f.signedPreKeyID, privateKey: f.signedPreKeySecret, signature: f.signedPreKeySignature,
                signsKEMPreKeys: false)],
            oneTimePreKeys: [try OneTimePreKey(id: f.oneTimePreKeyID, privateKey: f.oneTimePreKeySecret)])
    }

    /// Two established sessions: Alice's prekey message reached Bob and Bob's reply reached
    /// Alice, so both now send 0x21 messages.
    static func conversation(_ f: ProtocolFixture) throws -> (alice: SessionState, bob: SessionState) {
        let aliceIdentity = try IdentityKeyPair(seed: f.aliceSeed)
        let bobIdentity = try IdentityKeyPair(seed: f.bobSeed)
        let aliceAddress = try address(f.aliceAddress), bobAddress = try address(f.bobAddress)
        var alice = try SessionState(
            initiatingWith: try bundle(f), identity: aliceIdentity, localAddress: aliceAddress, remoteAddress: bobAddress,
            kem: nil)
        let first = try PreKeyMessage(serialized: try alice.encrypt(f.plaintext))
        var bob = try SessionState.accept(
            first, identity: bobIdentity, localAddress: bobAddress, remoteAddress: aliceAddress, preKeys: try preKeys(f),
            kem: nil).session
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

    /// What `SessionRecord.decrypt` needs from Bob, and his record of Alice's device.
    struct BobsRecord {
        var record: SessionRecord
        let identity: IdentityKeyPair
        let localAddress: ProtocolAddress
        let remoteAddress: ProtocolAddress
        let preKeys: PreKeySet

        mutating func decrypt(_ bytes: [UInt8]) throws(SessionError) -> [UInt8] {
            try record.decrypt(
                bytes, identity: identity, localAddress: localAddress, remoteAddress: remoteAddress, preKeys: preKeys).plaintext
        }
    }

    /// Bob's record of Alice's device with `previous` previous sessions, each session created
    /// by one of Alice's prekey messages (one message each, no one-time prekey); the most
    /// recent previous one has received 256 messages, so that its receiving counter equals the
    /// forged message's pn (the record's bound lets a message on an unknown ratchet key take a
    /// DH step there).
    static func recordWithPreviousSessions(_ f: ProtocolFixture, previous: Int) throws -> BobsRecord {
        let aliceIdentity = try IdentityKeyPair(seed: f.aliceSeed)
        let aliceAddress = try address(f.aliceAddress), bobAddress = try address(f.bobAddress)
        var bob = BobsRecord(
            record: SessionRecord(), identity: try IdentityKeyPair(seed: f.bobSeed), localAddress: bobAddress,
            remoteAddress: aliceAddress, preKeys: try preKeys(f))
        for index in 0...previous {
            var alice = try SessionState(
                initiatingWith: try bundle(f, oneTimePreKey: false), identity: aliceIdentity, localAddress: aliceAddress,
                remoteAddress: bobAddress, kem: nil)
            let count = index == previous - 1 ? 256 : 1
            for _ in 0..<count { _ = try bob.decrypt(try alice.encrypt(f.plaintext)) }
        }
        guard bob.record.previousSessions.count == previous else {
            throw CheckFailure("expected \(previous) previous sessions, the record holds \(bob.record.previousSessions.count)")
        }
        return bob
    }

    /// A forged ratchet message (a fresh ratchet key, pn = n = 256) through
    /// `SessionRecord.decrypt`, against a record with `previous` previous sessions: it must
    /// fail and leave the record as it was.
    static func forgedReject(_ f: ProtocolFixture, previous: Int) throws -> Probe {
        var bob = try recordWithPreviousSessions(f, previous: previous)
        let forged = f.forgedMessage
        return Probe(
            workload: .repeating {
                if (try? bob.decrypt(forged)) != nil { throw CheckFailure("a forged message decrypted") }
            },
            output: {
                let before = bob.record.serialized()
                let outcome: String
                do throws(SessionError) {
                    _ = try bob.decrypt(forged)
                    outcome = "decrypted"
                } catch {
                    outcome = error.specName ?? "\(error)"
                }
                return Array(outcome.utf8) + [bob.record.serialized() == before ? 1 : 0]
            })
    }

    // MARK: Sender keys

    /// One sender-key message of 64 bytes, from Alice to the group.
    static func senderKeyEncrypt(_ f: ProtocolFixture) throws -> Probe {
        func chain() throws -> SenderKeySendingChain {
            try SenderKeySendingChain(
                group: try GroupID(rawRepresentation: f.groupID), sender: try address(f.aliceAddress),
                initialChainKey: f.senderChainKey, signingKey: try Ed25519.PrivateKey(seed: f.senderSigningSeed))
        }
        var group = GroupSession(sendingChain: try chain())
        let first = try chain()
        let plaintext = f.plaintext
        return Probe(
            workload: .repeating { blackHole(try group.encrypt(plaintext)) },
            output: {
                var fresh = first
                return try fresh.encrypt(plaintext)
            })
    }

    /// Bob verifying and decrypting Alice's sender-key messages, in order; each batch's
    /// messages are encrypted, untimed, just before it.
    static func senderKeyDecrypt(_ f: ProtocolFixture) throws -> Probe {
        let groupID = try GroupID(rawRepresentation: f.groupID)
        let member = try address(f.aliceAddress)
        var sender = try SenderKeySendingChain(
            group: groupID, sender: member, initialChainKey: f.senderChainKey,
            signingKey: try Ed25519.PrivateKey(seed: f.senderSigningSeed))
        var group = try GroupSession(group: groupID, localAddress: try address(f.bobAddress))
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

    // MARK: Self-encryption

    /// Sealing 1 KiB to oneself (a fresh random nonce per operation).
    static func selfSeal(_ f: ProtocolFixture) throws -> Probe {
        let identity = try Ed25519.PrivateKey(seed: f.aliceSeed)
        let sealer = SelfEncryption(identityKey: identity)
        let fixed = SelfEncryption(identityKey: identity, using: FixedRandomSource(f.selfNonce))
        return Probe(
            workload: .repeating { blackHole(try sealer.seal(f.selfPlaintext, context: f.selfContext)) },
            output: { try fixed.seal(f.selfPlaintext, context: f.selfContext) })
    }

    /// Opening a sealed 1 KiB blob.
    static func selfOpen(_ f: ProtocolFixture) throws -> Probe {
        let identity = try Ed25519.PrivateKey(seed: f.aliceSeed)
        let sealer = SelfEncryption(identityKey: identity)
        let sealed = try SelfEncryption(identityKey: identity, using: FixedRandomSource(f.selfNonce))
            .seal(f.selfPlaintext, context: f.selfContext)
        return Probe(
            workload: .repeating { blackHole(try sealer.open(sealed, context: f.selfContext)) },
            output: { try sealer.open(sealed, context: f.selfContext) })
    }

    // MARK: Persistence and verification

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

/// A random source that repeats fixed bytes (the deterministic self-encryption output).
struct FixedRandomSource: RandomSource {
    let pattern: [UInt8]

    init(_ pattern: [UInt8]) { self.pattern = pattern }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in 0..<buffer.count { buffer[index] = pattern[index % pattern.count] }
    }
}
