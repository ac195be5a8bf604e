import Foundation
import SignalPrimitives
import SignalVectorKit
import XCTest

/// The SPEC §8 reading of each Wycheproof algorithm, shown on single tests taken from the
/// repository's Wycheproof files and changed where a test needs it.
final class WycheproofAlgorithmTests: XCTestCase {
    private struct Picked {
        var group: [String: Any]
        var test: [String: Any]
        let algorithm: String
    }

    /// The first test of `file` whose group and test match.
    private func pick(_ file: String, group isGroup: ([String: Any]) -> Bool = { _ in true },
                      test isTest: ([String: Any]) -> Bool) throws -> Picked {
        let data = try Data(contentsOf: URL(fileURLWithPath: try PackageLocations.vectorPath(file)))
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let groups = try XCTUnwrap(document["testGroups"] as? [[String: Any]])
        for group in groups where isGroup(group) {
            let tests = try XCTUnwrap(group["tests"] as? [[String: Any]])
            if let test = tests.first(where: isTest) {
                return Picked(group: group, test: test, algorithm: try XCTUnwrap(document["algorithm"] as? String))
            }
        }
        throw MissingVectors(path: "\(file): no test matching the test's needs")
    }

    /// Runs a one-test Wycheproof file made of `picked`.
    private func run(_ picked: Picked) throws -> VectorFileResult {
        var group = picked.group
        group["tests"] = [picked.test]
        let document: [String: Any] = ["algorithm": picked.algorithm, "numberOfTests": 1, "testGroups": [group]]
        let data = try JSONSerialization.data(withJSONObject: document)
        return ConformanceRunner().verify(data: data, path: "picked.json")
    }

    private func result(_ value: String) -> ([String: Any]) -> Bool { { $0["result"] as? String == value } }

    private func assertOutcome(_ picked: Picked, passed: Int, failed: Int, skipped: Int = 0,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let outcome = try run(picked)
        XCTAssertEqual([outcome.passed, outcome.failed, outcome.skipped], [passed, failed, skipped],
                       "\(outcome.failures)", file: file, line: line)
    }

    // MARK: - Group types

    /// A group of another `type` under the same `algorithm` (Wycheproof's x25519_asn, _pem and
    /// _jwk files say "XDH" too, with DER, PEM or JWK keys) is skipped, never run or passed; a
    /// group without a `type` is a failure.
    func testGroupsOfAnotherTypeAreSkippedAndAGroupWithoutTypeFails() throws {
        let cases: [(file: String, type: String, other: String, group: ([String: Any]) -> Bool)] = [
            ("wycheproof/x25519_test.json", "XdhComp", "XdhAsnComp", { _ in true }),
            ("wycheproof/x25519_test.json", "XdhComp", "XdhPemComp", { _ in true }),
            ("wycheproof/x25519_test.json", "XdhComp", "XdhJwkComp", { _ in true }),
            ("wycheproof/ed25519_test.json", "EddsaVerify", "EddsaSign", { _ in true }),
            ("wycheproof/aes_gcm_test.json", "AeadTest", "DaeadTest", runnableAESGroup),
            ("wycheproof/hkdf_sha256_test.json", "HkdfTest", "PrfTest", { _ in true }),
            ("wycheproof/hmac_sha256_test.json", "MacTest", "MacWithIvTest", { $0["tagSize"] as? Int == 256 }),
        ]
        for (file, type, other, isGroup) in cases {
            var picked = try pick(file, group: isGroup, test: result("valid"))
            XCTAssertEqual(picked.group["type"] as? String, type, file)
            picked.group["type"] = other
            let skipped = try run(picked)
            XCTAssertEqual([skipped.passed, skipped.failed, skipped.skipped], [0, 0, 1], "\(file) \(other): \(skipped.failures)")
            picked.group["type"] = nil
            let untyped = try run(picked)
            XCTAssertEqual([untyped.passed, untyped.failed, untyped.skipped], [0, 1, 0], "\(file) without type")
        }
    }

    // MARK: - XDH

    func testXDHAllZeroSharedSecretMustBeRejectedEvenWhenTheFileCallsItValid() throws {
        var picked = try pick("wycheproof/x25519_test.json") {
            ($0["flags"] as? [String])?.contains("ZeroSharedSecret") == true
        }
        try assertOutcome(picked, passed: 1, failed: 0)
        picked.test["result"] = "valid"
        try assertOutcome(picked, passed: 1, failed: 0)
    }

    func testXDHAcceptableTestMustNotComputeAnotherValue() throws {
        var picked = try pick("wycheproof/x25519_test.json") {
            $0["result"] as? String == "acceptable" && ($0["shared"] as? String)?.allSatisfy({ $0 == "0" }) == false
        }
        try assertOutcome(picked, passed: 1, failed: 0)
        picked.test["shared"] = String(repeating: "11", count: 32)
        try assertOutcome(picked, passed: 0, failed: 1)
    }

    func testXDHValidTestMarkedInvalidFails() throws {
        var picked = try pick("wycheproof/x25519_test.json", test: result("valid"))
        picked.test["result"] = "invalid"
        try assertOutcome(picked, passed: 0, failed: 1)
    }

