import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Linking a device (format version 2): the identity sealed to the new device's request key,
/// its QR secret and its address, against values from TestVectors/generator/device_link.py (PyPI
/// `cryptography` and the generator's own HChaCha20, no code shared with the library), and the
/// refusals: a raced seal (made without the secret, for another device or user, or holding
/// another identity) is `deviceLinkMismatch`, never `untrustedIdentity`.
final class DeviceLinkTests: XCTestCase {
    private let seed = [UInt8](0x20 ..< 0x40)
    private let requestSecret = [UInt8](repeating: 0x11, count: 32)
    private let qrSecret = [UInt8](repeating: 0x33, count: 32)
    private let ephemeralSecret = [UInt8](repeating: 0x22, count: 32)
    // Printed by `python3 TestVectors/generator/device_link.py`.
    private let expectedRequestKey = "7b4e909bbe7ffe44c465a220037d608ee35897d31ef972f07f74892cb0f73f13"
    private let expectedQRPayload =
        "027b4e909bbe7ffe44c465a220037d608ee35897d31ef972f07f74892cb0f73f13"
        + "3333333333333333333333333333333333333333333333333333333333333333" + "05616c69636500000002"
    private let expectedSealed =
        "020faa684ed28867b97f4a6a2dee5df8ce974e76b7018e3f22a1c4cf2678570f20849db5d498b85dc019bfd95d4dffc6be7095e311b1d301b7a413f1cbd6b972170d3f1ef88056d57b3dd5d976189de505"
    /// The same identity sealed with the secret 0^32 (someone who saw the request key only).
    private let racedSealed =
        "020faa684ed28867b97f4a6a2dee5df8ce974e76b7018e3f22a1c4cf2678570f2003e61a3baeb2dab3ada9086a17cab2e451402f97b143eb2720828ab9983b93db22d0e125684f14fcddae316962e7474b"
    /// The same identity sealed with the right secret for alice.3 instead of alice.2.
    private let otherDeviceSealed =
        "020faa684ed28867b97f4a6a2dee5df8ce974e76b7018e3f22a1c4cf2678570f2080e7a818d18af6b44d6ef06d993c87fb177422de6a9fe39137b912a10335660c78e1ec0e874c00f73ba800719eab7773"

    private var newDevice: ProtocolAddress { address("alice", 2) }
    private var phone: ProtocolAddress { address("alice", 1) }

    /// The reference request: its key drawn first, then its secret.
    private func referenceRequest() throws -> DeviceLinkRequest {
        try DeviceLinkRequest(for: newDevice, using: ByteSequence(requestSecret + qrSecret))
    }

    func testTheQRPayloadAndTheSealMatchTheIndependentReferenceAndOpen() throws {
        let identity = try IdentityKeyPair(seed: seed)
        let request = try referenceRequest()
        XCTAssertEqual(Hex.encode(request.requestKey.rawRepresentation), expectedRequestKey)
        XCTAssertEqual(Hex.encode(request.qrPayload), expectedQRPayload)

        let code = try DeviceLinkCode(qrPayload: try XCTUnwrap(Hex.decode(expectedQRPayload)))
        XCTAssertEqual(code.requestKey, request.requestKey)
        XCTAssertEqual(code.address, newDevice)
        let sealed = try DeviceLink.seal(identity, to: code, from: phone, using: ByteSequence(ephemeralSecret))
        XCTAssertEqual(Hex.encode(sealed), expectedSealed)
        XCTAssertEqual(sealed.count, DeviceLink.sealedByteCount)

        let opened = try request.open(try XCTUnwrap(Hex.decode(expectedSealed)), expectingIdentityKey: identity.publicKey)
        XCTAssertEqual(opened.publicKey, identity.publicKey)
        XCTAssertEqual(opened.privateKey.seedRepresentation, seed)
        // The Data forms.
        let fromData = try request.open(Data(sealed), expectingIdentityKey: identity.publicKey)
        XCTAssertEqual(fromData.publicKey, identity.publicKey)
        XCTAssertEqual(try DeviceLinkCode(qrPayload: Data(request.qrPayload)).address, newDevice)
    }

