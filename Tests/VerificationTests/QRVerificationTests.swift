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
            try await trust.markVerified(scanned: carolsCode, for: bobPhone)
            XCTFail("another user's code verified bob")
        } catch {
            XCTAssertEqual(error, .payloadForAnotherUser(bobPhone))
        }
        // A code with Bob's user id but another key (not the one Bob's sessions use).
        let forged = try QRPayload(uid: "bob", identityKey: carol.publicKey)
        do {
            try await trust.markVerified(scanned: forged, for: bobPhone)
            XCTFail("a code with another key verified bob")
        } catch {
            XCTAssertEqual(error, .identityKeyMismatch(bobPhone))
        }
        let statusAfterRefusals = await trust.status(for: bobPhone)
        XCTAssertEqual(statusAfterRefusals, .trusted)

        // Bob's own code verifies each of his devices (they share his identity key).
        let bobsCode = try QRPayload(decoding: QRPayload(uid: "bob", identityKey: bob.publicKey).encoded)
        for device in [bobPhone, bobLaptop] { try await trust.markVerified(scanned: bobsCode, for: device) }
        let phoneStatus = await trust.status(for: bobPhone)
        let laptopStatus = await trust.status(for: bobLaptop)
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
            try await trust.markVerified(scanned: decomposedCode, for: composed)
            XCTFail("different user-id bytes verified")
        } catch {
            XCTAssertEqual(error, .payloadForAnotherUser(composed))
        }
        let status = await trust.status(for: composed)
        XCTAssertEqual(status, .unverified)
    }
}
