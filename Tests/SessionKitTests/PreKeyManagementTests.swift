import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Prekey lifecycle (`LocalPreKeys`): batches, replenishment, id allocation, signed-prekey
/// rotation and expiry, all against explicit times.
final class PreKeyManagementTests: XCTestCase {
    private let start = Timestamp(secondsSince1970: 1_700_000_000)
    private let week = Days.seconds(7)
    private let month = Days.seconds(30)

    private func fresh(seed: UInt64 = 1, policy: PreKeyPolicy = .default) throws -> (LocalPreKeys, IdentityKeyPair, SeededRandomSource) {
        let random = SeededRandomSource(seed: seed)
        let identity = try IdentityKeyPair(using: random)
        return (try LocalPreKeys(identity: identity, now: start, policy: policy, random: random), identity, random)
    }

    func testDefaultsMatchTheDocumentedLimits() {
        let policy = PreKeyPolicy.default
        XCTAssertEqual(policy.oneTimePreKeyBatchSize, 50)
        XCTAssertEqual(policy.oneTimePreKeyLowWaterMark, 20)
        XCTAssertEqual(policy.signedPreKeyRotationInterval, 7 * 24 * 3600)
        XCTAssertEqual(policy.signedPreKeyGracePeriod, 30 * 24 * 3600)
        XCTAssertEqual(policy.maximumRecordedBaseKeys, 10_000)
        XCTAssertEqual(ProtocolLimits.maxPreviousSessions, 40)
    }

    func testANewDeviceHasOneSignedPreKeyAndABatchOfFiftyOneTimePreKeys() throws {
        let (keys, identity, _) = try fresh()
        XCTAssertEqual(keys.currentSignedPreKey.key.id, 1)
        XCTAssertEqual(keys.currentSignedPreKey.createdAt, start)
        XCTAssertNil(keys.currentSignedPreKey.retiredAt)
        XCTAssertTrue(keys.previousSignedPreKeys.isEmpty)
        XCTAssertEqual(keys.oneTimePreKeys.map(\.id), Array(1 ... 50))
        XCTAssertEqual(Set(keys.oneTimePreKeys.map(\.publicKey.rawRepresentation)).count, 50, "keys are distinct")
        XCTAssertTrue(keys.currentSignedPreKey.key.hasValidSignature(from: identity.publicKey))

        let upload = keys.fullUpload(identityKey: identity.publicKey)
        XCTAssertEqual(upload.identityKey, identity.publicKey)
        XCTAssertEqual(upload.signedPreKey?.id, 1)
        XCTAssertEqual(upload.signedPreKey?.publicKey, keys.currentSignedPreKey.key.publicKey)
        // "SessionKit SPK v2" || Encode(SPK) || u8(kem = 0): a device without a KEM signs kem = 0.
        XCTAssertTrue(identity.publicKey.isValidSignature(
            try XCTUnwrap(upload.signedPreKey?.signature),
            for: Array("SessionKit SPK v2".utf8) + keys.currentSignedPreKey.key.publicKey.signalEncoding + [0]))
        XCTAssertEqual(upload.signedPreKey?.signsKEMPreKeys, false)
        XCTAssertNil(upload.lastResortKEMPreKey)
        XCTAssertTrue(upload.oneTimeKEMPreKeys.isEmpty)
        XCTAssertTrue(keys.oneTimeKEMPreKeys.isEmpty)
        XCTAssertNil(keys.currentSignedPreKey.lastResortKEMPreKey)
        XCTAssertEqual(upload.oneTimePreKeys.map(\.id), Array(1 ... 50))
        XCTAssertEqual(upload.oneTimePreKeys.map(\.publicKey), keys.oneTimePreKeys.map(\.publicKey))
    }

