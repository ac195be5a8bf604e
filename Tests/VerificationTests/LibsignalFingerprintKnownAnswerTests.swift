import SignalPrimitives
@_spi(Testing) import Verification
import XCTest

/// libsignal's published fingerprint test values.
///
/// Source: signalapp/libsignal, rust/protocol/src/fingerprint.rs (module `test`: the constants
/// ALICE_IDENTITY, BOB_IDENTITY, DISPLAYABLE_FINGERPRINT_V1, ALICE/BOB_SCANNABLE_FINGERPRINT_V1/V2,
/// ALICE/BOB_STABLE_ID and the tests `fingerprint_test_v1`, `fingerprint_test_v2`,
/// `fingerprint_encodings`), commit 03a739a95caeea91dbdef44b67b24735f401953c. The same values
/// are Java's NumericFingerprintGeneratorTest testVectorsVersion1/2.
///
/// libsignal's identity keys are the 33-byte Signal encoding of X25519 keys (0x05 || key); our
/// API takes the identity-key bytes K as given, so they are passed unchanged.
final class LibsignalFingerprintKnownAnswerTests: XCTestCase {
    private let aliceIdentity = "0506863bc66d02b40d27b8d49ca7c09e9239236f9d7d25d6fcca5ce13c7064d868"
    private let bobIdentity = "05f781b6fb32fed9ba1cf2de978d4d5da28dc34046ae814402b5c0dbd96fda907b"
    private let aliceStableID = "+14152222222"
    private let bobStableID = "+14153333333"
    private let displayableV1 = "300354477692869396892869876765458257569162576843440918079131"
    private let aliceScannableV1 = "080112220a201e301a0353dce3dbe7684cb8336e85136cdc0ee96219494ada305d62a7bd61df1a220a20d62cbf73a11592015b6b9f1682ac306fea3aaf3885b84d12bca631e9d4fb3a4d"
    private let bobScannableV1 = "080112220a20d62cbf73a11592015b6b9f1682ac306fea3aaf3885b84d12bca631e9d4fb3a4d1a220a201e301a0353dce3dbe7684cb8336e85136cdc0ee96219494ada305d62a7bd61df"
    private let aliceScannableV2 = "080212220a201e301a0353dce3dbe7684cb8336e85136cdc0ee96219494ada305d62a7bd61df1a220a20d62cbf73a11592015b6b9f1682ac306fea3aaf3885b84d12bca631e9d4fb3a4d"
    private let bobScannableV2 = "080212220a20d62cbf73a11592015b6b9f1682ac306fea3aaf3885b84d12bca631e9d4fb3a4d1a220a201e301a0353dce3dbe7684cb8336e85136cdc0ee96219494ada305d62a7bd61df"

    private func fingerprints(version: UInt32) throws -> (alice: Fingerprint, bob: Fingerprint) {
        let aliceKey = try XCTUnwrap(Hex.decode(aliceIdentity))
        let bobKey = try XCTUnwrap(Hex.decode(bobIdentity))
        let generator = try FingerprintGenerator(iterations: 5200)
        let alice = generator.fingerprint(version: version,
                                          localIdentifier: Array(aliceStableID.utf8), localIdentityKey: aliceKey,
                                          remoteIdentifier: Array(bobStableID.utf8), remoteIdentityKey: bobKey)
        let bob = generator.fingerprint(version: version,
                                        localIdentifier: Array(bobStableID.utf8), localIdentityKey: bobKey,
                                        remoteIdentifier: Array(aliceStableID.utf8), remoteIdentityKey: aliceKey)
        return (alice, bob)
    }

    func testVersion1MatchesLibsignal() throws {
        let (alice, bob) = try fingerprints(version: 1)
        XCTAssertEqual(alice.displayable.digits, displayableV1)
        XCTAssertEqual(bob.displayable.digits, displayableV1)
        XCTAssertEqual(Hex.encode(alice.scannable.serialized), aliceScannableV1)
        XCTAssertEqual(Hex.encode(bob.scannable.serialized), bobScannableV1)
    }

    func testVersion2MatchesLibsignalAndKeepsTheVersion1Digits() throws {
        let (alice, bob) = try fingerprints(version: 2)
        XCTAssertEqual(alice.displayable.digits, displayableV1)
        XCTAssertEqual(bob.displayable.digits, displayableV1)
        XCTAssertEqual(Hex.encode(alice.scannable.serialized), aliceScannableV2)
        XCTAssertEqual(Hex.encode(bob.scannable.serialized), bobScannableV2)
    }

    func testLibsignalScannableFormsDecodeAndCrossMatch() throws {
        let (alice, bob) = try fingerprints(version: 1)
        XCTAssertEqual(try alice.scannable.compare(serialized: XCTUnwrap(Hex.decode(bobScannableV1))), .match)
        XCTAssertEqual(try bob.scannable.compare(serialized: XCTUnwrap(Hex.decode(aliceScannableV1))), .match)
        XCTAssertEqual(try alice.scannable.compare(serialized: XCTUnwrap(Hex.decode(bobScannableV2))),
                       .versionMismatch(ours: 1, theirs: 2))
    }

    /// libsignal's `fingerprint_encodings`: version 2, contents 0x12 × 32 and 0xBA × 32.
    func testEncodingOfFixedContentsMatchesLibsignal() throws {
        let fingerprint = try ScannableFingerprint(version: 2,
                                                   localFingerprint: [UInt8](repeating: 0x12, count: 32),
                                                   remoteFingerprint: [UInt8](repeating: 0xBA, count: 32))
        let expected = "080212220a20" + String(repeating: "12", count: 32) + "1a220a20" + String(repeating: "ba", count: 32)
        XCTAssertEqual(Hex.encode(fingerprint.serialized), expected)
        XCTAssertEqual(try ScannableFingerprint(serialized: fingerprint.serialized), fingerprint)
    }
}
