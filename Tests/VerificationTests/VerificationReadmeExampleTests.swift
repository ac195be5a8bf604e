import XCTest
import SessionKit
import Verification

/// The README's Verification example, compiled and run.
final class VerificationReadmeExampleTests: XCTestCase {
    func testReadmeExampleComparesSafetyNumbersAndScansAQRCode() async throws {
        let aliceIdentity = try IdentityKeyPair()
        let bobIdentity = try IdentityKeyPair()

        // --- README example starts here ---
        // Both users compute the same 60-digit safety number from their own point of view.
        let generator = try FingerprintGenerator() // 5200 iterations, as libsignal
        let mine = generator.fingerprint(version: 2,
                                         localUserID: "alice", localIdentityKey: aliceIdentity.publicKey,
                                         remoteUserID: "bob", remoteIdentityKey: bobIdentity.publicKey)
        let theirs = generator.fingerprint(version: 2,
                                           localUserID: "bob", localIdentityKey: bobIdentity.publicKey,
                                           remoteUserID: "alice", remoteIdentityKey: aliceIdentity.publicKey)
        print(mine.displayable.formatted) // 12 groups of 5 digits, the same on both phones

        // Scanning: compare the other phone's scannable form with ours (constant time).
        switch try mine.scannable.compare(serialized: theirs.scannable.serialized) {
        case .match: break                       // mark the contact verified
        case .mismatch: break                    // a different key: warn the user
        case .versionMismatch: break             // ask both users to update their app
        }

        // QR payload v1: 0x01 || u8(len(uid)) || uid || identity key.
        let payload = try QRPayload(uid: "bob", identityKey: bobIdentity.publicKey).encoded
        let scanned = try QRPayload(decoding: payload)

        // Trust on first use, then verified once the numbers matched.
        let trust = InMemoryTrustStore()
        let bob = try ProtocolAddress(userID: "bob", deviceID: 1)
        _ = await trust.observeIdentity(bobIdentity.publicKey, for: bob) // .firstUse
        try await trust.markVerified(scanned.identityKey, for: bob)
        // --- README example ends here ---

        XCTAssertEqual(mine.displayable.digits, theirs.displayable.digits)
        XCTAssertEqual(mine.displayable.groups.count, 12)
        XCTAssertEqual(try mine.scannable.compare(serialized: theirs.scannable.serialized), .match)
        XCTAssertTrue(scanned.matches(uid: "bob", identityKey: bobIdentity.publicKey))
        let status = await trust.status(for: bob)
        XCTAssertEqual(status, .verified)
    }
}