    func testABundleFromTheKeysStartsASessionTheKeysAccept() throws {
        var (keys, bobIdentity, random) = try fresh(seed: 2)
        let aliceIdentity = try IdentityKeyPair(using: random)
        let bundle = try XCTUnwrap(keys.bundle(identityKey: bobIdentity.publicKey, oneTimePreKeyID: 7))
        XCTAssertNil(keys.bundle(identityKey: bobIdentity.publicKey, oneTimePreKeyID: 51), "a one-time prekey not held gives no bundle")
        let (aliceAddress, bobAddress) = (address("alice", 1), address("bob", 1))
        var alice = try SessionState(initiatingWith: bundle, identity: aliceIdentity, localAddress: aliceAddress,
                                     remoteAddress: bobAddress, kem: nil, random: random)
        var record = SessionRecord()
        let result = try record.decrypt(try alice.encrypt(utf8("hi")), identity: bobIdentity, localAddress: bobAddress,
                                        remoteAddress: aliceAddress, preKeys: keys.lookup(), random: random)
        XCTAssertEqual(result.plaintext, utf8("hi"))
        let consumption = try XCTUnwrap(result.consumption)
        XCTAssertEqual(consumption.oneTimePreKeyID, 7)
        XCTAssertNotNil(keys.oneTimePreKey(id: 7), "decrypting consumes nothing by itself")
        try keys.apply(consumption)
        XCTAssertNil(keys.oneTimePreKey(id: 7))
        XCTAssertEqual(keys.recordedBaseKeyCount(signedPreKeyID: 1), 1, "the record counted under signed prekey 1")
        XCTAssertThrowsError(try keys.apply(consumption), "a one-time prekey is removed once") {
            XCTAssertEqual($0 as? SessionError, .unknownPreKey)
        }
        XCTAssertEqual(keys.oneTimePreKeyCount, 49)
    }

    func testReplenishingWaitsUntilFewerThanTwentyRemainThenRefillsToAFullBatch() throws {
        var (keys, _, random) = try fresh(seed: 3)
        for id in 1 ... 30 { keys.removeOneTimePreKey(id: UInt32(id)) }
        XCTAssertEqual(keys.oneTimePreKeyCount, 20)
        XCTAssertFalse(keys.needsOneTimePreKeys())
        XCTAssertEqual(try keys.replenishOneTimePreKeys(random: random).count, 0, "20 held: nothing to do")

        keys.removeOneTimePreKey(id: 31)
        XCTAssertTrue(keys.needsOneTimePreKeys())
        let added = try keys.replenishOneTimePreKeys(random: random)
        XCTAssertEqual(added.map(\.id), Array(51 ... 81), "ids continue after the last issued one")
        XCTAssertEqual(keys.oneTimePreKeyCount, 50)
        XCTAssertEqual(keys.oneTimePreKeys.map(\.id), Array(32 ... 81), "held oldest first")
    }

    func testIdsAreMonotonicAndAConsumedIdIsNotReissuedBeforeTheCounterWraps() throws {
        var (keys, identity, random) = try fresh(seed: 4)
        keys.removeOneTimePreKey(id: 50)
        let more = try keys.generateOneTimePreKeys(count: 3, random: random)
        XCTAssertEqual(more.map(\.id), [51, 52, 53], "50 was consumed but is not reissued")
        try keys.rotateSignedPreKey(identity: identity, now: start, random: random)
        try keys.rotateSignedPreKey(identity: identity, now: start, random: random)
        XCTAssertEqual(keys.currentSignedPreKey.key.id, 3)
        XCTAssertEqual(keys.previousSignedPreKeys.map(\.key.id), [2, 1], "most recently retired first")
    }