    func testARacedSealIsADeviceLinkMismatch() throws {
        let identity = try IdentityKeyPair(seed: seed)
        let request = try referenceRequest()
        // The reference's raced seals: without the secret, and for another device of the user.
        for raced in [racedSealed, otherDeviceSealed] {
            XCTAssertThrowsError(try request.open(try XCTUnwrap(Hex.decode(raced)), expectingIdentityKey: identity.publicKey)) {
                XCTAssertEqual($0 as? SessionError, .deviceLinkMismatch)
            }
        }
        // Made through the library's own API from QR codes that differ from the one shown: another
        // secret (someone who saw the request key only), another device id, another user.
        let payload = request.qrPayload
        var guessedSecret = payload
        guessedSecret.replaceSubrange(33 ..< 65, with: [UInt8](repeating: 0, count: 32))
        let otherDevice = [UInt8](payload[0 ..< 65]) + address("alice", 3).encoded
        let otherUser = [UInt8](payload[0 ..< 65]) + address("mallory", 2).encoded
        for (forged, sealer) in [(guessedSecret, phone), (otherDevice, phone), (otherUser, address("mallory", 1))] {
            let sealed = try DeviceLink.seal(identity, to: try DeviceLinkCode(qrPayload: forged), from: sealer)
            XCTAssertThrowsError(try request.open(sealed, expectingIdentityKey: identity.publicKey)) {
                XCTAssertEqual($0 as? SessionError, .deviceLinkMismatch)
            }
        }
        // Someone who saw the whole QR code races their own identity: the expected key refuses it.
        let stranger = try IdentityKeyPair()
        let strangers = try DeviceLink.seal(stranger, to: try DeviceLinkCode(qrPayload: payload), from: phone)
        XCTAssertThrowsError(try request.open(strangers, expectingIdentityKey: identity.publicKey)) {
            XCTAssertEqual($0 as? SessionError, .deviceLinkMismatch)
        }
        // The right seal, opened by another request for the same device (a second QR code).
        let genuine = try DeviceLink.seal(identity, to: try DeviceLinkCode(qrPayload: payload), from: phone)
        XCTAssertThrowsError(try DeviceLinkRequest(for: newDevice).open(genuine, expectingIdentityKey: identity.publicKey)) {
            XCTAssertEqual($0 as? SessionError, .deviceLinkMismatch)
        }
        XCTAssertEqual(SessionError.deviceLinkMismatch.disposition, .drop)
        XCTAssertNil(SessionError.deviceLinkMismatch.specName)
        XCTAssertNotEqual(SessionError.deviceLinkMismatch.disposition, SessionError.untrustedIdentity.disposition)
        // The genuine one still opens.
        XCTAssertEqual(try request.open(genuine, expectingIdentityKey: identity.publicKey).publicKey, identity.publicKey)
    }

    func testTheExistingDeviceSealsOnlyForAnotherDeviceOfItsOwnUser() throws {
        let identity = try IdentityKeyPair(seed: seed)
        let code = try DeviceLinkCode(qrPayload: try referenceRequest().qrPayload)
        XCTAssertThrowsError(try DeviceLink.seal(identity, to: code, from: address("bob", 1))) {
            XCTAssertEqual($0 as? SessionError, .deviceLinkMismatch)
        }
        XCTAssertThrowsError(try DeviceLink.seal(identity, to: code, from: newDevice)) {
            XCTAssertEqual($0 as? SessionError, .deviceLinkMismatch, "the code names the sealing device itself")
        }
        // User ids are compared as bytes: "é" precomposed is not "e\u{301}".
        let precomposed = try DeviceLinkCode(qrPayload: [UInt8](try referenceRequest().qrPayload[0 ..< 65]) + address("\u{e9}", 2).encoded)
        XCTAssertThrowsError(try DeviceLink.seal(identity, to: precomposed, from: address("e\u{301}", 1))) {
            XCTAssertEqual($0 as? SessionError, .deviceLinkMismatch)
        }
    }