    // MARK: - EDDSA

    func testEdDSAValidMustVerifyAndInvalidMustNot() throws {
        var valid = try pick("wycheproof/ed25519_test.json", test: result("valid"))
        var invalid = try pick("wycheproof/ed25519_test.json", test: result("invalid"))
        try assertOutcome(valid, passed: 1, failed: 0)
        try assertOutcome(invalid, passed: 1, failed: 0)
        valid.test["result"] = "invalid"
        invalid.test["result"] = "valid"
        try assertOutcome(valid, passed: 0, failed: 1)
        try assertOutcome(invalid, passed: 0, failed: 1)
    }

    func testEdDSANonCanonicalSignatureIsRejected() throws {
        // SignatureMalleability: S + ℓ, which libsodium's strict verification rejects.
        let picked = try pick("wycheproof/ed25519_test.json") {
            ($0["flags"] as? [String])?.contains("SignatureMalleability") == true
        }
        XCTAssertEqual(picked.test["result"] as? String, "invalid")
        try assertOutcome(picked, passed: 1, failed: 0)
    }

    // MARK: - AES-GCM

    private let runnableAESGroup: ([String: Any]) -> Bool = {
        $0["keySize"] as? Int == 256 && $0["ivSize"] as? Int == 96 && $0["tagSize"] as? Int == 128
    }

    func testAESGCMGroupsOtherThan256BitKey96BitIVAreSkippedNeverPassed() throws {
        for (keySize, ivSize) in [(128, 96), (192, 96), (256, 128), (256, 64)] {
            var picked = try pick("wycheproof/aes_gcm_test.json",
                                  group: { $0["keySize"] as? Int == keySize && $0["ivSize"] as? Int == ivSize },
                                  test: result("valid"))
            try assertOutcome(picked, passed: 0, failed: 0, skipped: 1)
            picked.test["tag"] = String(repeating: "00", count: 16)   // not even looked at
            try assertOutcome(picked, passed: 0, failed: 0, skipped: 1)
        }
    }

    func testAESGCMInvalidCiphertextMustNotOpenAndValidMustSealExactly() throws {
        try XCTSkipUnless(AES256GCM.isAvailable, "AES-256-GCM needs AES-NI and PCLMUL")
        var invalid = try pick("wycheproof/aes_gcm_test.json", group: runnableAESGroup, test: result("invalid"))
        try assertOutcome(invalid, passed: 1, failed: 0)
        invalid.test["result"] = "valid"
        try assertOutcome(invalid, passed: 0, failed: 1)

        var valid = try pick("wycheproof/aes_gcm_test.json", group: runnableAESGroup) {
            $0["result"] as? String == "valid" && ($0["msg"] as? String)?.isEmpty == false
        }
        try assertOutcome(valid, passed: 1, failed: 0)
        valid.test["result"] = "invalid"
        try assertOutcome(valid, passed: 0, failed: 1)
    }

    // MARK: - HKDF-SHA-256

    func testHKDFTooLargeOutputMustThrowAndValidMustDeriveOKM() throws {
        var invalid = try pick("wycheproof/hkdf_sha256_test.json", test: result("invalid"))
        XCTAssertGreaterThan(try XCTUnwrap(invalid.test["size"] as? Int), 255 * 32)
        try assertOutcome(invalid, passed: 1, failed: 0)
        invalid.test["result"] = "valid"
        try assertOutcome(invalid, passed: 0, failed: 1)

        var valid = try pick("wycheproof/hkdf_sha256_test.json", test: result("valid"))
        valid.test["result"] = "invalid"
        try assertOutcome(valid, passed: 0, failed: 1)
    }

    /// A `size` far outside RFC 5869's range (which the library would otherwise be asked to
    /// allocate) is checked without allocating it: invalid passes, valid fails, with a message.
    func testHKDFHugeOrNegativeSizeIsRejectedWithoutAllocatingIt() throws {
        var picked = try pick("wycheproof/hkdf_sha256_test.json", test: result("invalid"))
        for size in [1 << 62, 1 << 40, 255 * 32 + 1, -1, -4096] {
            picked.test["size"] = size
            picked.test["result"] = "invalid"
            try assertOutcome(picked, passed: 1, failed: 0)
            picked.test["result"] = "acceptable"
            try assertOutcome(picked, passed: 1, failed: 0)
            picked.test["result"] = "valid"
            let outcome = try run(picked)
            XCTAssertEqual([outcome.passed, outcome.failed], [0, 1])
            XCTAssertTrue(outcome.failures.first?.message.contains("size \(size) is outside") == true, "\(outcome.failures)")
        }
    }

    // MARK: - HMACSHA256

    func testHMACShorterTagSizeComparesTheTruncatedTag() throws {
        var picked = try pick("wycheproof/hmac_sha256_test.json",
                              group: { $0["tagSize"] as? Int == 256 }, test: result("valid"))
        let fullTag = try XCTUnwrap(picked.test["tag"] as? String)
        picked.group["tagSize"] = 128
        try assertOutcome(picked, passed: 0, failed: 1)          // a 32-byte tag in a 128-bit group
        picked.test["tag"] = String(fullTag.prefix(32))
        try assertOutcome(picked, passed: 1, failed: 0)          // the first 16 bytes
        picked.test["result"] = "invalid"
        try assertOutcome(picked, passed: 0, failed: 1)
    }

