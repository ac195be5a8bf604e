import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

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
        let (aliceAddress, bobAddress) = (address("alice", 1), address("bob", 1))
        var session = try SessionState(
            initiatingWith: try XCTUnwrap(keys.bundle(identityKey: bob.publicKey, oneTimePreKeyID: 20)), identity: alice,
            localAddress: aliceAddress, remoteAddress: bobAddress, kem: nil, random: random)
        let message = try session.encrypt(utf8("after reload"))
        var record = SessionRecord()
        var loaded = try LocalPreKeys(serialized: keys.serialized())
        let result = try record.decrypt(message, identity: bob, localAddress: bobAddress, remoteAddress: aliceAddress,
                                        preKeys: loaded.lookup(), random: random)
        XCTAssertEqual(result.plaintext, utf8("after reload"))
        XCTAssertEqual(result.consumption?.oneTimePreKeyID, 20)
        // The count of replay records survives a reload too (the records are the store's).
        try loaded.apply(try XCTUnwrap(result.consumption))
        let reloaded = try LocalPreKeys(serialized: loaded.serialized())
        XCTAssertEqual(reloaded.recordedBaseKeyCount(signedPreKeyID: 3), 1)
        XCTAssertEqual(reloaded.signedPreKeyEntries.map(\.recordedBaseKeyCount), [1, 0, 0])
        XCTAssertNil(reloaded.oneTimePreKey(id: 20))
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
        XCTAssertEqual(blob[5], 3, "prekeys are written as version 3")
        let body = Array(blob.dropLast(16))
        // Version 2 (records inside) loads only through `upgrading(serialized:)`.
        for version: UInt8 in [0, 1, 2, 4] {
            assertPreKeysFail(sealed(header(.preKeys, version: version) + body.dropFirst(6)), .unsupportedVersion, "version \(version)")
        }
        for version: UInt8 in [0, 1, 4] {
            XCTAssertThrowsError(try LocalPreKeys.upgrading(serialized: sealed(header(.preKeys, version: version) + body.dropFirst(6)))) {
                XCTAssertEqual($0 as? SessionError, .unsupportedVersion, "upgrading version \(version)")
            }
        }
        assertPreKeysFail(sealed(header(.session, version: 3) + body.dropFirst(6)), .invalidPayload)
        assertPreKeysFail(sealed(body + [0]), .invalidPayload, "trailing byte")
    }

    /// A well-formed ML-KEM-768 encapsulation key (every coefficient q − 1), no KEM needed.
    private static let wellFormedEK: [UInt8] = Array(repeating: [0x00, 0x0D, 0xD0], count: 384).flatMap { $0 } + [UInt8](repeating: 7, count: 32)

    func testInconsistentPreKeysAreInvalidPayload() throws {
        // A hand-built version-3 body, from the layout documented in LocalPreKeysPersistence.swift:
        // next ids (signed, one-time, KEM), the current entry, previous entries with their
        // retirement time, one-time prekeys, one-time KEM prekeys. Version 2 differs in the
        // entries only: their replay records follow their count.
        let random = SeededRandomSource(seed: 62)
        let identity = try IdentityKeyPair(using: random)
        let signed = try SignedPreKey(id: 1, signedBy: identity, using: random)
        let oneTime = try OneTimePreKey(id: 1, using: random)
        let canonicalEK = try X25519.PrivateKey(using: random).publicKey.rawRepresentation
        let otherEK = try X25519.PrivateKey(using: random).publicKey.rawRepresentation
        func kemKey(_ id: UInt32, ek: [UInt8] = Self.wellFormedEK) -> [UInt8] {
            u32(id) + [UInt8](repeating: 0x5E, count: 64) + ek + [UInt8](repeating: 0x51, count: 64)
        }
        struct Entry {
            var id: UInt32
            var kemByte: UInt8 = 0
            var lastResort: [UInt8]? = nil
            /// Version 2: the records; version 3: their number is written.
            var recorded: [[UInt8]] = []
        }
        func entryBytes(_ entry: Entry, retired: Bool, version: UInt8) -> [UInt8] {
            var out = u32(entry.id) + signed.privateKey.rawBytesForTest + signed.signature + [entry.kemByte]
                + [0, 0, 0, 0, 0x65, 0x53, 0xf1, 0x00]
            out += entry.lastResort ?? []
            out += u32(UInt32(entry.recorded.count)) + (version == 2 ? entry.recorded.flatMap { $0 } : [])
            if retired { out += [0, 0, 0, 0, 0x66, 0, 0, 0] }
            return out
        }
        func oneTimeBytes(_ id: UInt32) -> [UInt8] { u32(id) + oneTime.privateKey.rawBytesForTest }
        func blob(version: UInt8 = 3, next: (UInt32, UInt32, UInt32) = (2, 2, 9), current: Entry = Entry(id: 1), previous: [Entry] = [],
                  oneTime: [UInt32] = [1], oneTimeCount: UInt32? = nil, oneTimeKEM: [[UInt8]] = [],
                  oneTimeKEMCount: UInt32? = nil) -> [UInt8] {
            var body = header(.preKeys, version: version) + u32(next.0) + u32(next.1) + u32(next.2)
                + entryBytes(current, retired: false, version: version)
            body += u32(UInt32(previous.count)) + previous.flatMap { entryBytes($0, retired: true, version: version) }
            body += u32(oneTimeCount ?? UInt32(oneTime.count)) + oneTime.flatMap(oneTimeBytes)
            body += u32(oneTimeKEMCount ?? UInt32(oneTimeKEM.count)) + oneTimeKEM.flatMap { $0 }
            return sealed(body)
        }
        let valid = try LocalPreKeys(serialized: blob(previous: [Entry(id: 2)], oneTime: [1, 2]))
        XCTAssertEqual(valid.previousSignedPreKeys.map(\.key.id), [2])
        XCTAssertEqual(valid.oneTimePreKeys.map(\.id), [1, 2])
        XCTAssertEqual(valid.nextKEMPreKeyID, 9)
        XCTAssertFalse(valid.currentSignedPreKey.key.signsKEMPreKeys)

        // A kem = 1 entry with its last-resort KEM prekey, replay records, and one-time KEM prekeys.
        // Version 2's records are written in ascending byte order (the layout requires it).
        let current = Entry(id: 1, kemByte: 1, lastResort: kemKey(3), recorded: [canonicalEK, otherEK].sorted { $0.lexicographicallyPrecedes($1) })
        let withKEM = try LocalPreKeys(serialized: blob(current: current, previous: [Entry(id: 2, recorded: [otherEK])],
                                                        oneTimeKEM: [kemKey(4), kemKey(5)]))
        XCTAssertTrue(withKEM.currentSignedPreKey.key.signsKEMPreKeys)
        XCTAssertEqual(withKEM.currentSignedPreKey.lastResortKEMPreKey?.id, 3)
        XCTAssertEqual(withKEM.currentSignedPreKey.lastResortKEMPreKey?.kind, .lastResort)
        XCTAssertEqual(withKEM.oneTimeKEMPreKeys.map(\.id), [4, 5])
        XCTAssertEqual(withKEM.oneTimeKEMPreKeys.map(\.kind), [.oneTime, .oneTime])
        XCTAssertEqual(withKEM.kemPreKey(id: 3)?.publicKey.rawRepresentation, Self.wellFormedEK)
        XCTAssertEqual(withKEM.signedPreKeyEntries.map(\.recordedBaseKeyCount), [2, 1])
        // The same prekeys as version 2, records inside: `upgrading` hands the records out,
        // counted the same, and the prekeys serialize as the version-3 blob.
        let upgraded = try LocalPreKeys.upgrading(serialized: blob(
            version: 2, current: current, previous: [Entry(id: 2, recorded: [otherEK])], oneTimeKEM: [kemKey(4), kemKey(5)]))
        XCTAssertEqual(upgraded.preKeys.serialized(), withKEM.serialized())
        XCTAssertEqual(Set(upgraded.baseKeyRecords), [
            BaseKeyRecord(signedPreKeyID: 1, baseKey: try X25519.PublicKey(rawRepresentation: canonicalEK)),
            BaseKeyRecord(signedPreKeyID: 1, baseKey: try X25519.PublicKey(rawRepresentation: otherEK)),
            BaseKeyRecord(signedPreKeyID: 2, baseKey: try X25519.PublicKey(rawRepresentation: otherEK)),
        ])
        XCTAssertEqual(upgraded.baseKeyRecords.count, 3)
        XCTAssertEqual(try LocalPreKeys.upgrading(serialized: withKEM.serialized()).baseKeyRecords, [], "a version-3 blob holds no record")

        assertPreKeysFail(blob(next: (0, 2, 9)), .invalidPayload, "next signed id 0")
        assertPreKeysFail(blob(next: (2, 0, 9)), .invalidPayload, "next one-time id 0")
        assertPreKeysFail(blob(next: (2, 2, 0)), .invalidPayload, "next KEM id 0")
        assertPreKeysFail(blob(current: Entry(id: 0)), .invalidPayload, "signed id 0")
        assertPreKeysFail(blob(previous: [Entry(id: 0)]), .invalidPayload, "previous signed id 0")
        assertPreKeysFail(blob(previous: [Entry(id: 1)]), .invalidPayload, "previous id equal to the current one")
        assertPreKeysFail(blob(previous: [Entry(id: 2), Entry(id: 2)]), .invalidPayload, "repeated previous id")
        assertPreKeysFail(blob(oneTime: [0]), .invalidPayload, "one-time id 0")
        assertPreKeysFail(blob(oneTime: [4, 4]), .invalidPayload, "repeated one-time id")
        assertPreKeysFail(blob(oneTime: [], oneTimeCount: UInt32(LocalPreKeys.maximumOneTimePreKeyCount + 1)), .invalidPayload, "too many")
        assertPreKeysFail(blob(oneTime: [1], oneTimeCount: 2), .invalidPayload, "count beyond the keys present")
        assertPreKeysFail(blob(current: Entry(id: 1, kemByte: 2)), .invalidPayload, "kem byte 2")
        assertPreKeysFail(blob(current: Entry(id: 1, kemByte: 1)), .invalidPayload, "kem = 1 without its last-resort KEM prekey")
        assertPreKeysFail(blob(current: Entry(id: 1, kemByte: 1, lastResort: kemKey(0))), .invalidPayload, "KEM id 0")
        var malformedEK = Self.wellFormedEK
        malformedEK[0] = 0x01
        malformedEK[1] = 0x0D
        assertPreKeysFail(blob(current: Entry(id: 1, kemByte: 1, lastResort: kemKey(3, ek: malformedEK))), .invalidPayload, "malformed ek")
        assertPreKeysFail(blob(current: Entry(id: 1, kemByte: 1, lastResort: kemKey(3)), oneTimeKEM: [kemKey(3)]), .invalidPayload,
                          "a one-time KEM id equal to a last-resort one")
        assertPreKeysFail(blob(oneTimeKEM: [kemKey(4), kemKey(4)]), .invalidPayload, "repeated one-time KEM id")
        assertPreKeysFail(blob(oneTimeKEM: [], oneTimeKEMCount: UInt32(LocalPreKeys.maximumOneTimePreKeyCount + 1)), .invalidPayload,
                          "too many one-time KEM prekeys")
        assertPreKeysFail(blob(oneTimeKEM: [kemKey(4)], oneTimeKEMCount: 2), .invalidPayload, "KEM count beyond the keys present")
        func assertUpgradeFails(_ blob: [UInt8], _ message: String) {
            XCTAssertThrowsError(try LocalPreKeys.upgrading(serialized: blob), message) {
                XCTAssertEqual($0 as? SessionError, .invalidPayload, message)
            }
        }
        assertUpgradeFails(blob(version: 2, current: Entry(id: 1, recorded: [canonicalEK, canonicalEK])), "repeated EK_A record")
        assertUpgradeFails(blob(version: 2, current: Entry(id: 1, recorded: current.recorded.reversed())), "EK_A records out of order")
        var nonCanonical = canonicalEK
        nonCanonical[31] |= 0x80
        assertUpgradeFails(blob(version: 2, current: Entry(id: 1, recorded: [nonCanonical])), "non-canonical EK_A record")
    }

    func testPreKeysWithKEMPreKeysAndReplayRecordsRoundTrip() throws {
        let kem = try mlkem()
        let random = SeededRandomSource(seed: 65)
        let identity = try IdentityKeyPair(using: random)
        let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 4, oneTimePreKeyLowWaterMark: 1)
        var keys = try LocalPreKeys(identity: identity, now: start, policy: policy, kem: kem, random: random)
        try keys.apply(PreKeyConsumption(signedPreKeyID: 1, baseKey: try X25519.PrivateKey(using: random).publicKey,
                                         oneTimePreKeyID: 2, oneTimeKEMPreKeyID: 3))
        try keys.rotateSignedPreKey(identity: identity, now: start.adding(seconds: 10), kem: kem, random: random)
        let blob = keys.serialized()
        let loaded = try LocalPreKeys(serialized: blob)
        XCTAssertEqual(loaded.serialized(), blob)
        XCTAssertEqual(loaded.signedPreKeyEntries.map(\.recordedBaseKeyCount), [0, 1])
        XCTAssertEqual(loaded.signedPreKeyEntries.map { $0.lastResortKEMPreKey?.id }, keys.signedPreKeyEntries.map { $0.lastResortKEMPreKey?.id })
        XCTAssertEqual(loaded.oneTimeKEMPreKeys.map(\.id), keys.oneTimeKEMPreKeys.map(\.id))
        XCTAssertEqual(loaded.oneTimeKEMPreKeys.map(\.publicKey), keys.oneTimeKEMPreKeys.map(\.publicKey))
        XCTAssertEqual(loaded.fullUpload(identityKey: identity.publicKey), keys.fullUpload(identityKey: identity.publicKey))
        // A loaded KEM prekey still decapsulates: its seed survived.
        let kemKey = try XCTUnwrap(loaded.kemPreKey(id: 4))
        let encapsulation = try kem.encapsulate(to: kemKey.publicKey)
        let secret = try kemKey.withUnsafeSeedBytes { try kem.decapsulate(encapsulation.ciphertext, seed: SecureBytes(copying: $0)) }
        XCTAssertTrue(secret.constantTimeEquals(encapsulation.sharedSecret))
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
