#if os(Linux)
@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification
import XCTest

/// MACs, keys, checksums and fingerprints are compared with libsodium's constant-time
/// `sodium_memcmp` over their whole length, wherever the inputs differ: the comparisons are
/// observed through `ComparisonRecorder` (which stands in for `sodium_memcmp` in this test
/// executable and forwards to libsodium), never by timing.
final class ConstantTimeComparisonTests: XCTestCase {
    typealias Comparison = ComparisonRecorder.Comparison

    /// Positions of a single differing byte: first, middle, last.
    static func variants(of bytes: [UInt8]) -> [[UInt8]] {
        [0, bytes.count / 2, bytes.count - 1].map { position in
            var changed = bytes
            changed[position] ^= 0x01
            return changed
        }
    }

    override func setUpWithError() throws {
        try XCTSkipUnless(ComparisonRecorder.isInterposed, "sodium_memcmp is not observable in this build")
    }

    func testSymmetricKeysAreComparedOverTheirWholeLengthWhereverTheyDiffer() {
        let key = (0 ..< 32).map { UInt8($0 + 1) }
        let a = SymmetricKey(data: key)
        XCTAssertEqual(ComparisonRecorder.recording { XCTAssertTrue(a == SymmetricKey(data: key)) }, [Comparison(length: 32, equal: true)])
        for other in Self.variants(of: key) {
            let b = SymmetricKey(data: other)
            XCTAssertEqual(ComparisonRecorder.recording { XCTAssertFalse(a == b) }, [Comparison(length: 32, equal: false)])
            XCTAssertEqual(ComparisonRecorder.recording { XCTAssertFalse(a.storage.constantTimeEquals(b.storage)) },
                           [Comparison(length: 32, equal: false)])
        }
    }

    func testKeysOfDifferentLengthsAreUnequalWithoutComparingContents() {
        // The length of a key is not secret.
        let short = SymmetricKey(data: [1, 2, 3])
        let long = SymmetricKey(data: [1, 2, 3, 4])
        XCTAssertEqual(ComparisonRecorder.recording { XCTAssertFalse(short == long) }, [])
    }

    func testHMACTagsAreVerifiedOverTheirWholeLengthWhereverTheyDiffer() {
        let key = Array("mac key".utf8)
        let message = Array("authenticated message".utf8)
        let tag = HMACSHA256.authenticationCode(for: message, using: key)
        XCTAssertEqual(ComparisonRecorder.recording {
            XCTAssertTrue(HMACSHA256.isValidAuthenticationCode(tag, for: message, using: key))
        }, [Comparison(length: 32, equal: true)])
        for forged in Self.variants(of: tag) {
            XCTAssertEqual(ComparisonRecorder.recording {
                XCTAssertFalse(HMACSHA256.isValidAuthenticationCode(forged, for: message, using: key))
            }, [Comparison(length: 32, equal: false)])
        }
        // A truncated tag is compared over its own length.
        XCTAssertEqual(ComparisonRecorder.recording {
            XCTAssertFalse(HMACSHA256.isValidAuthenticationCode(Self.variants(of: Array(tag.prefix(16)))[0], for: message, using: key, truncatedTo: 16))
        }, [Comparison(length: 16, equal: false)])
    }

    func testPersistedStateChecksumsAreComparedOverAllSixteenBytes() {
        var writer = StateWriter(kind: .trust, version: 1)
        writer.write(UInt32(0))
        let blob = writer.finish()
        for position in [blob.count - 16, blob.count - 8, blob.count - 1] {
            var corrupted = blob
            corrupted[position] ^= 0x80
            let comparisons = ComparisonRecorder.recording {
                do throws(SessionError) {
                    _ = try StateReader(corrupted, kind: .trust, supportedVersions: 1 ... 1)
                    XCTFail("a corrupted checksum was accepted")
                } catch {
                    XCTAssertEqual(error, .invalidPayload)
                }
            }
            XCTAssertEqual(comparisons, [Comparison(length: 16, equal: false)])
        }
    }

    func testScannableFingerprintsCompareBothContentsInFullEvenWhenTheFirstDiffers() throws {
        let local = (0 ..< 32).map { UInt8($0) }
        let remote = (0 ..< 32).map { UInt8(100 + $0) }
        let ours = try ScannableFingerprint(version: 2, localFingerprint: local, remoteFingerprint: remote)
        let theirs = try ScannableFingerprint(version: 2, localFingerprint: remote, remoteFingerprint: local)
        XCTAssertEqual(ComparisonRecorder.recording { XCTAssertEqual(ours.compare(with: theirs), .match) },
                       [Comparison(length: 32, equal: true), Comparison(length: 32, equal: true)])
        for changed in Self.variants(of: local) {
            // Their copy of our fingerprint differs: the first comparison fails, the second still runs.
            let forged = try ScannableFingerprint(version: 2, localFingerprint: remote, remoteFingerprint: changed)
            XCTAssertEqual(ComparisonRecorder.recording { XCTAssertEqual(ours.compare(with: forged), .mismatch) },
                           [Comparison(length: 32, equal: false), Comparison(length: 32, equal: true)])
            let other = try ScannableFingerprint(version: 2, localFingerprint: changed, remoteFingerprint: remote)
            XCTAssertEqual(ComparisonRecorder.recording { XCTAssertNotEqual(ours, other) },
                           [Comparison(length: 32, equal: false), Comparison(length: 32, equal: true)])
        }
    }

    func testSafetyNumbersAreComparedInConstantTime() throws {
        let key = (0 ..< 32).map { UInt8($0) }
        func number(_ remoteKey: [UInt8]) throws -> DisplayableFingerprint {
            try Fingerprint(version: 2, iterations: 2, localIdentifier: Array("alice".utf8), localIdentityKey: key,
                            remoteIdentifier: Array("bob".utf8), remoteIdentityKey: remoteKey).displayable
        }
        let first = try number(Array(key.reversed()))
        let same = try number(Array(key.reversed()))
        let other = try number(Self.variants(of: Array(key.reversed()))[0])
        XCTAssertEqual(ComparisonRecorder.recording { XCTAssertEqual(first, same) }, [Comparison(length: 60, equal: true)])
        XCTAssertEqual(ComparisonRecorder.recording { XCTAssertNotEqual(first, other) }, [Comparison(length: 60, equal: false)])
    }

    func testQRPayloadsCompareTheIdentityKeyInFullEvenWhenTheUidDiffers() throws {
        let key = try Ed25519.PublicKey(rawRepresentation: (0 ..< 32).map { UInt8(200 &+ $0) })
        let payload = try QRPayload(uid: "alice", identityKey: key)
        XCTAssertEqual(ComparisonRecorder.recording { XCTAssertTrue(payload.matches(uid: "alice", identityKey: key)) },
                       [Comparison(length: 32, equal: true)])
        XCTAssertEqual(ComparisonRecorder.recording { XCTAssertFalse(payload.matches(uid: "mallory", identityKey: key)) },
                       [Comparison(length: 32, equal: true)])
        for otherBytes in Self.variants(of: key.rawRepresentation) {
            let other = try Ed25519.PublicKey(rawRepresentation: otherBytes)
            XCTAssertEqual(ComparisonRecorder.recording { XCTAssertFalse(payload.matches(uid: "alice", identityKey: other)) },
                           [Comparison(length: 32, equal: false)])
        }
    }
}
#endif