    func testIdsWrapToOneAndSkipIdsStillHeld() throws {
        let (base, identity, random) = try fresh(seed: 5)
        // Ids 1…50 are held; put the counter just before the end of the u32 range.
        var keys = LocalPreKeys(
            currentSignedPreKey: base.currentSignedPreKey, previousSignedPreKeys: [], oneTimePreKeys: base.oneTimePreKeys,
            oneTimeKEMPreKeys: [], nextSignedPreKeyID: .max, nextOneTimePreKeyID: .max - 1, nextKEMPreKeyID: 1)
        let ids = try keys.generateOneTimePreKeys(count: 4, random: random).map(\.id)
        XCTAssertEqual(ids, [.max - 1, .max, 51, 52], "after UInt32.max comes 1, and 1…50 are still held; 0 is never issued")
        XCTAssertEqual(keys.nextOneTimePreKeyID, 53)

        try keys.rotateSignedPreKey(identity: identity, now: start, random: random)
        XCTAssertEqual(keys.currentSignedPreKey.key.id, .max)
        try keys.rotateSignedPreKey(identity: identity, now: start, random: random)
        XCTAssertEqual(keys.currentSignedPreKey.key.id, 2, "1 is still held within its grace period")
        XCTAssertEqual(keys.previousSignedPreKeys.map(\.key.id), [.max, 1])
    }

    func testRotationIsDueAfterSevenDaysAndKeepsTheReplacedKeyForThirtyDays() throws {
        var (keys, identity, random) = try fresh(seed: 6)
        let firstSigned = keys.currentSignedPreKey.key
        XCTAssertFalse(keys.isSignedPreKeyRotationDue(now: start.adding(seconds: week - 1)))
        XCTAssertTrue(keys.isSignedPreKeyRotationDue(now: start.adding(seconds: week)))
        XCTAssertTrue(try keys.maintain(identity: identity, now: start.adding(seconds: week - 1), random: random).isEmpty)

        let rotatedAt = start.adding(seconds: week)
        let upload = try keys.maintain(identity: identity, now: rotatedAt, random: random)
        XCTAssertEqual(upload.signedPreKey?.id, 2)
        XCTAssertTrue(upload.oneTimePreKeys.isEmpty, "50 one-time prekeys are still held")
        XCTAssertEqual(keys.currentSignedPreKey.createdAt, rotatedAt)
        XCTAssertEqual(keys.previousSignedPreKeys.first?.retiredAt, rotatedAt)
        XCTAssertEqual(keys.signedPreKey(id: 1)?.publicKey, firstSigned.publicKey, "the replaced key is still found")

        XCTAssertEqual(keys.removeExpiredSignedPreKeys(now: rotatedAt.adding(seconds: month - 1)), [])
        XCTAssertNotNil(keys.signedPreKey(id: 1))
        XCTAssertEqual(keys.removeExpiredSignedPreKeys(now: rotatedAt.adding(seconds: month)), [1])
        XCTAssertNil(keys.signedPreKey(id: 1))
        XCTAssertNotNil(keys.signedPreKey(id: 2))
    }

    func testMaintenanceRotatesExpiresAndReplenishesInOneStep() throws {
        var (keys, identity, random) = try fresh(seed: 7)
        var now = start
        for week in 1 ... 6 {
            now = start.adding(seconds: Int64(week) * self.week)
            let upload = try keys.maintain(identity: identity, now: now, random: random)
            XCTAssertEqual(upload.signedPreKey?.id, UInt32(week + 1))
        }
        // Rotated at weeks 1…6: keys retired at weeks 1…6, the one retired at week 1 (key 1)
        // is 5 weeks = 35 days old and gone; the one retired at week 2 is 28 days old.
        XCTAssertEqual(keys.previousSignedPreKeys.map(\.key.id), [6, 5, 4, 3, 2])
        for id in 1 ... 35 { keys.removeOneTimePreKey(id: UInt32(id)) }
        let upload = try keys.maintain(identity: identity, now: now, random: random)
        XCTAssertNil(upload.signedPreKey, "not due again yet")
        XCTAssertEqual(upload.oneTimePreKeys.count, 35)
        XCTAssertEqual(keys.oneTimePreKeyCount, 50)
    }