    func testALinkedDeviceSharesTheUsersSafetyIdentityButHasItsOwnSessions() async throws {
        let server = FakeServer()
        let alicePhone = try await TestDevice("alice", 1, seed: 7601, server: server)
        let request = try DeviceLinkRequest(for: address("alice", 2))
        let sealed = try DeviceLink.seal(alicePhone.identity, to: try DeviceLinkCode(qrPayload: request.qrPayload), from: alicePhone.address)
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

    func testOpeningRefusesDamageTruncationOtherVersionsAndBadLayouts() throws {
        let identity = try IdentityKeyPair(seed: seed)
        let request = try referenceRequest()
        let sealed = try DeviceLink.seal(identity, to: try DeviceLinkCode(qrPayload: request.qrPayload), from: phone)
        for index in [1, 32, 33, 64, 80] {
            var damaged = sealed
            damaged[index] ^= 0x01
            XCTAssertThrowsError(try request.open(damaged, expectingIdentityKey: identity.publicKey)) {
                XCTAssertEqual($0 as? SessionError, .deviceLinkMismatch, "byte \(index)")
            }
        }
        for version: UInt8 in [0, 1, 3, 0xFF] {
            var otherVersion = sealed
            otherVersion[0] = version
            XCTAssertThrowsError(try request.open(otherVersion, expectingIdentityKey: identity.publicKey)) {
                XCTAssertEqual($0 as? SessionError, .unsupportedVersion)
            }
        }
        for truncated in [[], Array(sealed.prefix(1)), Array(sealed.prefix(33)), Array(sealed.dropLast()), sealed + [0]] {
            XCTAssertThrowsError(try request.open(truncated, expectingIdentityKey: identity.publicKey)) {
                XCTAssertEqual($0 as? SessionError, .invalidPayload, "\(truncated.count) bytes")
            }
        }
        // A low-order ephemeral key gives an all-zero shared secret.
        var lowOrder = sealed
        lowOrder.replaceSubrange(1 ..< 33, with: [UInt8](repeating: 0, count: 32))
        XCTAssertThrowsError(try request.open(lowOrder, expectingIdentityKey: identity.publicKey)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
        XCTAssertFalse("\(request)".contains(Hex.encode(requestSecret)))
        XCTAssertFalse("\(request)".contains(Hex.encode(qrSecret)))
        let code = try DeviceLinkCode(qrPayload: request.qrPayload)
        XCTAssertFalse("\(code)".contains(Hex.encode(qrSecret)))
        XCTAssertFalse(String(reflecting: code).contains("51, 51, 51"), "no secret in the reflected form")
    }

    func testTheQRPayloadDecodesStrictly() throws {
        let payload = try referenceRequest().qrPayload
        XCTAssertEqual(payload.count, 1 + 32 + 32 + 1 + 5 + 4)
        func assertRefused(_ bytes: [UInt8], _ expected: SessionError, _ why: String) {
            XCTAssertThrowsError(try DeviceLinkCode(qrPayload: bytes), why) { XCTAssertEqual($0 as? SessionError, expected, why) }
        }
        assertRefused([], .invalidPayload, "empty")
        for version: UInt8 in [0, 1, 3, 0x26] {
            assertRefused([version] + payload.dropFirst(), .unsupportedVersion, "version \(version)")
        }
        for length in [1, 33, 65, 66, payload.count - 1] {
            assertRefused(Array(payload.prefix(length)), .invalidPayload, "\(length) bytes")
        }
        assertRefused(payload + [0], .invalidPayload, "a trailing byte")
        var emptyUser = Array(payload.prefix(65))
        emptyUser += [0, 0, 0, 0, 2]
        assertRefused(emptyUser, .invalidPayload, "an empty user id")
        var notUTF8 = payload
        notUTF8[66] = 0xFF
        assertRefused(notUTF8, .invalidPayload, "a user id that is not UTF-8")
        var nonCanonical = payload
        nonCanonical[32] |= 0x80
        assertRefused(nonCanonical, .invalidKey, "a request key with bit 255 set")
        // The longest user id and the largest device id.
        let long = try DeviceLinkCode(qrPayload: Array(payload.prefix(65)) + address(String(repeating: "u", count: 255), UInt32.max).encoded)
        XCTAssertEqual(long.address.deviceID, UInt32.max)
    }
}

/// A random source that hands out the given bytes in order, across calls (a test's drawn keys).
private final class ByteSequence: RandomSource, @unchecked Sendable {
    private let lock = NSLock()
    private let bytes: [UInt8]
    private var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        lock.lock()
        defer { lock.unlock() }
        for index in 0 ..< buffer.count {
            buffer[index] = bytes[offset % bytes.count]
            offset += 1
        }
    }
}
