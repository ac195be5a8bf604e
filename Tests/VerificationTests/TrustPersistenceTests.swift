@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification
import XCTest

/// Persisted trust records: SessionKit's envelope (kind .trust, version 1), loaded strictly.
final class TrustPersistenceTests: XCTestCase {
    private let alice = address("alice", 1)
    private let bob = address("bob", 7)
    private let carol = address("e\u{301}", 2)

    /// A store with a trusted, a verified and a changed (unverified) contact.
    private func populatedStore() async throws -> InMemoryTrustStore {
        let store = InMemoryTrustStore()
        _ = await store.observeIdentity(identityKey(0xa1), for: alice)
        try await store.markVerified(identityKey(0xb1), for: bob)
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
        let bobStatus = await restored.status(for: bob)
        XCTAssertEqual(bobStatus, .verified)
        let decomposedOnly = await restored.record(for: address("\u{e9}", 2))
        XCTAssertNil(decomposedOnly, "user ids are restored byte for byte")
    }

    func testAnEmptyStoreRoundTrips() async throws {
        let blob = await InMemoryTrustStore().serialized()
        XCTAssertEqual(try TrustSnapshot(serialized: blob).records.count, 0)
    }

    func testTheBlobUsesTheTrustEnvelope() async throws {
        let blob = await InMemoryTrustStore().serialized()
        XCTAssertEqual(Array(blob.prefix(6)), Array("SKST".utf8) + [StateKind.trust.rawValue, 1])
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

    func testAWellFormedHandWrittenBlobLoads() throws {
        let bytes = blob { writer in
            writer.write(UInt32(2))
            writeRecord(&writer, device: 1, status: 2)
            writeRecord(&writer, device: 2, status: 0, key: [UInt8](repeating: 3, count: 32), previous: [UInt8](repeating: 4, count: 32))
        }
        let records = try TrustSnapshot(serialized: bytes).records
        XCTAssertEqual(records[address("bob", 1)]?.status, .verified)
        XCTAssertEqual(records[address("bob", 2)],
                       TrustRecord(identityKey: identityKey(3), status: .unverified, previousIdentityKey: identityKey(4)))
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
        assertLoading(blob(version: 2) { $0.write(UInt32(0)) }, fails: .unsupportedVersion)
        assertLoading(blob(version: 0) { $0.write(UInt32(0)) }, fails: .unsupportedVersion)
    }
}
