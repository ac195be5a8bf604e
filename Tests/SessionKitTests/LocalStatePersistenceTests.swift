import SignalPrimitives
import XCTest
@testable import SessionKit

/// Persistence of `LocalPreKeys` (kind .preKeys) and `IdentityKeyPair` (kind .identity):
/// round trips, and strict loading of every corrupted blob.
final class LocalStatePersistenceTests: XCTestCase {
    private let start = Timestamp(secondsSince1970: 1_700_000_000)

    /// Prekeys with two retired signed prekeys, consumed one-time prekeys and a wrapped counter.
    private func populatedPreKeys() throws -> (LocalPreKeys, IdentityKeyPair) {
        let random = SeededRandomSource(seed: 60)
        let identity = try IdentityKeyPair(using: random)
        var keys = try LocalPreKeys(identity: identity, now: start, random: random)
        try keys.rotateSignedPreKey(identity: identity, now: start.adding(seconds: Days.seconds(7)), random: random)
        try keys.rotateSignedPreKey(identity: identity, now: start.adding(seconds: Days.seconds(14)), random: random)
        for id: UInt32 in [3, 10, 11, 50] { keys.removeOneTimePreKey(id: id) }
        _ = try keys.generateOneTimePreKeys(count: 5, random: random)
        return (keys, identity)
    }

    private func sealed(_ body: [UInt8]) -> [UInt8] { body + SHA256.hash(body).prefix(16) }

    private func header(_ kind: StateKind, version: UInt8 = 1) -> [UInt8] { Array("SKST".utf8) + [kind.rawValue, version] }

