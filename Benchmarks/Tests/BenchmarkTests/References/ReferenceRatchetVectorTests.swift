@testable import BenchmarkCases
import XCTest

/// The naive Double Ratchet of both references reproduces SPEC §4's vectors (the tests
/// without error events), including the prekey-message phase with and without a KEM prekey
/// and second sessions for one address, driven by a small test party.
final class ReferenceRatchetVectorTests: XCTestCase {
    func testFloorRatchetMatchesTheVectors() throws { try check(SodiumBackend.self) }

    func testSwiftCryptoRatchetMatchesTheVectors() throws { try check(SwiftCryptoBackend.self) }

    private func check<B: ReferenceBackend>(_ backend: B.Type) throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip("no MLKEM768") }
        var checked = 0, withKEM = 0, withSeveralSessions = 0
        for test in try VectorFiles.tests(["ratchet.json", "ratchet_2.json"]) {
            let id = try test.int("id")
            guard let events = test["events"] as? [[String: Any]], !events.contains(where: \.hasError) else { continue }
            let (alice, bob) = try VectorParty<B>.pair(test)
            var sent: [[UInt8]] = []
            for event in events {
                switch try event.string("op") {
                case "send":
                    let party = try event.string("from") == "alice" ? alice : bob
                    let message = try party.encrypt(try event.hex("plaintext"))
                    XCTAssertEqual(hexString(message), hexString(try event.hex("message")), "test \(id) send \(sent.count)")
                    sent.append(message)
                case "recv":
                    let party = try event.string("to") == "alice" ? alice : bob
                    let message = try event.optionalHex("message") ?? sent[try event.int("send")]
                    XCTAssertEqual(try party.decrypt(message), try event.hex("plaintext"), "test \(id) recv")
                default:
                    XCTFail("test \(id): unknown op")
                }
            }
            if test.objectOrEmpty("bob")["kem_seed"] is String { withKEM += 1 }
            if bob.record.previous.count + alice.record.previous.count > 0 { withSeveralSessions += 1 }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 20)
        XCTAssertGreaterThan(withKEM, 4)
        XCTAssertGreaterThan(withSeveralSessions, 1)
    }
}

private extension Dictionary where Key == String, Value == Any {
    func objectOrEmpty(_ key: String) -> [String: Any] { (self[key] as? [String: Any]) ?? [:] }
}

/// One party of a ratchet vector: its sessions with the other party's device (a
/// `ReferencePeerRecord`: current and previous sessions, the bounded routing of 0x21
/// messages) and, for the responder, its prekeys and the prekey-message phase.
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
private final class VectorParty<B: ReferenceBackend> {
    final class KeyList {
        var keys: [[UInt8]]
        init(_ keys: [[UInt8]]) { self.keys = keys }
        func next() throws -> (key: B.AgreementKey, publicKey: [UInt8]) {
            guard !keys.isEmpty else { throw VectorFormatError("out of ratchet keys") }
            return try B.agreementKey(secret: keys.removeFirst())
        }
    }

    let identity: ReferenceIdentity<B>
    let address: ReferenceAddress
    var peerAddress: ReferenceAddress
    let keys: KeyList
    let maxSkip: Int
    let maxStored: Int
    var record = ReferencePeerRecord<B>()
    /// The responder's prekeys (one-time ones are deleted when a session is created).
    var signedPreKey: (id: UInt32, key: (key: B.AgreementKey, publicKey: [UInt8]))?
    var oneTimePreKeys: [UInt32: B.AgreementKey] = [:]
    var kemSeeds: [UInt32: [UInt8]] = [:]

    init(identitySeed: [UInt8], address: ReferenceAddress, peerAddress: ReferenceAddress, keys: [[UInt8]],
         maxSkip: Int, maxStored: Int) throws {
        identity = try ReferenceIdentity<B>(seed: identitySeed)
        self.address = address
        self.peerAddress = peerAddress
        self.keys = KeyList(keys)
        self.maxSkip = maxSkip
        self.maxStored = maxStored
    }