    func testAClockThatGoesBackwardsDelaysRotationAndExpiryWithoutTrapping() throws {
        var (keys, identity, random) = try fresh(seed: 8)
        XCTAssertFalse(keys.isSignedPreKeyRotationDue(now: start.adding(seconds: -Days.seconds(400))))
        try keys.rotateSignedPreKey(identity: identity, now: start, random: random)
        XCTAssertEqual(keys.removeExpiredSignedPreKeys(now: Timestamp(secondsSince1970: .min)), [])
        XCTAssertFalse(keys.isSignedPreKeyRotationDue(now: Timestamp(secondsSince1970: .min)))
        XCTAssertTrue(keys.isSignedPreKeyRotationDue(now: Timestamp(secondsSince1970: .max)))
        XCTAssertEqual(keys.removeExpiredSignedPreKeys(now: Timestamp(secondsSince1970: .max)), [1])
    }

    func testTimestampArithmeticSaturates() {
        XCTAssertEqual(Timestamp(secondsSince1970: .max).adding(seconds: 1).secondsSince1970, .max)
        XCTAssertEqual(Timestamp(secondsSince1970: .min).adding(seconds: -1).secondsSince1970, .min)
        XCTAssertEqual(Timestamp(secondsSince1970: .max).seconds(since: Timestamp(secondsSince1970: .min)), .max)
        XCTAssertEqual(Timestamp(secondsSince1970: .min).seconds(since: Timestamp(secondsSince1970: .max)), .min)
        XCTAssertEqual(Timestamp(secondsSince1970: 10).seconds(since: Timestamp(secondsSince1970: 4)), 6)
    }

    func testPolicyRejectsOutOfRangeValues() {
        XCTAssertThrowsError(try PreKeyPolicy(oneTimePreKeyBatchSize: 0))
        XCTAssertThrowsError(try PreKeyPolicy(oneTimePreKeyBatchSize: PreKeyPolicy.maximumBatchSize + 1))
        XCTAssertThrowsError(try PreKeyPolicy(oneTimePreKeyBatchSize: 10, oneTimePreKeyLowWaterMark: 11))
        XCTAssertThrowsError(try PreKeyPolicy(oneTimePreKeyLowWaterMark: -1))
        XCTAssertThrowsError(try PreKeyPolicy(signedPreKeyRotationInterval: 0))
        XCTAssertThrowsError(try PreKeyPolicy(signedPreKeyGracePeriod: -1))
        XCTAssertThrowsError(try PreKeyPolicy(maximumRecordedBaseKeys: 0))
        XCTAssertNoThrow(try PreKeyPolicy(oneTimePreKeyBatchSize: 1, oneTimePreKeyLowWaterMark: 1, signedPreKeyRotationInterval: 1, signedPreKeyGracePeriod: 0))
    }

    func testGeneratingANegativeCountOrBeyondTheMaximumChangesNothing() throws {
        var (keys, _, random) = try fresh(seed: 9)
        let before = keys.serialized()
        XCTAssertThrowsError(try keys.generateOneTimePreKeys(count: -1, random: random))
        XCTAssertThrowsError(try keys.generateOneTimePreKeys(count: LocalPreKeys.maximumOneTimePreKeyCount, random: random))
        XCTAssertEqual(keys.serialized(), before)
    }

    func testDescriptionsNeverShowPrivateKeys() throws {
        let (keys, _, _) = try fresh(seed: 10)
        let secrets = [keys.currentSignedPreKey.key.privateKey.rawBytesForTest] + keys.oneTimePreKeys.map(\.privateKey.rawBytesForTest)
        for text in [keys.description, keys.debugDescription, "\(keys.currentSignedPreKey)"] {
            for secret in secrets { XCTAssertFalse(text.contains(Hex.encode(secret))) }
        }
    }
}

extension X25519.PrivateKey {
    /// The private key's bytes, for redaction checks only.
    var rawBytesForTest: [UInt8] { withUnsafeBytes { Array($0) } }
}
