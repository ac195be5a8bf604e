import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit

/// Regression tests for inputs the fuzzers (Fuzz/) found: persisted states that must fail to
/// load with a typed error instead of trapping or exhausting memory.
final class PersistenceHardeningTests: XCTestCase {
    /// Re-seals a body in the state envelope: "SKST" || kind || version || body || checksum.
    static func envelope(kind: StateKind, version: UInt8, body: [UInt8]) -> [UInt8] {
        let head = Array("SKST".utf8) + [kind.rawValue, version] + body
        return head + SHA256.hash(head).prefix(16)
    }

    /// A responder session with no skipped keys (its body ends with `u32(skippedCount) = 0`).
    static func sessionBlob() throws -> [UInt8] {
        var conversation = try Conversation(seed: 501)
        _ = try conversation.bobReceives(try conversation.aliceSends(Array("hello".utf8)))
        let blob = try XCTUnwrap(conversation.bob).serialized()
        XCTAssertEqual(Array(blob.suffix(20).prefix(4)), [0, 0, 0, 0], "the body ends with a zero skipped-key count")
        return blob
    }

    func testASessionClaimingBillionsOfSkippedKeysFailsToLoadInsteadOfExhaustingMemory() throws {
        // Found by Fuzz/ state_session and state_session_record: MAX_STORED (from the blob) may be
        // 2^32 − 1, and a skipped-key count that large made loading reserve ~12 GB up front.
        let blob = try Self.sessionBlob()
        var body = Array(blob[6 ..< (blob.count - 16)])
        body.replaceSubrange(1 ..< 9, with: [UInt8](repeating: 0xFF, count: 8))            // maxSkip, maxStored = 2^32 − 1
        body.replaceSubrange((body.count - 4)..., with: [0xFF, 0xFF, 0xFF, 0xFF])           // skippedCount = 2^32 − 1, no keys follow
        let corrupt = Self.envelope(kind: .session, version: blob[5], body: body)
        XCTAssertThrowsError(try SessionState(serialized: corrupt)) { XCTAssertEqual($0 as? SessionError, .invalidPayload) }

        var record = Array("SKST".utf8) + [StateKind.sessionRecord.rawValue, 2, 1] + body + [0, 0, 0, 0]
        record = Self.envelope(kind: .sessionRecord, version: 2, body: Array(record[6...]))
        XCTAssertThrowsError(try SessionRecord(serialized: record)) { XCTAssertEqual($0 as? SessionError, .invalidPayload) }
    }

    func testStoredLimitsAboveTheHardCapAreRefusedAndTheCapItselfLoads() throws {
        // ProtocolLimits.maximumMaxStored bounds what one forged message can make a receiver
        // derive; a persisted session may not claim more.
        let blob = try Self.sessionBlob()
        func withLimits(_ value: UInt32) -> [UInt8] {
            var body = Array(blob[6 ..< (blob.count - 16)])
            var field: [UInt8] = []
            field.appendBigEndian(value)
            body.replaceSubrange(9 ..< 17, with: field + field)   // after role and generation: maxSkip = maxStored = value
            return Self.envelope(kind: .session, version: blob[5], body: body)
        }
        let cap = UInt32(ProtocolLimits.maximumMaxStored)
        let reloaded = try SessionState(serialized: withLimits(cap))
        XCTAssertEqual(reloaded.configuration.maxStored, ProtocolLimits.maximumMaxStored)
        XCTAssertEqual(reloaded.skippedMessageKeyCount, 0)
        for tooLarge in [cap + 1, UInt32.max] {
            XCTAssertThrowsError(try SessionState(serialized: withLimits(tooLarge))) {
                XCTAssertEqual($0 as? SessionError, .invalidPayload)
            }
        }
        XCTAssertThrowsError(try SessionConfiguration(maxSkip: 1, maxStored: ProtocolLimits.maximumMaxStored + 1)) {
            XCTAssertEqual($0 as? SessionError, .invalidConfiguration("maxStored must not exceed \(ProtocolLimits.maximumMaxStored)"))
        }
    }
}

