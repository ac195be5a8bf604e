import SessionKit
import Verification
import XCTest

/// Marking a contact verified from a scanned QR payload: only the contact's own code, with the
/// key on record.
final class QRVerificationTests: XCTestCase {
    func testOnlyTheContactsOwnCodeWithTheKeyOnRecordVerifies() async throws {
        let trust = InMemoryTrustStore()
        let bobPhone = try ProtocolAddress(userID: "bob", deviceID: 1)
        let bobLaptop = try ProtocolAddress(userID: "bob", deviceID: 2)
        let bob = try IdentityKeyPair()
        let carol = try IdentityKeyPair()
        for device in [bobPhone, bobLaptop] { _ = await trust.observeIdentity(bob.publicKey, for: device) }

        // Carol's code, scanned on Bob's contact screen, verifies nothing.
        let carolsCode = try QRPayload(decoding: QRPayload(uid: "carol", identityKey: carol.publicKey).encoded)
        do {
            try await trust.markVerified(scanned: carolsCode, forUser: bobPhone.userID)
            XCTFail("another user's code verified bob")
        } catch {
            XCTAssertEqual(error, .payloadForAnotherUser(bobPhone.userID))
        }
        // A code with Bob's user id but another key (not the one Bob's sessions use).
        let forged = try QRPayload(uid: "bob", identityKey: carol.publicKey)
        do {
            try await trust.markVerified(scanned: forged, forUser: bobPhone.userID)
            XCTFail("a code with another key verified bob")
        } catch {
            XCTAssertEqual(error, .identityKeyMismatch(bobPhone.userID))
        }
        let statusAfterRefusals = try await trust.status(forUser: bobPhone.userID)
        XCTAssertEqual(statusAfterRefusals, .trusted)

        // Bob's own code verifies each of his devices (they share his identity key).
        let bobsCode = try QRPayload(decoding: QRPayload(uid: "bob", identityKey: bob.publicKey).encoded)
        for device in [bobPhone, bobLaptop] { try await trust.markVerified(scanned: bobsCode, forUser: device.userID) }
        let phoneStatus = try await trust.status(forUser: bobPhone.userID)
        let laptopStatus = try await trust.status(forUser: bobLaptop.userID)
        XCTAssertEqual(phoneStatus, .verified)
        XCTAssertEqual(laptopStatus, .verified)
    }

    func testUserIDsAreComparedAsBytes() async throws {
        let trust = InMemoryTrustStore()
        let key = try IdentityKeyPair().publicKey
        let composed = try ProtocolAddress(userID: "\u{E9}", deviceID: 1)          // é
        let decomposedCode = try QRPayload(uid: "e\u{301}", identityKey: key)   // e + combining accent
        XCTAssertEqual("\u{E9}", "e\u{301}", "equal as Swift strings")
        do {
            try await trust.markVerified(scanned: decomposedCode, forUser: composed.userID)
            XCTFail("different user-id bytes verified")
        } catch {
            XCTAssertEqual(error, .payloadForAnotherUser(composed.userID))
        }
        let status = try await trust.status(forUser: composed.userID)
        XCTAssertEqual(status, .unverified)
    }
}
