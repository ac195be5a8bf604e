import SignalPrimitives
@_spi(Testing) @testable import Verification
import XCTest

/// SPEC §7 safety numbers: structure, symmetry, comparison and parameter bounds.
final class SafetyNumberTests: XCTestCase {
    private func randomKey() throws -> Ed25519.PublicKey { try Ed25519.PrivateKey().publicKey }

    /// The iterated hash, recomputed with one-shot SHA-512 calls straight from the SPEC formula.
    private func referenceHash(iterations: Int, identifier: [UInt8], key: [UInt8]) -> [UInt8] {
        var hash = SHA512.hash([0, 0] + key + identifier + key)
        for _ in 1 ..< iterations { hash = SHA512.hash(hash + key) }
        return hash
    }

    func testIteratedHashFollowsTheSpecFormula() throws {
        for (iterations, keyLength) in [(2, 32), (3, 33), (1024, 32), (5200, 7)] {
            let key = SecureRandom.bytes(keyLength)
            let identifier = Array("user-\(iterations)".utf8)
            let expected = referenceHash(iterations: iterations, identifier: identifier, key: key)
            XCTAssertEqual(FingerprintHash.compute(iterations: iterations, identifier: identifier, key: key),
                           Array(expected.prefix(32)), "iterations \(iterations)")
        }
    }

    func testDigitsAreSixBigEndianFiveByteChunksModuloOneHundredThousand() {
        // 0xffffffffff = 1099511627775 → 27775; 0x0000000001 → 00001; 0x00000186a0 = 100000 → 00000;
        // 0x0000018699 = 99993 → 99993; 0x0100000000 = 4294967296 → 67296; 0x000000ffff = 65535 → 65535.
        let hash: [UInt8] = [0xff, 0xff, 0xff, 0xff, 0xff,
                             0x00, 0x00, 0x00, 0x00, 0x01,
                             0x00, 0x00, 0x01, 0x86, 0xa0,
                             0x00, 0x00, 0x01, 0x86, 0x99,
                             0x01, 0x00, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x00, 0xff, 0xff,
                             0xaa, 0xbb]
        XCTAssertEqual(FingerprintHash.digits(hash), "277750000100000999936729665535")
    }

    func testBothPartiesSeeTheSameSixtyDigitsAndTheirScannablesCrossMatch() throws {
        let aliceKey = try randomKey(), bobKey = try randomKey()
        let generator = try FingerprintGenerator()
        for version: UInt32 in [1, 2] {
            let alice = generator.fingerprint(version: version, localUserID: "alice", localIdentityKey: aliceKey,
                                              remoteUserID: "bob", remoteIdentityKey: bobKey)
            let bob = generator.fingerprint(version: version, localUserID: "bob", localIdentityKey: bobKey,
                                            remoteUserID: "alice", remoteIdentityKey: aliceKey)
            XCTAssertEqual(alice.displayable.digits, bob.displayable.digits)
            XCTAssertEqual(alice.displayable, bob.displayable)
            XCTAssertEqual(alice.displayable.localDigits, bob.displayable.remoteDigits)
            XCTAssertEqual(alice.displayable.digits.count, 60)
            XCTAssertTrue(alice.displayable.digits.utf8.allSatisfy { (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) })
            XCTAssertEqual(alice.scannable.compare(with: bob.scannable), .match)
            XCTAssertEqual(try bob.scannable.compare(serialized: alice.scannable.serialized), .match)
            // A party's own form does not match itself: local and remote are swapped on the other side.
            XCTAssertEqual(alice.scannable.compare(with: alice.scannable), .mismatch)
        }
    }

    func testTheSmallerHalfIsShownFirst() throws {
        let fingerprint = try Fingerprint(version: 1, iterations: 2,
                                          localIdentifier: Array("a".utf8), localIdentityKey: SecureRandom.bytes(32),
                                          remoteIdentifier: Array("b".utf8), remoteIdentityKey: SecureRandom.bytes(32))
        let halves = [fingerprint.displayable.localDigits, fingerprint.displayable.remoteDigits].sorted()
        XCTAssertEqual(fingerprint.displayable.digits, halves[0] + halves[1])
    }

