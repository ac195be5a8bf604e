import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Registration ids (SPEC §9): the range and the draw, flag bit 2 of the bundle and of the
/// prekey prefix (part of P, so bound into SK), the upload and the server's published keys,
/// what sessions record, and the manager's API.
final class RegistrationIDTests: XCTestCase {
    /// A source that repeats fixed bytes.
    private struct FixedSource: RandomSource {
        let bytes: [UInt8]
        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            for index in 0 ..< buffer.count { buffer[index] = bytes[index % bytes.count] }
        }
    }

    private func id(_ value: UInt32) throws -> RegistrationID { try XCTUnwrap(RegistrationID(rawValue: value)) }

    // MARK: The value

    func testTheRangeIsOneToTwoToTheThirtyOneMinusOne() {
        XCTAssertNil(RegistrationID(rawValue: 0))
        XCTAssertEqual(RegistrationID(rawValue: 1)?.rawValue, 1)
        XCTAssertEqual(RegistrationID(rawValue: 0x7FFF_FFFF)?.rawValue, 0x7FFF_FFFF)
        XCTAssertNil(RegistrationID(rawValue: 0x8000_0000))
        XCTAssertNil(RegistrationID(rawValue: .max))
    }

    /// The draw is a big-endian u32 reduced modulo 2^31 − 1, plus 1 (worked by hand: 0 ↦ 1;
    /// 0x7FFFFFFE ↦ 0x7FFFFFFF; 0x7FFFFFFF ↦ 1; 0xFFFFFFFF = 2 (2^31 − 1) + 1 ↦ 2).
    func testTheDrawStaysInRange() throws {
        XCTAssertEqual(RegistrationID.random(using: FixedSource(bytes: [0, 0, 0, 0])).rawValue, 1)
        XCTAssertEqual(RegistrationID.random(using: FixedSource(bytes: [0x7F, 0xFF, 0xFF, 0xFE])).rawValue, 0x7FFF_FFFF)
        XCTAssertEqual(RegistrationID.random(using: FixedSource(bytes: [0x7F, 0xFF, 0xFF, 0xFF])).rawValue, 1)
        XCTAssertEqual(RegistrationID.random(using: FixedSource(bytes: [0xFF, 0xFF, 0xFF, 0xFF])).rawValue, 2)
        XCTAssertEqual(RegistrationID.random(using: FixedSource(bytes: [0x12, 0x34, 0x56, 0x78])).rawValue, 0x1234_5679)
        let drawn = Set((0 ..< 64).map { _ in RegistrationID.random().rawValue })
        XCTAssertGreaterThan(drawn.count, 60, "the system draws differ")
        XCTAssertTrue(drawn.allSatisfy { (1 ... 0x7FFF_FFFF).contains($0) })
    }

    // MARK: Bundle (flag bit 2)

    func testABundleCarriesItsRegistrationIDInFlagBitTwo() throws {
        let conversation = try Conversation(seed: 81, bobRegistrationID: try id(0x0102_0304))
        let bundle = conversation.bundle
        let bytes = bundle.serialized
        let plain = try PreKeyBundle(
            identityKey: bundle.identityKey, signedPreKeyID: bundle.signedPreKeyID, signedPreKey: bundle.signedPreKey,
            signedPreKeySignature: bundle.signedPreKeySignature, oneTimePreKey: bundle.oneTimePreKey).serialized
        XCTAssertEqual(bytes.count, PreKeyBundle.baseByteCount + PreKeyBundle.oneTimeKeyByteCount + 4)
        XCTAssertEqual(bytes[PreKeyBundle.baseByteCount - 1], 0x05, "flags: a one-time prekey and a registration id")
        XCTAssertEqual(Array(bytes.suffix(4)), [1, 2, 3, 4])
        XCTAssertEqual(plain, replacing(Array(bytes.dropLast(4)), at: PreKeyBundle.baseByteCount - 1, with: [0x01]),
                       "without the id the bundle is the bytes before it, flag bit 2 clear")
        let decoded = try PreKeyBundle(serialized: bytes)
        XCTAssertEqual(decoded, bundle)
        XCTAssertEqual(decoded.registrationID?.rawValue, 0x0102_0304)
        XCTAssertNoThrow(try X3DH.checkBundle(decoded), "the id is not signed: the signatures still verify")
        XCTAssertNil(try PreKeyBundle(serialized: plain).registrationID)
    }

    func testABundleWithABadRegistrationIDOrFlagIsInvalidPayload() throws {
        let bytes = try Conversation(seed: 82, bobRegistrationID: try id(9)).bundle.serialized
        let idOffset = bytes.count - 4
        for bad: UInt32 in [0, 0x8000_0000, 0xFFFF_FFFF] {
            XCTAssertThrowsError(try PreKeyBundle(serialized: replacing(bytes, at: idOffset, with: u32(bad)))) {
                XCTAssertEqual($0 as? SessionError, .invalidPayload, "registration id \(bad)")
            }
        }
        XCTAssertEqual(try PreKeyBundle(serialized: replacing(bytes, at: idOffset, with: u32(0x7FFF_FFFF))).registrationID?.rawValue,
                       0x7FFF_FFFF)
        let flags = PreKeyBundle.baseByteCount - 1
        for (altered, why) in [
            (Array(bytes.dropLast(4)), "flag bit 2 without the id"),
            (replacing(bytes, at: flags, with: [0x01]), "the id without flag bit 2"),
            (replacing(bytes, at: flags, with: [0x0D]), "flag bit 3"),
            (bytes + [0], "a trailing byte"),
        ] {
            XCTAssertThrowsError(try PreKeyBundle(serialized: altered), why) { XCTAssertEqual($0 as? SessionError, .invalidPayload, why) }
        }
    }

    // MARK: Prefix (flag bit 2, part of P)

    func testThePrefixCarriesTheInitiatorsIDAndBindsItIntoTheSharedSecret() throws {
        var conversation = try Conversation(seed: 83, aliceRegistrationID: try id(0x0A0B_0C0D), bobRegistrationID: try id(77))
        let alice = try XCTUnwrap(conversation.alice)
        XCTAssertEqual(alice.remoteRegistrationID?.rawValue, 77, "the initiator records the bundle's id")
        let prefix = try XCTUnwrap(alice.pendingPreKeyPrefix)
        XCTAssertEqual(prefix.flags, 0x05)
        XCTAssertEqual(prefix.bytes.count, 69 + 4 + 4)
        XCTAssertEqual(Array(prefix.bytes.suffix(4)), [0x0A, 0x0B, 0x0C, 0x0D], "P ends with the id")
        let message = try conversation.aliceSends(plaintext(0))
        XCTAssertEqual(Array(message[1 ... prefix.bytes.count]), prefix.bytes)
        XCTAssertEqual(try PreKeyMessage(serialized: message).prefix, prefix)
        XCTAssertEqual(try conversation.bobReceives(message), plaintext(0))
        XCTAssertEqual(conversation.bob?.remoteRegistrationID?.rawValue, 0x0A0B_0C0D, "the responder records the prefix's id")

        // The same EK_A and keys without the id (or with another) give another SK.
        let ephemeral = try X25519.PrivateKey(using: SeededRandomSource(seed: 9))
        func secret(_ registrationID: RegistrationID?) throws -> [UInt8] {
            let prefix = PreKeyMessage.Prefix(
                identityKey: conversation.aliceIdentity.publicKey, baseKey: ephemeral.publicKey,
                signedPreKeyID: conversation.signedPreKey.id, oneTimePreKeyID: nil, kem: nil, registrationID: registrationID)
            return try X3DH.initiate(
                identity: conversation.aliceIdentity, localAddress: conversation.aliceAddress, remoteAddress: conversation.bobAddress,
                bundle: PreKeyBundle(identityKey: conversation.bobIdentity.publicKey, signedPreKey: conversation.signedPreKey,
                                     oneTimePreKey: nil),
                ephemeralKey: ephemeral, prefix: prefix, kemSharedSecret: nil
            ).sharedSecret.storage.bytes
        }
        let secrets = try [nil, id(1), id(2)].map(secret)
        XCTAssertEqual(Set(secrets).count, 3)
    }

    /// A prefix whose registration id was changed (in range) no longer matches P: X3DH gives
    /// another SK and the message does not authenticate; and the same EK_A with another id
    /// is not the prefix that created the session (SPEC §4).
    func testAChangedIDInThePrefixFails() throws {
        var conversation = try Conversation(seed: 84, aliceRegistrationID: try id(5))
        let first = try conversation.aliceSends(plaintext(0))
        let idOffset = 1 + 69 + 4
        XCTAssertEqual(Array(first[idOffset ..< idOffset + 4]), u32(5))
        let forged = replacing(first, at: idOffset, with: u32(6))
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(forged) }
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(0))
        let second = try conversation.aliceSends(plaintext(1))
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(replacing(second, at: idOffset, with: u32(6))) }
        XCTAssertEqual(try conversation.bobReceives(second), plaintext(1))
    }

    /// SPEC §9: an id of 0 or above 2^31 − 1 is `invalidMessage`, checked with the lengths and
    /// flags, before the inner type byte; flag bits 3–7 stay reserved.
    func testAPrefixWithABadIDIsInvalidMessageBeforeTheInnerTypeByte() throws {
        var conversation = try Conversation(seed: 85, aliceRegistrationID: try id(5))
        let message = try conversation.aliceSends(plaintext(0))
        let idOffset = 1 + 69 + 4, innerType = idOffset + 4
        XCTAssertEqual(message[innerType], WireType.ratchetMessage)
        func decodeError(_ bytes: [UInt8]) -> SessionError? {
            do { _ = try PreKeyMessage(serialized: bytes) } catch { return error }
            return nil
        }
        for bad: UInt32 in [0, 0x8000_0000, 0xFFFF_FFFF] {
            XCTAssertEqual(decodeError(replacing(message, at: idOffset, with: u32(bad))), .invalidMessage, "id \(bad)")
            XCTAssertEqual(decodeError(replacing(replacing(message, at: idOffset, with: u32(bad)), at: innerType, with: [0x31])),
                           .invalidMessage, "id \(bad) before the inner type byte")
        }
        XCTAssertEqual(decodeError(replacing(message, at: innerType, with: [0x31])), .unsupportedVersion, "a valid id, then the type")
        XCTAssertEqual(decodeError(replacing(message, at: 69, with: [0x0D])), .invalidMessage, "flag bit 3")
        assertFails(.invalidMessage, &conversation) { _ = try $0.bobReceives(replacing(message, at: idOffset, with: u32(0))) }
    }

    // MARK: Upload and published prekeys

    func testTheUploadCarriesTheIDAndThePublishedKeysPutItInEveryBundle() throws {
        let identity = try IdentityKeyPair(using: SeededRandomSource(seed: 86))
        let keys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 0), random: SeededRandomSource(seed: 87))
        let plain = keys.fullUpload(identityKey: identity.publicKey)
        let upload = plain.with(registrationID: try id(0x00C0_FFEE))
        let bytes = upload.serialized
        XCTAssertEqual(bytes[4 + 1 + 32], 0x05, "flags: a signed prekey and a registration id")
        XCTAssertEqual(bytes.count, plain.serialized.count + 4)
        XCTAssertEqual(try PreKeyUpload(serialized: bytes), upload)
        XCTAssertNil(try PreKeyUpload(serialized: plain.serialized).registrationID)
        // The id follows the signed prekey (4 + 1 + 32 + 1 + 4 + 32 + 1 + 64 bytes in).
        let idOffset = 4 + 1 + 32 + 1 + 4 + 32 + 1 + 64
        XCTAssertEqual(Array(bytes[idOffset ..< idOffset + 4]), u32(0x00C0_FFEE))
        XCTAssertThrowsError(try PreKeyUpload(serialized: replacing(bytes, at: idOffset, with: u32(0)))) {
            XCTAssertEqual($0 as? SessionError, .invalidPayload)
        }

        var published = try PublishedPreKeys(registering: upload)
        XCTAssertEqual(published.registrationID?.rawValue, 0x00C0_FFEE)
        XCTAssertEqual(published.takeBundle().registrationID?.rawValue, 0x00C0_FFEE)
        XCTAssertEqual(try PublishedPreKeys(serialized: published.serialized).registrationID?.rawValue, 0x00C0_FFEE, "kept when stored")
        XCTAssertNoThrow(try published.merge(plain), "an upload without an id keeps the registered one")
        XCTAssertEqual(published.takeBundle().registrationID?.rawValue, 0x00C0_FFEE)
        let before = published
        let expected = PublishedPreKeysError.otherRegistration(held: try id(0x00C0_FFEE), uploaded: try id(1))
        XCTAssertThrowsError(try published.merge(upload.with(registrationID: try id(1)))) {
            XCTAssertEqual($0 as? PublishedPreKeysError, expected)
        }
        XCTAssertEqual(published, before, "a refused upload changes nothing")

        var unregistered = try PublishedPreKeys(registering: plain)
        XCTAssertNil(unregistered.takeBundle().registrationID, "no id published: none in the bundle")
        try unregistered.merge(upload)
        XCTAssertEqual(unregistered.registrationID?.rawValue, 0x00C0_FFEE, "the first id uploaded is registered")
    }

    // MARK: Stores and the manager

    func testTheInMemoryStoreKeepsTheIDItIsGivenOrDrawsOne() async throws {
        let identity = try IdentityKeyPair(using: SeededRandomSource(seed: 88))
        let given = InMemoryProtocolStore(identity: identity, registrationID: try id(42))
        let givenID = await given.localRegistrationID()
        XCTAssertEqual(givenID.rawValue, 42)
        let drawn = InMemoryProtocolStore(identity: identity)
        let first = await drawn.localRegistrationID()
        let second = await drawn.localRegistrationID()
        XCTAssertEqual(first, second, "stable")
        let other = InMemoryProtocolStore(identity: identity)
        let otherID = await other.localRegistrationID()
        XCTAssertNotEqual(first, otherID, "a second store for the same identity draws its own (2^-31 to collide)")
    }

    func testTheManagerPublishesItsIDAndRecordsThePeersInEachDirection() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 89, server: server)
        let bob = try await TestDevice("bob", 1, seed: 90, server: server)
        let aliceID = try await alice.manager.localRegistrationID()
        let bobID = try await bob.manager.localRegistrationID()
        let storedBobID = await bob.base.localRegistrationID()
        XCTAssertEqual(bobID, storedBobID)
        let published = await server.registrationID(for: bob.address)
        XCTAssertEqual(published, bobID, "the first upload carries the id")
        let later = try await bob.manager.maintainPreKeys()
        XCTAssertEqual(later.registrationID, bobID, "every upload carries it")

        let unknown = try await alice.manager.registrationID(of: bob.address)
        XCTAssertNil(unknown, "no session yet")
        try await alice.startSession(with: bob.address, server: server)
        let atAlice = try await alice.manager.registrationID(of: bob.address)
        XCTAssertEqual(atAlice, bobID, "from the bundle")
        let message = try await alice.manager.encrypt(utf8("hi"), to: bob.address)
        let prefix = try PreKeyMessage(serialized: message).prefix
        XCTAssertEqual(prefix.registrationID, aliceID, "the prefix carries the sender's id")
        _ = try await bob.manager.decrypt(message, from: alice.address)
        let atBob = try await bob.manager.registrationID(of: alice.address)
        XCTAssertEqual(atBob, aliceID, "from the prefix")
        let reply = try await bob.manager.encrypt(utf8("hello"), to: alice.address)
        _ = try await alice.manager.decrypt(reply, from: bob.address)
        let stillAtAlice = try await alice.manager.registrationID(of: bob.address)
        XCTAssertEqual(stillAtAlice, bobID, "kept after the prefix is no longer sent")
    }

    /// A peer that sets no flag bit 2 (a bundle without an id, a prefix without one) still gets
    /// sessions; its id is unknown.
    func testBundlesAndPrefixesWithoutTheFlagKeepWorking() async throws {
        var conversation = try Conversation(seed: 91)
        XCTAssertNil(conversation.alice?.remoteRegistrationID)
        XCTAssertEqual(conversation.alice?.pendingPreKeyPrefix?.flags, 0x01)
        XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(0))), plaintext(0))
        XCTAssertNil(conversation.bob?.remoteRegistrationID)
        XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(1))), plaintext(1))
    }
}
