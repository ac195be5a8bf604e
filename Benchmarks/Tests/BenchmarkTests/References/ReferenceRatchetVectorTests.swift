@testable import BenchmarkCases
import XCTest

/// The naive Double Ratchet of both references reproduces SPEC §4's vectors (the tests
/// without error events), including the prekey-message phase, driven by a small test party.
final class ReferenceRatchetVectorTests: XCTestCase {
    func testFloorRatchetMatchesTheVectors() throws { try check(SodiumBackend.self) }

    func testSwiftCryptoRatchetMatchesTheVectors() throws { try check(SwiftCryptoBackend.self) }

    private func check<B: ReferenceBackend>(_ backend: B.Type) throws {
        var checked = 0
        for test in try VectorFiles.tests("ratchet.json") {
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
            checked += 1
        }
        XCTAssertGreaterThan(checked, 10)
    }
}

/// One party of a ratchet vector: the prekey-message phase around a `ReferenceRatchet`.
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
    let keys: KeyList
    let maxSkip: Int
    let maxStored: Int
    var session: ReferenceRatchet<B>?
    /// The initiator's prekey prefix, until she decrypts a reply.
    var prefix: [UInt8]?
    /// The responder's prekeys and the EK_A that created its session.
    var signedPreKey: (id: UInt32, key: (key: B.AgreementKey, publicKey: [UInt8]))?
    var oneTimePreKeys: [UInt32: B.AgreementKey] = [:]
    var originEphemeral: [UInt8]?

    init(identitySeed: [UInt8], keys: [[UInt8]], maxSkip: Int, maxStored: Int) throws {
        identity = try ReferenceIdentity<B>(seed: identitySeed)
        self.keys = KeyList(keys)
        self.maxSkip = maxSkip
        self.maxStored = maxStored
    }

    static func pair(_ test: [String: Any]) throws -> (VectorParty, VectorParty) {
        let a = try test.object("alice"), b = try test.object("bob")
        let maxSkip = try test.int("max_skip")
        let maxStored = (test["max_stored"] as? NSNumber)?.intValue ?? 2000
        func keys(_ party: [String: Any]) throws -> [[UInt8]] {
            guard let list = party["ratchet_keys"] as? [String] else { throw VectorFormatError("ratchet_keys") }
            return try list.map { guard let bytes = hexBytes($0) else { throw VectorFormatError("hex") }; return bytes }
        }
        let alice = try VectorParty(identitySeed: a.hex("identity_seed"), keys: keys(a), maxSkip: maxSkip, maxStored: maxStored)
        let bob = try VectorParty(identitySeed: b.hex("identity_seed"), keys: keys(b), maxSkip: maxSkip, maxStored: maxStored)
        let spk = try B.agreementKey(secret: b.hex("spk_sk"))
        let spkID = UInt32(try b.int("spk_id"))
        bob.signedPreKey = (spkID, spk)
        let opk = try b.optionalHex("opk_sk").map { try B.agreementKey(secret: $0) }
        let opkID = (b["opk_id"] as? NSNumber).map { UInt32($0.uint32Value) }
        if let opk, let opkID { bob.oneTimePreKeys[opkID] = opk.key }
        // Alice has processed Bob's bundle.
        let encoded = [UInt8(0x05)] + spk.publicKey
        var signature = [UInt8](repeating: 0, count: 64)
        encoded.withUnsafeBytes { m in signature.withUnsafeMutableBytes { B.sign(m, with: bob.identity.signingKey, into: $0) } }
        let bundle = ReferenceBundle(
            identityKey: bob.identity.publicKey, signedPreKey: spk.publicKey, signedPreKeyID: spkID, signature: signature,
            oneTimePreKey: opk?.publicKey, oneTimePreKeyID: opkID)
        let ephemeral = try B.agreementKey(secret: a.hex("x3dh_ephemeral_sk"))
        let x3dh = try ReferenceX3DH<B>.initiate(identity: alice.identity, ephemeral: ephemeral.key, bundle: bundle)
        var session = try ReferenceRatchet<B>.initiator(
            sharedSecret: x3dh.sharedSecret, associatedData: x3dh.associatedData, remoteSignedPreKey: spk.publicKey,
            keySource: alice.keys.next)
        session.maxSkip = maxSkip
        session.maxStored = maxStored
        alice.session = session
        var prefix: [UInt8] = [0x02] + alice.identity.publicKey + ephemeral.publicKey
        prefix.appendU32(spkID)
        if let opkID, opk != nil {
            prefix.append(0x01)
            prefix.appendU32(opkID)
        } else {
            prefix.append(0x00)
        }
        alice.prefix = prefix
        return (alice, bob)
    }

    func encrypt(_ plaintext: [UInt8]) throws -> [UInt8] {
        guard var session else { throw ReferenceError.invalidMessage }
        let body = try session.encrypt(plaintext)
        self.session = session
        return (prefix ?? []) + body
    }

    func decrypt(_ message: [UInt8]) throws -> [UInt8] {
        if message.first == 0x01 {
            guard var session else { throw ReferenceError.invalidMessage }
            let plaintext = try session.decrypt(message)
            self.session = session
            prefix = nil
            return plaintext
        }
        // A prekey message (the happy path only).
        let ik = Array(message[1..<33]), ek = Array(message[33..<65])
        let flag = message[69]
        let prefixCount = flag == 1 ? 74 : 70
        let inner = Array(message[prefixCount...])
        if let originEphemeral, originEphemeral == ek, var session {
            let plaintext = try session.decrypt(inner)
            self.session = session
            return plaintext
        }
        guard let signedPreKey else { throw ReferenceError.invalidMessage }
        let opk = flag == 1 ? oneTimePreKeys[message.u32(at: 70)] : nil
        let x3dh = try ReferenceX3DH<B>.respond(
            identity: identity, signedPreKey: signedPreKey.key.key, oneTimePreKey: opk,
            initiatorIdentity: ik, initiatorEphemeral: ek)
        var session = ReferenceRatchet<B>.responder(
            sharedSecret: x3dh.sharedSecret, associatedData: x3dh.associatedData, signedPreKey: signedPreKey.key,
            keySource: keys.next)
        session.maxSkip = maxSkip
        session.maxStored = maxStored
        let plaintext = try session.decrypt(inner)
        if flag == 1 { oneTimePreKeys.removeValue(forKey: message.u32(at: 70)) }
        self.session = session
        originEphemeral = ek
        return plaintext
    }
}
