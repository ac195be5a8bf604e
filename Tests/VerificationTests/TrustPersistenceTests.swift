@_spi(Testing) import SessionKit
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// Persisted trust records: SessionKit's envelope (kind .trust, version 2, per user), loaded
/// strictly; version-1 blobs (per device) fold per user.
final class TrustPersistenceTests: XCTestCase {
    private let alice = address("alice", 1)
    private let bob = address("bob", 7)
    private let carol = address("e\u{301}", 2)

    /// A store with a trusted, a verified and a changed (unverified) contact.
    private func populatedStore() async throws -> InMemoryTrustStore {
        let store = InMemoryTrustStore()
        _ = await store.observeIdentity(identityKey(0xa1), for: alice)
        try await store.markVerified(identityKey(0xb1), forUser: bob.userID)
        _ = await store.observeIdentity(identityKey(0xc1), for: carol)
        _ = await store.observeIdentity(identityKey(0xc2), for: carol)
        return store
    }

    func testRecordsSurviveARoundTrip() async throws {
        let store = try await populatedStore()
        let blob = await store.serialized()
        let restored = try InMemoryTrustStore(serialized: blob)
        let original = await store.snapshot()
        let loaded = await restored.snapshot()
        XCTAssertEqual(loaded, original)
        XCTAssertEqual(loaded.records.count, 3)
        let reserialized = await restored.serialized()
        XCTAssertEqual(reserialized, blob, "the encoding is deterministic")

        // The restored store keeps blocking the pending change and trusts the others.
        let carolDecision = await restored.evaluateIdentity(identityKey(0xc2), for: carol)
        XCTAssertEqual(carolDecision, TrustDecision(observation: .unchanged, allowsSending: false))
        let bobStatus = try await restored.status(forUser: bob.userID)
        XCTAssertEqual(bobStatus, .verified)
        let decomposedOnly = try await restored.record(forUser: "\u{e9}")
        XCTAssertNil(decomposedOnly, "user ids are restored byte for byte")
    }

    func testAnEmptyStoreRoundTrips() async throws {
        let blob = await InMemoryTrustStore().serialized()
        XCTAssertEqual(try TrustSnapshot(serialized: blob).records.count, 0)
    }

    func testTheBlobUsesTheTrustEnvelope() async throws {
        let blob = await InMemoryTrustStore().serialized()
        XCTAssertEqual(Array(blob.prefix(6)), Array("SKST".utf8) + [StateKind.trust.rawValue, 2])
        XCTAssertEqual(blob.count, 6 + 4 + 16)
    }

    func testEveryTruncationAndEveryFlippedByteIsRejected() async throws {
        let blob = try await populatedStore().serialized()
        for length in 0 ..< blob.count {
            XCTAssertThrowsError(try TrustSnapshot(serialized: Array(blob.prefix(length))), "prefix \(length)")
        }
        for index in blob.indices {
            var corrupted = blob
            corrupted[index] ^= 0x40
            XCTAssertThrowsError(try TrustSnapshot(serialized: corrupted), "byte \(index)")
        }
        XCTAssertThrowsError(try TrustSnapshot(serialized: blob + [0])) {
            XCTAssertEqual($0 as? VerificationError, .invalidPayload)
        }
    }

    /// Writes a body with SessionKit's writer so that the checksum is valid and only the body is wrong.
    private func blob(version: UInt8 = 1, kind: StateKind = .trust, _ body: (inout StateWriter) -> Void) -> [UInt8] {
        var writer = StateWriter(kind: kind, version: version)
        body(&writer)
        return writer.finish()
    }

    private func writeRecord(_ writer: inout StateWriter, user: [UInt8] = Array("bob".utf8), device: UInt32 = 1,
                             status: UInt8 = 1, key: [UInt8] = [UInt8](repeating: 5, count: 32), previous: [UInt8]? = nil) {
        writer.writeVariable(user)
        writer.write(device)
        writer.write(status)
        writer.writeVariable(key)
        if let previous { writer.writeVariable(previous) }
    }