    func testDisplayIsTwelveGroupsOfFive() throws {
        let fingerprint = try Fingerprint(version: 2, iterations: 100,
                                          localIdentifier: Array("alice".utf8), localIdentityKey: SecureRandom.bytes(32),
                                          remoteIdentifier: Array("bob".utf8), remoteIdentityKey: SecureRandom.bytes(32))
        let groups = fingerprint.displayable.groups
        XCTAssertEqual(groups.count, 12)
        XCTAssertTrue(groups.allSatisfy { $0.utf8.count == 5 })
        XCTAssertEqual(groups.joined(), fingerprint.displayable.digits)
        XCTAssertEqual(fingerprint.displayable.formatted, groups.joined(separator: " "))
        XCTAssertEqual(fingerprint.displayable.formatted.utf8.count, 71)
    }

    func testAManInTheMiddleKeyGivesADifferentNumberAndAMismatch() throws {
        let aliceKey = try randomKey(), bobKey = try randomKey(), mallory = try randomKey()
        let generator = try FingerprintGenerator(iterations: 1024)
        let alice = generator.fingerprint(version: 1, localUserID: "alice", localIdentityKey: aliceKey,
                                          remoteUserID: "bob", remoteIdentityKey: mallory)
        let bob = generator.fingerprint(version: 1, localUserID: "bob", localIdentityKey: bobKey,
                                        remoteUserID: "alice", remoteIdentityKey: aliceKey)
        XCTAssertNotEqual(alice.displayable.digits, bob.displayable.digits)
        XCTAssertEqual(alice.scannable.compare(with: bob.scannable), .mismatch)
        XCTAssertEqual(bob.scannable.compare(with: alice.scannable), .mismatch)
    }

    func testAWrongIdentifierGivesAMismatch() throws {
        let aliceKey = try randomKey(), bobKey = try randomKey()
        let generator = try FingerprintGenerator(iterations: 1024)
        let alice = generator.fingerprint(version: 1, localUserID: "+141512222222", localIdentityKey: aliceKey,
                                          remoteUserID: "bob", remoteIdentityKey: bobKey)
        let bob = generator.fingerprint(version: 1, localUserID: "bob", localIdentityKey: bobKey,
                                        remoteUserID: "+14152222222", remoteIdentityKey: aliceKey)
        XCTAssertNotEqual(alice.displayable, bob.displayable)
        XCTAssertEqual(alice.scannable.compare(with: bob.scannable), .mismatch)
    }

    func testPrecomposedAndDecomposedIdentifiersAreDifferentIdentifiers() throws {
        let key = SecureRandom.bytes(32), other = SecureRandom.bytes(32)
        let precomposed = try Fingerprint(version: 2, iterations: 64,
                                          localIdentifier: Array("\u{e9}".utf8), localIdentityKey: key,
                                          remoteIdentifier: Array("bob".utf8), remoteIdentityKey: other)
        let decomposed = try Fingerprint(version: 2, iterations: 64,
                                         localIdentifier: Array("e\u{301}".utf8), localIdentityKey: key,
                                         remoteIdentifier: Array("bob".utf8), remoteIdentityKey: other)
        XCTAssertNotEqual(precomposed.displayable.localDigits, decomposed.displayable.localDigits)
        XCTAssertEqual(precomposed.displayable.remoteDigits, decomposed.displayable.remoteDigits)
    }