    static func pair(_ test: [String: Any]) throws -> (VectorParty, VectorParty) {
        let a = test.objectOrEmpty("alice"), b = test.objectOrEmpty("bob")
        let maxSkip = try test.int("max_skip")
        let maxStored = test.optionalInt("max_stored") ?? 2000
        func keys(_ party: [String: Any]) throws -> [[UInt8]] {
            guard let list = party["ratchet_keys"] as? [String] else { throw VectorFormatError("ratchet_keys") }
            return try list.map { guard let bytes = hexBytes($0) else { throw VectorFormatError("hex") }; return bytes }
        }
        let aliceAddress = try a.address("address"), bobAddress = try b.address("address")
        let alice = try VectorParty(identitySeed: a.hex("identity_seed"), address: aliceAddress, peerAddress: bobAddress,
                                    keys: keys(a), maxSkip: maxSkip, maxStored: maxStored)
        let bob = try VectorParty(identitySeed: b.hex("identity_seed"), address: bobAddress, peerAddress: aliceAddress,
                                  keys: keys(b), maxSkip: maxSkip, maxStored: maxStored)
        let spk = try B.agreementKey(secret: b.hex("spk_sk"))
        let spkID = UInt32(try b.int("spk_id"))
        bob.signedPreKey = (spkID, spk)
        let opk = try b.optionalHex("opk_sk").map { try B.agreementKey(secret: $0) }
        let opkID = b.optionalInt("opk_id").map(UInt32.init)
        if let opk, let opkID { bob.oneTimePreKeys[opkID] = opk.key }
        let kemSeed = try b.optionalHex("kem_seed")
        let kemID = b.optionalInt("kem_id").map(UInt32.init)
        if let kemSeed, let kemID { bob.kemSeeds[kemID] = kemSeed }
        // Alice has processed Bob's bundle (his SPK signed with kem = 1 when he has a KEM prekey).
        let kemKey = try kemSeed.map { try ReferenceKEM.encapsulationKey(seed: $0) }
        let bundle = ReferenceBundle(
            identityKey: bob.identity.publicKey, signedPreKey: spk.publicKey, signedPreKeyID: spkID,
            signature: bob.identity.signSignedPreKey(spk.publicKey, kem: kemKey != nil),
            oneTimePreKey: opk?.publicKey, oneTimePreKeyID: opkID, kemPreKey: kemKey, kemPreKeyID: kemID,
            kemSignature: kemKey.map(bob.identity.signKEMPreKey))
        let encapsulation = try (a["kem_encapsulation"] as? [String: Any]).map {
            (ciphertext: try $0.hex("ciphertext"), sharedSecret: try $0.hex("shared_secret"))
        }
        let ephemeral = try B.agreementKey(secret: a.hex("x3dh_ephemeral_sk"))
        let x3dh = try ReferenceX3DH<B>.initiate(
            identity: alice.identity, localAddress: aliceAddress, remoteAddress: bobAddress, ephemeral: ephemeral,
            bundle: bundle, encapsulate: { (key) throws(ReferenceError) in
                guard ReferenceKEM.isValidEncapsulationKey(key), let encapsulation else { throw .invalidKey }
                return encapsulation
            })
        var ratchet = try ReferenceRatchet<B>.initiator(
            sharedSecret: x3dh.sharedSecret, associatedData: x3dh.associatedData, remoteSignedPreKey: spk.publicKey,
            keySource: alice.keys.next)
        ratchet.maxSkip = maxSkip
        ratchet.maxStored = maxStored
        alice.record.promote(ReferenceSessionRecord(
            role: 1, localIdentityKey: alice.identity.publicKey, remoteIdentityKey: bob.identity.publicKey,
            localAddress: aliceAddress, remoteAddress: bobAddress, baseKey: ephemeral.publicKey,
            prefixDigest: digest(x3dh.prefix.bytes), pendingPrefix: x3dh.prefix.bytes, ratchet: ratchet))
        return (alice, bob)
    }

    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBytes { p in digest.withUnsafeMutableBytes { B.sha256(p, into: $0) } }
        return digest
    }

    func encrypt(_ plaintext: [UInt8]) throws -> [UInt8] {
        guard var session = record.current else { throw ReferenceError.noSession }
        let message = try session.encrypt(plaintext)
        record.current = session
        return message
    }

    func decrypt(_ message: [UInt8]) throws -> [UInt8] {
        guard message.first == ReferenceConstants.preKeyMessageType else { return try record.decrypt(message) }
        // A prekey message: the session created from the same EK_A (its whole P must match),
        // else X3DH as responder and a new current session.
        let (prefix, count) = try ReferencePrefix.parse(message[1...])
        let inner = Array(message[(1 + count)...])
        let prefixDigest = Self.digest(prefix.bytes)
        func isCreator(_ session: ReferenceSessionRecord<B>) -> Bool { session.role == 2 && session.baseKey == prefix.baseKey }
        if var session = record.current, isCreator(session) {
            guard session.prefixDigest == prefixDigest else { throw ReferenceError.invalidMessage }
            let plaintext = try session.decrypt(inner)
            record.current = session
            return plaintext
        }
        if let index = record.previous.firstIndex(where: isCreator) {
            var session = record.previous[index]
            guard session.prefixDigest == prefixDigest else { throw ReferenceError.invalidMessage }
            let plaintext = try session.decrypt(inner)
            record.previous.remove(at: index)
            record.promote(session)
            return plaintext
        }
        guard let signedPreKey, signedPreKey.id == prefix.signedPreKeyID else { throw ReferenceError.unknownPreKey }
        var oneTimePreKey: B.AgreementKey?
        if let id = prefix.oneTimePreKeyID {
            guard let key = oneTimePreKeys[id] else { throw ReferenceError.unknownPreKey }
            oneTimePreKey = key
        }
        var kemSeed: [UInt8]?
        if let id = prefix.kemPreKeyID {
            guard let seed = kemSeeds[id] else { throw ReferenceError.unknownPreKey }
            kemSeed = seed
        }
        let x3dh = try ReferenceX3DH<B>.respond(
            identity: identity, localAddress: address, remoteAddress: peerAddress, signedPreKey: signedPreKey.key.key,
            oneTimePreKey: oneTimePreKey, kemSeed: kemSeed, prefix: prefix, decapsulate: ReferenceKEM.decapsulate)
        var ratchet = ReferenceRatchet<B>.responder(
            sharedSecret: x3dh.sharedSecret, associatedData: x3dh.associatedData, signedPreKey: signedPreKey.key,
            keySource: keys.next)
        ratchet.maxSkip = maxSkip
        ratchet.maxStored = maxStored
        var session = ReferenceSessionRecord(
            role: 2, localIdentityKey: identity.publicKey, remoteIdentityKey: prefix.identityKey, localAddress: address,
            remoteAddress: peerAddress, baseKey: prefix.baseKey, prefixDigest: prefixDigest, pendingPrefix: nil,
            ratchet: ratchet)
        let plaintext = try session.decrypt(inner)
        if let id = prefix.oneTimePreKeyID { oneTimePreKeys[id] = nil }
        if let id = prefix.kemPreKeyID { kemSeeds[id] = nil }
        record.promote(session)
        return plaintext
    }
}
