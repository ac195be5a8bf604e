@testable import BenchmarkCases
import XCTest

/// The naive X3DH of both references (the floor and swift-crypto) reproduces SPEC §3's vectors,
/// so the benchmarks compare the library with the same work.
final class ReferenceX3DHVectorTests: XCTestCase {
    func testFloorX3DHMatchesTheVectors() throws { try checkX3DH(SodiumBackend.self) }

    func testSwiftCryptoX3DHMatchesTheVectors() throws { try checkX3DH(SwiftCryptoBackend.self) }

    private func checkX3DH<B: ReferenceBackend>(_ backend: B.Type) throws {
        var checked = 0
        for test in try VectorFiles.tests("x3dh.json") {
            let id = try test.int("id")
            let alice = try ReferenceIdentity<B>(seed: test.hex("alice_identity_seed"))
            let bob = try ReferenceIdentity<B>(seed: test.hex("bob_identity_seed"))
            let ephemeral = try B.agreementKey(secret: test.hex("alice_ephemeral_sk"))
            let signedPreKey = try B.agreementKey(secret: test.hex("bob_spk_sk"))
            let oneTimePreKey = try test.optionalHex("bob_opk_sk").map { try B.agreementKey(secret: $0) }
            let bundle = ReferenceBundle(
                identityKey: bob.publicKey, signedPreKey: signedPreKey.publicKey, signedPreKeyID: 1,
                signature: try test.hex("bob_spk_signature"), oneTimePreKey: oneTimePreKey?.publicKey,
                oneTimePreKeyID: oneTimePreKey == nil ? nil : 2)
            if let expected = test["error"] as? String {
                XCTAssertThrowsError(try ReferenceX3DH<B>.initiate(identity: alice, ephemeral: ephemeral.key, bundle: bundle),
                                     "test \(id)") { error in
                    XCTAssertEqual("\(error)", expected, "test \(id)")
                }
                checked += 1
                continue
            }
            let initiated = try ReferenceX3DH<B>.initiate(identity: alice, ephemeral: ephemeral.key, bundle: bundle)
            let responded = try ReferenceX3DH<B>.respond(
                identity: bob, signedPreKey: signedPreKey.key, oneTimePreKey: oneTimePreKey?.key,
                initiatorIdentity: alice.publicKey, initiatorEphemeral: ephemeral.publicKey)
            XCTAssertEqual(initiated.sharedSecret, try test.hex("shared_secret"), "test \(id) initiator SK")
            XCTAssertEqual(initiated.associatedData, try test.hex("associated_data"), "test \(id) initiator AD")
            XCTAssertEqual(responded, initiated, "test \(id) responder")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 0)
    }
}
