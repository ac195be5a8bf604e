@testable import BenchmarkCases
import XCTest

/// The naive X3DH of both references (the floor and swift-crypto) reproduces SPEC §3's vectors
/// (with and without a KEM prekey: the prefix P, SK and AD, and the bundle checks' errors), so
/// the benchmarks compare the library with the same work.
final class ReferenceX3DHVectorTests: XCTestCase {
    func testFloorX3DHMatchesTheVectors() throws { try checkX3DH(SodiumBackend.self) }

    func testSwiftCryptoX3DHMatchesTheVectors() throws { try checkX3DH(SwiftCryptoBackend.self) }

    func testFloorBundleChecksMatchTheVectors() throws { try checkBundles(SodiumBackend.self) }

    func testSwiftCryptoBundleChecksMatchTheVectors() throws { try checkBundles(SwiftCryptoBackend.self) }

    private func checkX3DH<B: ReferenceBackend>(_ backend: B.Type) throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip("no MLKEM768") }
        var checked = 0, withKEM = 0
        for test in try VectorFiles.tests("x3dh.json") {
            let id = try test.int("id")
            let alice = try ReferenceIdentity<B>(seed: test.hex("alice_identity_seed"))
            let bob = try ReferenceIdentity<B>(seed: test.hex("bob_identity_seed"))
            let aliceAddress = try test.address("alice_address"), bobAddress = try test.address("bob_address")
            let ephemeral = try B.agreementKey(secret: test.hex("alice_ephemeral_sk"))
            let signedPreKey = try B.agreementKey(secret: test.hex("bob_spk_sk"))
            let oneTimePreKey = try test.optionalHex("bob_opk_sk").map { try B.agreementKey(secret: $0) }
            let kemSeed = try test.optionalHex("bob_kem_seed")
            let encapsulation = try (test["kem_encapsulation"] as? [String: Any]).map {
                (ciphertext: try $0.hex("ciphertext"), sharedSecret: try $0.hex("shared_secret"))
            }
            let bundle = ReferenceBundle(
                identityKey: bob.publicKey, signedPreKey: signedPreKey.publicKey, signedPreKeyID: UInt32(try test.int("bob_spk_id")),
                signature: try test.hex("bob_spk_signature"), oneTimePreKey: oneTimePreKey?.publicKey,
                oneTimePreKeyID: test.optionalInt("bob_opk_id").map(UInt32.init),
                kemPreKey: try kemSeed.map { try ReferenceKEM.encapsulationKey(seed: $0) },
                kemPreKeyID: test.optionalInt("bob_kem_id").map(UInt32.init), kemSignature: try test.optionalHex("bob_kem_signature"))
            func encapsulate(_ key: [UInt8]) throws(ReferenceError) -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
                guard ReferenceKEM.isValidEncapsulationKey(key), let encapsulation else { throw .invalidKey }
                return encapsulation
            }
            func initiate() throws -> ReferenceX3DHResult {
                try ReferenceX3DH<B>.initiate(
                    identity: alice, localAddress: aliceAddress, remoteAddress: bobAddress, ephemeral: ephemeral,
                    bundle: bundle, encapsulate: encapsulate)
            }
            if let expected = test["error"] as? String {
                XCTAssertThrowsError(try initiate(), "test \(id)") { error in
                    XCTAssertEqual("\(error)", expected, "test \(id)")
                }
                checked += 1
                continue
            }
            let initiated = try initiate()
            XCTAssertEqual(hexString(initiated.prefix.bytes), hexString(try test.hex("prefix")), "test \(id) P")
            XCTAssertEqual(initiated.sharedSecret, try test.hex("shared_secret"), "test \(id) initiator SK")
            XCTAssertEqual(initiated.associatedData, try test.hex("associated_data"), "test \(id) initiator AD")
            let (prefix, count) = try ReferencePrefix.parse(try test.hex("prefix")[...])
            XCTAssertEqual(count, initiated.prefix.bytes.count, "test \(id) P length")
            if let encapsulation, let kemSeed {
                XCTAssertEqual(try ReferenceKEM.decapsulate(encapsulation.ciphertext, seed: kemSeed), encapsulation.sharedSecret,
                               "test \(id) decapsulation")
                withKEM += 1
            }
            let responded = try ReferenceX3DH<B>.respond(
                identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress, signedPreKey: signedPreKey.key,
                oneTimePreKey: oneTimePreKey?.key, kemSeed: kemSeed, prefix: prefix, decapsulate: ReferenceKEM.decapsulate)
            XCTAssertEqual(responded, initiated, "test \(id) responder")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 80)
        XCTAssertGreaterThan(withKEM, 10)
    }

    /// `bundle.json`: the encoding of valid bundles, and the initiator's checks of every
    /// bundle (decoding, then the signatures, then the keys, as SPEC §3 orders them).
    private func checkBundles<B: ReferenceBackend>(_ backend: B.Type) throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip("no MLKEM768") }
        var checked = 0
        for test in try VectorFiles.tests("bundle.json") {
            let id = try test.int("id")
            let encoded = try test.hex("bundle")
            func check() throws {
                let bundle = try ReferenceBundle(serialized: encoded)
                try ReferenceX3DH<B>.checkBundle(bundle)
                if let key = bundle.kemPreKey, !ReferenceKEM.isValidEncapsulationKey(key) { throw ReferenceError.invalidKey }
            }
            if let expected = test["error"] as? String {
                XCTAssertThrowsError(try check(), "test \(id)") { error in XCTAssertEqual("\(error)", expected, "test \(id)") }
                checked += 1
                continue
            }
            let identity = try ReferenceIdentity<B>(seed: test.hex("identity_seed"))
            let signedPreKey = try B.agreementKey(secret: test.hex("spk_sk")).publicKey
            let oneTimePreKey = try test.optionalHex("opk_sk").map { try B.agreementKey(secret: $0).publicKey }
            let kemKey = try test.optionalHex("kem_seed").map { try ReferenceKEM.encapsulationKey(seed: $0) }
            let bundle = ReferenceBundle(
                identityKey: identity.publicKey, signedPreKey: signedPreKey, signedPreKeyID: UInt32(try test.int("spk_id")),
                signature: identity.signSignedPreKey(signedPreKey, kem: kemKey != nil), oneTimePreKey: oneTimePreKey,
                oneTimePreKeyID: test.optionalInt("opk_id").map(UInt32.init), kemPreKey: kemKey,
                kemPreKeyID: test.optionalInt("kem_id").map(UInt32.init), kemSignature: kemKey.map(identity.signKEMPreKey))
            XCTAssertEqual(hexString(bundle.serialized), hexString(encoded), "test \(id) encoding")
            XCTAssertNoThrow(try check(), "test \(id)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 100)
    }
}