    func testVersionMismatchIsReportedApartFromMismatch() throws {
        let aliceKey = try randomKey(), bobKey = try randomKey()
        let generator = try FingerprintGenerator(iterations: 64)
        let aliceV1 = generator.fingerprint(version: 1, localUserID: "alice", localIdentityKey: aliceKey,
                                            remoteUserID: "bob", remoteIdentityKey: bobKey)
        let bobV2 = generator.fingerprint(version: 2, localUserID: "bob", localIdentityKey: bobKey,
                                          remoteUserID: "alice", remoteIdentityKey: aliceKey)
        XCTAssertEqual(aliceV1.scannable.compare(with: bobV2.scannable), .versionMismatch(ours: 1, theirs: 2))
        XCTAssertEqual(bobV2.scannable.compare(with: aliceV1.scannable), .versionMismatch(ours: 2, theirs: 1))
        // Same keys, so only the version differs: the digits agree.
        XCTAssertEqual(aliceV1.displayable, bobV2.displayable)
        // A different version with wrong keys is still a version mismatch, never "mismatch".
        let mallory = generator.fingerprint(version: 2, localUserID: "bob", localIdentityKey: try randomKey(),
                                            remoteUserID: "alice", remoteIdentityKey: aliceKey)
        XCTAssertEqual(aliceV1.scannable.compare(with: mallory.scannable), .versionMismatch(ours: 1, theirs: 2))
    }

    func testIterationsOutsideTwoToOneMillionAreRejected() throws {
        for bad in [Int.min, -1, 0, 1, 1_000_001, Int.max] {
            XCTAssertThrowsError(try FingerprintGenerator(iterations: bad)) {
                XCTAssertEqual($0 as? VerificationError, .invalidIterations(bad))
            }
            XCTAssertThrowsError(try Fingerprint(version: 1, iterations: bad, localIdentifier: [1], localIdentityKey: [2],
                                                 remoteIdentifier: [3], remoteIdentityKey: [4])) {
                XCTAssertEqual($0 as? VerificationError, .invalidIterations(bad))
            }
        }
        XCTAssertEqual(try FingerprintGenerator(iterations: 2).iterations, 2)
        XCTAssertEqual(try FingerprintGenerator(iterations: 1_000_000).iterations, 1_000_000)
        XCTAssertEqual(try FingerprintGenerator().iterations, 5200)
    }

    func testTheCacheGivesTheSameFingerprintsAsFreshComputation() throws {
        let cached = try FingerprintGenerator(iterations: 200, cacheCapacity: 2)
        let uncached = try FingerprintGenerator(iterations: 200, cacheCapacity: 0)
        let local = SecureRandom.bytes(32)
        for index in 0 ..< 5 {
            let remote = SecureRandom.bytes(32)
            for _ in 0 ..< 2 {
                let a = cached.fingerprint(version: 2, localIdentifier: Array("me".utf8), localIdentityKey: local,
                                           remoteIdentifier: Array("peer-\(index)".utf8), remoteIdentityKey: remote)
                let b = uncached.fingerprint(version: 2, localIdentifier: Array("me".utf8), localIdentityKey: local,
                                             remoteIdentifier: Array("peer-\(index)".utf8), remoteIdentityKey: remote)
                XCTAssertEqual(a.displayable.digits, b.displayable.digits)
                XCTAssertEqual(a.scannable, b.scannable)
            }
            XCTAssertLessThanOrEqual(cached.cachedCount, 2)
        }
        XCTAssertEqual(uncached.cachedCount, 0)
    }

    func testScannableContentsMustBeThirtyTwoBytes() {
        for (local, remote) in [(31, 32), (32, 33), (0, 32)] {
            XCTAssertThrowsError(try ScannableFingerprint(version: 1,
                                                          localFingerprint: [UInt8](repeating: 1, count: local),
                                                          remoteFingerprint: [UInt8](repeating: 2, count: remote))) {
                XCTAssertEqual($0 as? VerificationError, .invalidFingerprintLength(local == 32 ? remote : local))
            }
        }
    }

    func testLargeVersionsUseMultiByteVarintsAndRoundTrip() throws {
        for version: UInt32 in [0, 127, 128, 300, UInt32.max] {
            let fingerprint = try ScannableFingerprint(version: version,
                                                       localFingerprint: SecureRandom.bytes(32),
                                                       remoteFingerprint: SecureRandom.bytes(32))
            let decoded = try ScannableFingerprint(serialized: fingerprint.serialized)
            XCTAssertEqual(decoded, fingerprint)
            XCTAssertEqual(decoded.version, version)
        }
    }
}
