import Foundation
import SignalPrimitives
import XCTest
@testable import SessionKit

/// Linking a device: the identity sealed to the new device's request key, against values from
/// TestVectors/generator/device_link.py (PyPI `cryptography` and the generator's own
/// HChaCha20, no code shared with the library), and the refusals.
final class DeviceLinkTests: XCTestCase {
    private let seed = [UInt8](0x20 ..< 0x40)
    private let requestSecret = [UInt8](repeating: 0x11, count: 32)
    private let ephemeralSecret = [UInt8](repeating: 0x22, count: 32)
    // Printed by `python3 TestVectors/generator/device_link.py`.
    private let expectedRequestKey = "7b4e909bbe7ffe44c465a220037d608ee35897d31ef972f07f74892cb0f73f13"
    private let expectedSealed =
        "010faa684ed28867b97f4a6a2dee5df8ce974e76b7018e3f22a1c4cf2678570f207f0ccf770a6dd8c561afa5ccdbf3869b4b5c13fc0bfa3e53fcc6582b31eb49f778652d90b8a191495fa2a6eb4533bf85"

    func testTheSealedIdentityMatchesTheIndependentReferenceAndOpens() throws {
        let identity = try IdentityKeyPair(seed: seed)
        let request = try DeviceLinkRequest(using: FixedBytes(requestSecret))
        XCTAssertEqual(Hex.encode(request.requestKey.rawRepresentation), expectedRequestKey)
        let sealed = try DeviceLink.seal(identity, to: request.requestKey, using: FixedBytes(ephemeralSecret))
        XCTAssertEqual(Hex.encode(sealed), expectedSealed)
        XCTAssertEqual(sealed.count, DeviceLink.sealedByteCount)

        let opened = try request.open(try XCTUnwrap(Hex.decode(expectedSealed)), expectingIdentityKey: identity.publicKey)
        XCTAssertEqual(opened.publicKey, identity.publicKey)
        XCTAssertEqual(opened.privateKey.seedRepresentation, seed)
    }

    func testALinkedDeviceSharesTheUsersSafetyIdentityButHasItsOwnSessions() async throws {
        let server = FakeServer()
        let alicePhone = try await TestDevice("alice", 1, seed: 7601, server: server)
        let request = try DeviceLinkRequest()
        let sealed = try DeviceLink.seal(alicePhone.identity, to: request.requestKey)
        let identity = try request.open(sealed, expectingIdentityKey: alicePhone.identity.publicKey)
        let aliceLaptop = try await TestDevice("alice", 2, seed: 7602, server: server, identity: identity)
        let bob = try await TestDevice("bob", 1, seed: 7603, server: server)
        XCTAssertEqual(aliceLaptop.identity.publicKey, alicePhone.identity.publicKey)

        // Bob reaches both of Alice's devices, each through its own session and prekeys.
        try await bob.startSession(with: alicePhone.address, server: server)
        try await bob.startSession(with: aliceLaptop.address, server: server)
        let outcomes = try await bob.manager.encrypt(utf8("to both"), toUser: "alice")
        XCTAssertEqual(outcomes.map(\.address), [alicePhone.address, aliceLaptop.address])
        for (device, outcome) in zip([alicePhone, aliceLaptop], outcomes) {
            let message = try await device.manager.receive(try XCTUnwrap(outcome.envelope))
            XCTAssertEqual(message.plaintext, utf8("to both"))
            guard case let .message(decrypted) = message else { return XCTFail("a pairwise message") }
            XCTAssertEqual(decrypted.senderIdentityKey, bob.identity.publicKey)
        }
    }

    func testOpeningRefusesDamageAnotherRequestAnotherIdentityAndBadLayouts() throws {
        let identity = try IdentityKeyPair(seed: seed)
        let request = try DeviceLinkRequest(using: FixedBytes(requestSecret))
        let sealed = try DeviceLink.seal(identity, to: request.requestKey)
        for index in [1, 32, 33, 64, 80] {
            var damaged = sealed
            damaged[index] ^= 0x01
            XCTAssertThrowsError(try request.open(damaged)) { XCTAssertEqual($0 as? SessionError, .invalidMessage, "byte \(index)") }
        }
        var otherVersion = sealed
        otherVersion[0] = 2
        XCTAssertThrowsError(try request.open(otherVersion)) { XCTAssertEqual($0 as? SessionError, .unsupportedVersion) }
        XCTAssertThrowsError(try request.open(Array(sealed.dropLast()))) { XCTAssertEqual($0 as? SessionError, .invalidPayload) }
        XCTAssertThrowsError(try request.open(sealed + [0])) { XCTAssertEqual($0 as? SessionError, .invalidPayload) }
        XCTAssertThrowsError(try DeviceLinkRequest().open(sealed)) { XCTAssertEqual($0 as? SessionError, .invalidMessage) }
        let stranger = try IdentityKeyPair()
        XCTAssertThrowsError(try request.open(sealed, expectingIdentityKey: stranger.publicKey)) {
            XCTAssertEqual($0 as? SessionError, .untrustedIdentity)
        }
        // A low-order ephemeral key gives an all-zero shared secret.
        var lowOrder = sealed
        lowOrder.replaceSubrange(1 ..< 33, with: [UInt8](repeating: 0, count: 32))
        XCTAssertThrowsError(try request.open(lowOrder)) { XCTAssertEqual($0 as? SessionError, .invalidKey) }
        XCTAssertThrowsError(try DeviceLink.seal(identity, to: try X25519.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 32)))) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
        XCTAssertFalse("\(request)".contains(Hex.encode(requestSecret)))
    }
}

/// A random source that hands out fixed bytes (a test's drawn keys).
private struct FixedBytes: RandomSource {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in 0 ..< buffer.count { buffer[index] = bytes[index % bytes.count] }
    }
}