/// Found by Fuzz/ state_prekeys (its canonical-format invariant): `LocalPreKeys(serialized:)`
/// accepted a signed prekey's EK_A replay records in any order although `serialized()` wrote
/// them sorted, so two blobs loaded to one state. Records must be strictly ascending. Since
/// version 3 the blob holds only their count, and version 2 (records inside) loads through
/// `LocalPreKeys.upgrading(serialized:)`, which keeps the rule.
final class PreKeyReplayRecordOrderTests: XCTestCase {
    func testReplayRecordsOutOfOrderOrRepeatedAreInvalidPayload() throws {
        let identity = try IdentityKeyPair(seed: [UInt8](repeating: 7, count: 32))
        var keys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 1_000), random: SystemRandomSource())
        let first = try X25519.PrivateKey(rawRepresentation: [UInt8](repeating: 1, count: 32)).publicKey
        let second = try X25519.PrivateKey(rawRepresentation: [UInt8](repeating: 2, count: 32)).publicKey
        let signedID = keys.currentSignedPreKey.key.id
        for key in [first, second] {
            try keys.apply(PreKeyConsumption(signedPreKeyID: signedID, baseKey: key, oneTimePreKeyID: nil, oneTimeKEMPreKeyID: nil))
        }
        let blob = keys.serialized()
        XCTAssertNoThrow(try LocalPreKeys(serialized: blob))
        let (low, high) = first.rawRepresentation.lexicographicallyPrecedes(second.rawRepresentation)
            ? (first.rawRepresentation, second.rawRepresentation) : (second.rawRepresentation, first.rawRepresentation)
        // Version 3: the current entry (no KEM prekey) ends with its u32 count of 2 at body offset
        // 3 × 4 (next ids) + 4 + 32 + 64 + 1 + 8; version 2 has the records right after it.
        let body = Array(blob[6 ..< blob.count - 16])
        let countEnd = 12 + 4 + 32 + 64 + 1 + 8 + 4
        XCTAssertEqual(Array(body[countEnd - 4 ..< countEnd]), [0, 0, 0, 2])
        func version2(_ records: [UInt8]) -> [UInt8] {
            PersistenceHardeningTests.envelope(kind: .preKeys, version: 2, body: Array(body[..<countEnd]) + records + body[countEnd...])
        }
        let upgraded = try LocalPreKeys.upgrading(serialized: version2(low + high))
        XCTAssertEqual(Set(upgraded.baseKeyRecords), [BaseKeyRecord(signedPreKeyID: signedID, baseKey: first),
                                                      BaseKeyRecord(signedPreKeyID: signedID, baseKey: second)])
        XCTAssertEqual(upgraded.preKeys.serialized(), blob)
        for records in [high + low, low + low] {
            XCTAssertThrowsError(try LocalPreKeys.upgrading(serialized: version2(records))) {
                XCTAssertEqual($0 as? SessionError, .invalidPayload)
            }
        }
    }
}

/// Issue 18: EK_A replay records were capped only at upkeep and never for retired signed
/// prekeys, so anyone minting prekey messages from a published bundle grew them without bound.
/// A full record now retires its signed prekey for new sessions at consumption, current and
/// previous alike, and nothing changes when it refuses.
final class PreKeyReplayRecordBoundTests: XCTestCase {
    func testAFullReplayRecordRefusesTheNextConsumptionForCurrentAndPreviousSignedPreKeys() throws {
        let identity = try IdentityKeyPair(seed: [UInt8](repeating: 9, count: 32))
        let random = SystemRandomSource()
        var keys = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 1_000), random: random)
        let limit = 3
        func consumption(_ id: UInt32) throws -> PreKeyConsumption {
            PreKeyConsumption(signedPreKeyID: id, baseKey: try X25519.PrivateKey(using: random).publicKey,
                              oneTimePreKeyID: nil, oneTimeKEMPreKeyID: nil)
        }
        let first = keys.currentSignedPreKey.key.id
        for _ in 0 ..< limit { try keys.apply(try consumption(first), maximumRecordedBaseKeys: limit) }
        let full = keys.serialized()
        XCTAssertThrowsError(try keys.apply(try consumption(first), maximumRecordedBaseKeys: limit)) {
            XCTAssertEqual($0 as? SessionError, .unknownPreKey)
        }
        XCTAssertEqual(keys.serialized(), full, "a refused consumption changes nothing")

        // Rotated out, the full key stays full: the retired key's record cannot grow either.
        _ = try keys.maintain(identity: identity, now: Timestamp(secondsSince1970: 1_000 + 8 * 86_400), policy: .default, random: random)
        XCTAssertNotEqual(keys.currentSignedPreKey.key.id, first, "rotated")
        XCTAssertThrowsError(try keys.apply(try consumption(first), maximumRecordedBaseKeys: limit)) {
            XCTAssertEqual($0 as? SessionError, .unknownPreKey)
        }
        XCTAssertNoThrow(try keys.apply(try consumption(keys.currentSignedPreKey.key.id), maximumRecordedBaseKeys: limit))
        // The library's own bound is the default.
        XCTAssertEqual(ProtocolLimits.maximumRecordedBaseKeys, 10_000)
    }
}