    private func assertPreKeysFail(_ blob: [UInt8], _ expected: SessionError, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try LocalPreKeys(serialized: blob), message, file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, message, file: file, line: line)
        }
    }

    // MARK: Prekeys

    func testPreKeysRoundTripToTheSameBytesAndTheSameKeys() throws {
        let (keys, identity) = try populatedPreKeys()
        let blob = keys.serialized()
        let loaded = try LocalPreKeys(serialized: blob)
        XCTAssertEqual(loaded.serialized(), blob)
        XCTAssertEqual(loaded.currentSignedPreKey.key.id, 3)
        XCTAssertEqual(loaded.previousSignedPreKeys.map(\.key.id), [2, 1])
        XCTAssertEqual(loaded.previousSignedPreKeys.map(\.retiredAt), [start.adding(seconds: Days.seconds(14)), start.adding(seconds: Days.seconds(7))])
        XCTAssertEqual(loaded.oneTimePreKeys.map(\.id), keys.oneTimePreKeys.map(\.id))
        XCTAssertEqual(loaded.oneTimePreKeys.map(\.publicKey), keys.oneTimePreKeys.map(\.publicKey))
        XCTAssertEqual(loaded.nextOneTimePreKeyID, 56)
        XCTAssertEqual(loaded.nextSignedPreKeyID, 4)
        XCTAssertTrue(loaded.currentSignedPreKey.key.hasValidSignature(from: identity.publicKey))
        for id: UInt32 in 1 ... 3 {
            XCTAssertEqual(loaded.signedPreKey(id: id)?.publicKey, keys.signedPreKey(id: id)?.publicKey)
            XCTAssertEqual(loaded.signedPreKey(id: id)?.signature, keys.signedPreKey(id: id)?.signature)
        }
        XCTAssertEqual(loaded.fullUpload(identityKey: identity.publicKey), keys.fullUpload(identityKey: identity.publicKey))
    }

    func testLoadedPreKeysStillAcceptAPrekeyMessage() throws {
        let (keys, bob) = try populatedPreKeys()
        let random = SeededRandomSource(seed: 61)
        let alice = try IdentityKeyPair(using: random)
        var session = try SessionState(
            initiatingWith: try XCTUnwrap(keys.bundle(identityKey: bob.publicKey, oneTimePreKeyID: 20)), identity: alice, random: random)
        let message = try session.encrypt(utf8("after reload"))
        var record = SessionRecord()
        let result = try record.decrypt(message, identity: bob, preKeys: LocalPreKeys(serialized: keys.serialized()), random: random)
        XCTAssertEqual(result.plaintext, utf8("after reload"))
        XCTAssertEqual(result.consumedOneTimePreKeyID, 20)
    }

    func testEveryTruncationOfPreKeysIsInvalidPayload() throws {
        let blob = try populatedPreKeys().0.serialized()
        for length in 0 ..< blob.count { assertPreKeysFail(Array(blob.prefix(length)), .invalidPayload, "length \(length)") }
    }

    func testEveryAlteredByteOfPreKeysIsInvalidPayload() throws {
        let blob = try populatedPreKeys().0.serialized()
        for index in blob.indices {
            var altered = blob
            altered[index] ^= 0x40
            assertPreKeysFail(altered, .invalidPayload, "byte \(index)")
        }
    }

    func testPreKeysWithAnUnknownVersionOrAnotherKindAreRefused() throws {
        let blob = try populatedPreKeys().0.serialized()
        let body = Array(blob.dropLast(16))
        assertPreKeysFail(sealed(header(.preKeys, version: 2) + body.dropFirst(6)), .unsupportedVersion)
        assertPreKeysFail(sealed(header(.preKeys, version: 0) + body.dropFirst(6)), .unsupportedVersion)
        assertPreKeysFail(sealed(header(.session) + body.dropFirst(6)), .invalidPayload)
        assertPreKeysFail(sealed(body + [0]), .invalidPayload, "trailing byte")
    }

    func testInconsistentPreKeysAreInvalidPayload() throws {
        // A hand-built body: next ids, current signed prekey, previous ones, one-time prekeys.
        let random = SeededRandomSource(seed: 62)
        let identity = try IdentityKeyPair(using: random)
        let signed = try SignedPreKey(id: 1, signedBy: identity, using: random)
        let oneTime = try OneTimePreKey(id: 1, using: random)
        func signedBytes(_ id: UInt32, retired: Bool) -> [UInt8] {
            var out: [UInt8] = []
            out.appendBigEndian(id)
            out += signed.privateKey.rawBytesForTest + signed.signature + [0, 0, 0, 0, 0x65, 0x53, 0xf1, 0x00]
            if retired { out += [0, 0, 0, 0, 0x66, 0, 0, 0] }
            return out
        }
        func oneTimeBytes(_ id: UInt32) -> [UInt8] {
            var out: [UInt8] = []
            out.appendBigEndian(id)
            return out + oneTime.privateKey.rawBytesForTest
        }
        func u32(_ value: UInt32) -> [UInt8] {
            var out: [UInt8] = []
            out.appendBigEndian(value)
            return out
        }
        func blob(next: (UInt32, UInt32) = (2, 2), current: UInt32 = 1, previous: [UInt32] = [], oneTime: [UInt32] = [1], oneTimeCount: UInt32? = nil) -> [UInt8] {
            var body = header(.preKeys) + u32(next.0) + u32(next.1) + signedBytes(current, retired: false)
            body += u32(UInt32(previous.count)) + previous.flatMap { signedBytes($0, retired: true) }
            body += u32(oneTimeCount ?? UInt32(oneTime.count)) + oneTime.flatMap(oneTimeBytes)
            return sealed(body)
        }
        let valid = try LocalPreKeys(serialized: blob(previous: [2], oneTime: [1, 2]))
        XCTAssertEqual(valid.previousSignedPreKeys.map(\.key.id), [2])
        XCTAssertEqual(valid.oneTimePreKeys.map(\.id), [1, 2])

        assertPreKeysFail(blob(next: (0, 2)), .invalidPayload, "next signed id 0")
        assertPreKeysFail(blob(next: (2, 0)), .invalidPayload, "next one-time id 0")
        assertPreKeysFail(blob(current: 0), .invalidPayload, "signed id 0")
        assertPreKeysFail(blob(previous: [0]), .invalidPayload, "previous signed id 0")
        assertPreKeysFail(blob(previous: [1]), .invalidPayload, "previous id equal to the current one")
        assertPreKeysFail(blob(previous: [2, 2]), .invalidPayload, "repeated previous id")
        assertPreKeysFail(blob(oneTime: [0]), .invalidPayload, "one-time id 0")
        assertPreKeysFail(blob(oneTime: [4, 4]), .invalidPayload, "repeated one-time id")
        assertPreKeysFail(blob(oneTime: [], oneTimeCount: UInt32(LocalPreKeys.maximumOneTimePreKeyCount + 1)), .invalidPayload, "too many")
        assertPreKeysFail(blob(oneTime: [1], oneTimeCount: 2), .invalidPayload, "count beyond the keys present")
    }

    // MARK: Identity

    func testIdentityRoundTripsToTheSameKeyPair() throws {
        let identity = try IdentityKeyPair(using: SeededRandomSource(seed: 63))
        let blob = identity.serialized()
        XCTAssertEqual(blob.count, 6 + 32 + 16)
        let loaded = try IdentityKeyPair(serialized: blob)
        XCTAssertEqual(loaded.publicKey, identity.publicKey)
        XCTAssertEqual(loaded.privateKey.seedRepresentation, identity.privateKey.seedRepresentation)
        XCTAssertEqual(loaded.serialized(), blob)
        let message = utf8("signed by the loaded identity")
        XCTAssertTrue(identity.publicKey.isValidSignature(loaded.privateKey.signature(for: message), for: message))
    }

    func testCorruptedIdentityBlobsAreRefused() throws {
        let blob = try IdentityKeyPair(using: SeededRandomSource(seed: 64)).serialized()
        func assertFails(_ candidate: [UInt8], _ expected: SessionError, _ message: String) {
            XCTAssertThrowsError(try IdentityKeyPair(serialized: candidate), message) {
                XCTAssertEqual($0 as? SessionError, expected, message)
            }
        }
        for length in 0 ..< blob.count { assertFails(Array(blob.prefix(length)), .invalidPayload, "length \(length)") }
        for index in blob.indices {
            var altered = blob
            altered[index] ^= 0x01
            assertFails(altered, .invalidPayload, "byte \(index)")
        }
        let body = Array(blob.dropLast(16))
        assertFails(sealed(body + [0]), .invalidPayload, "trailing byte")
        assertFails(sealed(Array(body.dropLast())), .invalidPayload, "short seed")
        assertFails(sealed(header(.identity, version: 9) + body.dropFirst(6)), .unsupportedVersion, "version")
        assertFails(sealed(header(.preKeys) + body.dropFirst(6)), .invalidPayload, "kind")
    }
}