    func testHMACInvalidTagMustNotVerify() throws {
        var picked = try pick("wycheproof/hmac_sha256_test.json",
                              group: { $0["tagSize"] as? Int == 128 }, test: result("invalid"))
        try assertOutcome(picked, passed: 1, failed: 0)
        picked.test["result"] = "valid"
        try assertOutcome(picked, passed: 0, failed: 1)
    }
}

/// SPEC v2's Wycheproof algorithms: XChaCha20-Poly1305 and ML-KEM-768.
final class WycheproofVersion2AlgorithmTests: XCTestCase {
    private func document(_ file: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: try PackageLocations.vectorPath(file)))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Runs `document` with its first test matching `isTest`, after `change` edits it.
    private func runOne(_ document: [String: Any], where isTest: ([String: Any]) -> Bool,
                        change: (inout [String: Any], inout [String: Any]) -> Void = { _, _ in }) throws -> VectorFileResult {
        let groups = try XCTUnwrap(document["testGroups"] as? [[String: Any]])
        for var group in groups {
            let tests = try XCTUnwrap(group["tests"] as? [[String: Any]])
            guard var test = tests.first(where: isTest) else { continue }
            change(&group, &test)
            group["tests"] = [test]
            var single = document
            single["testGroups"] = [group]
            single["numberOfTests"] = 1
            return ConformanceRunner().verify(data: try JSONSerialization.data(withJSONObject: single), path: "one.json")
        }
        throw MissingVectors(path: "no matching test")
    }

    private func counts(_ result: VectorFileResult) -> [Int] { [result.passed, result.failed, result.skipped] }

    func testXChaChaNoncesOfAnotherLengthAreRunAndMustBeRefused() throws {
        let file = try document("wycheproof/xchacha20_poly1305_test.json")
        let shortNonce: ([String: Any]) -> Bool = { ($0["iv"] as? String)?.count == 24 }   // 96-bit nonce
        XCTAssertEqual(counts(try runOne(file, where: shortNonce)), [1, 0, 0], "refused, as an invalid test must be")
        // Marked valid, the same test fails: it is run, never skipped.
        XCTAssertEqual(counts(try runOne(file, where: shortNonce) { _, test in test["result"] = "valid" }), [0, 1, 0])
    }

    func testXChaChaATamperedValidTestFails() throws {
        let file = try document("wycheproof/xchacha20_poly1305_test.json")
        let valid: ([String: Any]) -> Bool = { $0["result"] as? String == "valid" && ($0["msg"] as? String)?.isEmpty == false }
        XCTAssertEqual(counts(try runOne(file, where: valid)), [1, 0, 0])
        XCTAssertEqual(counts(try runOne(file, where: valid) { _, test in
            test["tag"] = String(repeating: "0", count: 32)
        }), [0, 1, 0])
    }

    func testMLKEMKeyGenerationAndDecapsulationAreCompared() throws {
        let file = try document("wycheproof/mlkem_768_test.json")
        let valid: ([String: Any]) -> Bool = { $0["result"] as? String == "valid" }
        XCTAssertEqual(counts(try runOne(file, where: valid)), [1, 0, 0])
        XCTAssertEqual(counts(try runOne(file, where: valid) { _, test in
            test["K"] = String(repeating: "0", count: 64)
        }), [0, 1, 0], "a wrong K must fail")
        XCTAssertEqual(counts(try runOne(file, where: valid) { _, test in
            test["result"] = "invalid"
        }), [0, 1, 0], "a test the library accepts cannot pass as invalid")
        let invalid: ([String: Any]) -> Bool = { $0["result"] as? String == "invalid" }
        XCTAssertEqual(counts(try runOne(file, where: invalid)), [1, 0, 0])
    }

    func testMLKEMInvalidEncapsulationKeysMustBeRefusedAsInvalidKey() throws {
        let file = try document("wycheproof/mlkem_768_encaps_test.json")
        let invalid: ([String: Any]) -> Bool = { $0["result"] as? String == "invalid" }
        XCTAssertEqual(counts(try runOne(file, where: invalid)), [1, 0, 0])
        XCTAssertEqual(counts(try runOne(file, where: invalid) { _, test in test["result"] = "valid" }), [0, 1, 0])
        let valid: ([String: Any]) -> Bool = { $0["result"] as? String == "valid" }
        XCTAssertEqual(counts(try runOne(file, where: valid)), [1, 0, 0])
        XCTAssertEqual(counts(try runOne(file, where: valid) { _, test in test["result"] = "invalid" }), [0, 1, 0])
    }

    func testMLKEMGroupsOfAnotherParameterSetAreSkipped() throws {
        let file = try document("wycheproof/mlkem_768_test.json")
        let result = try runOne(file, where: { _ in true }) { group, _ in group["parameterSet"] = "ML-KEM-1024" }
        XCTAssertEqual(counts(result), [0, 0, 1])
    }
}