    private func assertLoading(_ bytes: [UInt8], fails expected: VerificationError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try TrustSnapshot(serialized: bytes), file: file, line: line) {
            XCTAssertEqual($0 as? VerificationError, expected, file: file, line: line)
        }
    }

    /// Version 1 (per device) folds per user: devices with different keys become a change
    /// awaiting acceptance, from the lowest device's key to the first other key.
    func testAVersion1BlobWithDifferentKeysFoldsIntoAPendingChange() throws {
        let bytes = blob { writer in
            writer.write(UInt32(2))
            writeRecord(&writer, device: 1, status: 2)
            writeRecord(&writer, device: 2, status: 0, key: [UInt8](repeating: 3, count: 32), previous: [UInt8](repeating: 4, count: 32))
        }
        let records = try TrustSnapshot(serialized: bytes).records
        XCTAssertEqual(records.count, 1)
        XCTAssertEqual(records[try TrustUserID("bob")],
                       TrustRecord(identityKey: identityKey(5), status: .unverified, previousIdentityKey: identityKey(3), devices: [1]))
    }

    /// Version 1 devices with one key fold into one record with the strongest status and every device.
    func testAVersion1BlobWithOneKeyFoldsWithTheStrongestStatus() throws {
        let bytes = blob { writer in
            writer.write(UInt32(3))
            writeRecord(&writer, device: 1, status: 1)
            writeRecord(&writer, device: 4, status: 2)
            writeRecord(&writer, user: Array("carol".utf8), device: 9, status: 1)
        }
        let records = try TrustSnapshot(serialized: bytes).records
        XCTAssertEqual(records[try TrustUserID("bob")],
                       TrustRecord(identityKey: identityKey(5), status: .verified, previousIdentityKey: nil, devices: [1, 4]))
        XCTAssertEqual(records[try TrustUserID("carol")],
                       TrustRecord(identityKey: identityKey(5), status: .trusted, previousIdentityKey: nil, devices: [9]))
    }

    func testAVersion2RecordWithDevicesAndSupersededKeysRoundTrips() throws {
        let record = TrustRecord(
            identityKey: identityKey(7), status: .verified, previousIdentityKey: nil, devices: [3, 1, 2],
            supersededIdentityKeys: [identityKey(8), identityKey(9)])
        let snapshot = TrustSnapshot(records: [try TrustUserID("dana"): record])
        XCTAssertEqual(try TrustSnapshot(serialized: snapshot.serialized), snapshot)
    }

    func testVersion2BodiesWithRepeatsOrTooManyEntriesAreInvalid() {
        func v2(_ devices: [UInt32], _ superseded: [[UInt8]]) -> [UInt8] {
            blob(version: 2) { writer in
                writer.write(UInt32(1))
                writer.writeVariable(Array("bob".utf8))
                writer.write(UInt8(1))
                writer.writeVariable([UInt8](repeating: 5, count: 32))
                writer.write(UInt32(devices.count))
                for device in devices { writer.write(device) }
                writer.write(UInt32(superseded.count))
                for key in superseded { writer.writeVariable(key) }
            }
        }
        XCTAssertNoThrow(try TrustSnapshot(serialized: v2([1, 2], [[UInt8](repeating: 6, count: 32)])))
        let cases: [(String, [UInt8])] = [
            ("repeated device", v2([1, 1], [])),
            ("repeated superseded key", v2([], [[UInt8](repeating: 6, count: 32), [UInt8](repeating: 6, count: 32)])),
            ("superseded key equal to the key", v2([], [[UInt8](repeating: 5, count: 32)])),
            ("too many devices", v2(Array(0 ..< 257), [])),
            ("too many superseded keys", v2([], (10 ..< 27).map { [UInt8](repeating: UInt8($0), count: 32) })),
        ]
        for (what, bytes) in cases {
            XCTAssertThrowsError(try TrustSnapshot(serialized: bytes), what) {
                XCTAssertEqual($0 as? VerificationError, .invalidPayload, what)
            }
        }
    }

    func testCorruptedBodiesAreInvalid() {
        let cases: [(String, [UInt8])] = [
            ("unknown status", blob { $0.write(UInt32(1)); writeRecord(&$0, status: 3) }),
            ("unverified without a previous key", blob { $0.write(UInt32(1)); writeRecord(&$0, status: 0) }),
            ("previous key equal to the key", blob {
                $0.write(UInt32(1)); writeRecord(&$0, status: 0, key: [UInt8](repeating: 9, count: 32), previous: [UInt8](repeating: 9, count: 32))
            }),
            ("empty key", blob { $0.write(UInt32(1)); writeRecord(&$0, key: []) }),
            ("short key", blob { $0.write(UInt32(1)); writeRecord(&$0, key: [1, 2, 3]) }),
            ("33-byte key", blob { $0.write(UInt32(1)); writeRecord(&$0, key: [UInt8](repeating: 1, count: 33)) }),
            ("oversized key", blob { $0.write(UInt32(1)); writeRecord(&$0, key: [UInt8](repeating: 1, count: 1025)) }),
            ("invalid UTF-8 user id", blob { $0.write(UInt32(1)); writeRecord(&$0, user: [0x62, 0xc0, 0x80]) }),
            ("surrogate in user id", blob { $0.write(UInt32(1)); writeRecord(&$0, user: [0xed, 0xa0, 0x80]) }),
            ("duplicate address", blob { $0.write(UInt32(2)); writeRecord(&$0); writeRecord(&$0) }),
            ("records out of order", blob { $0.write(UInt32(2)); writeRecord(&$0, device: 2); writeRecord(&$0, device: 1) }),
            ("count larger than the records", blob { $0.write(UInt32(2)); writeRecord(&$0) }),
            ("count smaller than the records", blob { $0.write(UInt32(0)); writeRecord(&$0) }),
            ("huge count", blob { $0.write(UInt32.max) }),
            ("missing count", blob { _ in }),
            ("wrong kind", blob(kind: .session) { $0.write(UInt32(0)) }),
        ]
        for (what, bytes) in cases {
            XCTAssertThrowsError(try TrustSnapshot(serialized: bytes), what) {
                XCTAssertEqual($0 as? VerificationError, .invalidPayload, what)
            }
        }
    }

    func testAnUnknownVersionIsUnsupported() {
        assertLoading(blob(version: 3) { $0.write(UInt32(0)) }, fails: .unsupportedVersion)
        assertLoading(blob(version: 0) { $0.write(UInt32(0)) }, fails: .unsupportedVersion)
    }
}
