@testable import BenchmarkCases
import XCTest

/// The floor's naive self-encryption (libsodium's XChaCha20-Poly1305) reproduces SPEC §6's
/// vectors: seal with the vector's nonce, open, and every error. (swift-crypto has no
/// XChaCha20-Poly1305, so the self-encryption cases have no swift-crypto column.)
final class ReferenceSelfEncryptionVectorTests: XCTestCase {
    func testFloorSelfEncryptionMatchesTheVectors() throws {
        var checked = 0, errors = 0
        for test in try VectorFiles.tests("self_encryption.json") {
            let id = try test.int("id")
            let sealer = ReferenceSelfEncryption<SodiumBackend>(identitySeed: try test.hex("identity_seed"))
            let context = try test.hex("context")
            let sealed = try test.hex("sealed")
            if let expected = test["error"] as? String {
                XCTAssertThrowsError(try sealer.open(sealed, context: context), "test \(id)") { error in
                    XCTAssertEqual("\(error)", expected, "test \(id)")
                }
                errors += 1
                continue
            }
            let plaintext = try test.hex("plaintext")
            XCTAssertEqual(
                hexString(try sealer.seal(plaintext, context: context, nonce: try test.hex("nonce"))), hexString(sealed),
                "test \(id) seal")
            XCTAssertEqual(try sealer.open(sealed, context: context), plaintext, "test \(id) open")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 10)
        XCTAssertGreaterThan(errors, 10)
    }
}
