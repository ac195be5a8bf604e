import Foundation
import GRDB
@_spi(Testing) import SessionKit
@_spi(Testing) @testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import Verification
import XCTest

/// The EK_A replay records (SPEC §3) in rows of their own (schema 5): a prekey message reads
/// and writes as much whatever the number of records, replays are recognised across reopening,
/// a schema-4 file's records move into rows, records go with their signed prekey, and a full
/// record retires its signed prekey.
final class ReplayRecordStorageTests: XCTestCase {
    private let bobAddress = address("bob", 7)

    /// Bob on an SQLite file (`.processCrash`: these tests count pages, not syncs).
    private func bob(
        _ path: String, address: ProtocolAddress? = nil, clock: any WallClock = SystemWallClock()
    ) throws -> (SQLiteProtocolStore, SessionManager) {
        let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(durability: .processCrash))
        return (store, SessionManager(store: store, trust: store, localAddress: address ?? bobAddress, clock: clock))
    }

    /// The number of replay rows in the file, in all and under the signed prekey `id`.
    private func replayRows(_ store: SQLiteProtocolStore, signedPreKeyID id: UInt32) async throws -> (all: Int, underKey: Int) {
        let spkHash = Data(store.sealer.rowKey(u32(id), in: .replaySignedPreKey))
        return try await store.readTransaction { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM prekey_replay_records") ?? -1,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM prekey_replay_records WHERE spk_hash = ?", arguments: [spkHash]) ?? -1)
        }
    }

    /// A prekey message from a new contact `alice-<index>.1` (a new identity) built from `bundle`.
    private func prekeyMessage(_ index: Int, to bundle: PreKeyBundle) async throws -> (message: [UInt8], sender: ProtocolAddress) {
        let sender = address("alice-\(index)", 1)
        let alice = SessionManager(
            store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: sender)
        try await alice.processBundle(bundle, for: bobAddress)
        return (try await alice.encrypt(Array("hello \(index)".utf8), to: bobAddress), sender)
    }

    /// Moves the WAL into the database file and empties it, from a connection of its own.
    private func checkpoint(_ path: String) throws {
        try withRawDatabase(path) { db in
            let busy = try Int.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            XCTAssertEqual(busy, 0, "the checkpoint completed")
        }
    }

    /// The bytes of the WAL: everything the transactions since the last checkpoint wrote.
    private func walBytes(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
    }

    /// The length of the sealed prekeys blob.
    private func preKeysBlobLength(_ path: String) throws -> Int? {
        try withRawDatabase(path) { try Int.fetchOne($0, sql: "SELECT length(sealed) FROM prekeys") }
    }

    // MARK: Cost that does not grow with the records

    /// The bytes one prekey message writes (and the size of the prekeys blob) do not grow with
    /// the records held: before schema 5 every record added 32 bytes to the blob, which every
    /// prekey message rewrote whole (with 400 records a prekey message wrote 36,712 bytes, with
    /// 10 11,560).
    func testAPrekeyMessageWritesAsMuchWithManyRecordsAsWithFew() async throws {
        let path = try temporaryStorePath()
        let (store, manager) = try bob(path)
        defer { try? store.close() }
        let upload = try await manager.maintainPreKeys()
        let bundle = try XCTUnwrap(upload.bundle(oneTimePreKey: nil), "a bundle without a one-time prekey")

        /// The mean bytes written by the prekey messages of `indexes`, each from a WAL emptied
        /// just before it, and the blob's length before the first.
        func measure(_ indexes: Range<Int>) async throws -> (walBytes: Double, blobLength: Int?) {
            let blobLength = try preKeysBlobLength(path)
            var total = 0
            for index in indexes {
                let (message, sender) = try await prekeyMessage(index, to: bundle)
                try checkpoint(path)
                let before = try preKeysBlobLength(path)
                _ = try await manager.decrypt(message, from: sender)
                total += try walBytes(path)
                XCTAssertEqual(try preKeysBlobLength(path), before, "the prekeys blob keeps its size when a record is added")
            }
            return (Double(total) / Double(indexes.count), blobLength)
        }
        for index in 0 ..< 10 {
            let (message, sender) = try await prekeyMessage(index, to: bundle)
            _ = try await manager.decrypt(message, from: sender)
        }
        func addRecords(_ count: Int) async throws {
            try await store.addBaseKeyRecords(try (0 ..< count).map { _ in
                BaseKeyRecord(signedPreKeyID: bundle.signedPreKeyID, baseKey: try X25519.PrivateKey().publicKey)
            })
        }
        let few = try await measure(10 ..< 40)                 // 10 to 40 records
        try await addRecords(4960)
        let many = try await measure(40 ..< 70)                // 5,000 to 5,030
        try await addRecords(4940)
        let most = try await measure(70 ..< 100)               // 9,970 to 10,000, the cap
        XCTAssertEqual(many.blobLength, few.blobLength, "the prekeys blob with 5,000 records is as long as with 10")
        XCTAssertEqual(most.blobLength, few.blobLength, "the prekeys blob with 9,970 records is as long as with 10")
        // A B-tree insertion writes its leaf, and now and then splits or rebalances a few pages
        // (a page and its WAL frame header: 1,048 bytes), more often in a deeper tree: from 10
        // records to 10,000 the records' table gains three levels, and a prekey message writes
        // about one page more of it (measured: 1.4 pages of it per message with 10 records, 2.3
        // with 5,000, 2.6 with 10,000). Each message also adds a session and a trust row, whose
        // tables grow alike. Before schema 5 the blob alone grew by 160 kB at 5,000 records.
        XCTAssertLessThanOrEqual(many.walBytes, few.walBytes + 4 * 1048,
                                 "a prekey message with 5,000 records held wrote \(many.walBytes) bytes, with 10 \(few.walBytes)")
        XCTAssertLessThanOrEqual(most.walBytes, few.walBytes + 4 * 1048,
                                 "a prekey message with 9,970 records held wrote \(most.walBytes) bytes, with 10 \(few.walBytes)")

        // The signed prekey's record is full: the next prekey message to it is refused, and the
        // next upkeep replaces it.
        let (refused, sender) = try await prekeyMessage(100, to: bundle)
        await assertThrows(SessionError.unknownPreKey) { _ = try await manager.decrypt(refused, from: sender) }
        let counted = try await store.loadPreKeys()?.recordedBaseKeyCount(signedPreKeyID: bundle.signedPreKeyID)
        XCTAssertEqual(counted, ProtocolLimits.maximumRecordedBaseKeys)
        let rotation = try await manager.maintainPreKeys()
        XCTAssertEqual(rotation.signedPreKey?.id, bundle.signedPreKeyID + 1, "a full record retires the signed prekey early")
    }

    /// The sealed prekeys value keeps its length as prekey messages add records: before schema 5
    /// each record added 32 bytes to it (this test, which uses only API older than schema 5,
    /// failed then: 2,031 bytes after the first record, 3,279 after the 40th).
    func testThePrekeysValueKeepsItsLengthAsRecordsAreAdded() async throws {
        let path = try temporaryStorePath()
        let (store, manager) = try bob(path)
        defer { try? store.close() }
        let upload = try await manager.maintainPreKeys()
        let bundle = try XCTUnwrap(upload.bundle(oneTimePreKey: nil))
        var lengths: [Int] = []
        for index in 0 ..< 40 {
            let (message, sender) = try await prekeyMessage(index, to: bundle)
            _ = try await manager.decrypt(message, from: sender)
            lengths.append(try XCTUnwrap(try preKeysBlobLength(path)))
        }
        XCTAssertEqual(lengths.first, lengths.last, "the prekeys value after 1 record and after 40")
        XCTAssertEqual(Set(lengths).count, 1, "\(lengths)")
    }

    // MARK: Replays across reopening

    /// A prekey message whose session is gone is a replay after the store was closed and
    /// opened again: its record is a row of the file.
    func testAReplayIsRecognisedAfterReopening() async throws {
        let path = try temporaryStorePath()
        var (store, manager) = try bob(path)
        let upload = try await manager.maintainPreKeys()
        let bundle = try XCTUnwrap(upload.bundle(oneTimePreKey: nil))
        let (message, sender) = try await prekeyMessage(1, to: bundle)
        _ = try await manager.decrypt(message, from: sender)
        let recorded = try await store.hasRecordedBaseKey(try X25519.PublicKey(rawRepresentation: Array(message[33 ..< 65])),
                                                          signedPreKeyID: bundle.signedPreKeyID)
        XCTAssertTrue(recorded)
        try await store.deleteSession(for: sender)
        try store.close()

        (store, manager) = try bob(path)
        defer { try? store.close() }
        let rows = try await replayRows(store, signedPreKeyID: bundle.signedPreKeyID)
        XCTAssertEqual(rows.all, 1)
        XCTAssertEqual(rows.underKey, 1)
        await assertThrows(SessionError.duplicateMessage) { _ = try await manager.decrypt(message, from: sender) }
        let session = try await store.loadSession(for: sender)
        XCTAssertNil(session, "the replay created no session")
        let counted = try await store.loadPreKeys()?.recordedBaseKeyCount(signedPreKeyID: bundle.signedPreKeyID)
        XCTAssertEqual(counted, 1, "the replay counted nothing")
        // A new prekey message (a new EK_A) from the same bundle is not a replay.
        let (fresh, freshSender) = try await prekeyMessage(2, to: bundle)
        let received = try await manager.decrypt(fresh, from: freshSender)
        XCTAssertTrue(received.establishedSession)
        let after = try await replayRows(store, signedPreKeyID: bundle.signedPreKeyID)
        XCTAssertEqual(after.all, 2)
    }

    /// The store keeps the prekeys it last read or wrote, but a second store on the file (a
    /// second process) that consumes a one-time prekey and adds a record is seen at once.
    func testPrekeysChangedByAnotherStoreOnTheFileAreReadAgain() async throws {
        let path = try temporaryStorePath()
        let (first, firstManager) = try bob(path)
        defer { try? first.close() }
        let upload = try await firstManager.maintainPreKeys()
        let oneTime = try XCTUnwrap(upload.oneTimePreKeys.first)
        let before = try await first.loadPreKeys()
        XCTAssertNotNil(before?.oneTimePreKey(id: oneTime.id))
        let (second, secondManager) = try bob(path)
        defer { try? second.close() }
        let (message, sender) = try await prekeyMessage(0, to: try XCTUnwrap(upload.bundle(oneTimePreKey: oneTime)))
        _ = try await secondManager.decrypt(message, from: sender)

        let after = try await first.loadPreKeys()
        XCTAssertNil(after?.oneTimePreKey(id: oneTime.id), "the one-time prekey the other store consumed")
        XCTAssertEqual(after?.recordedBaseKeyCount(signedPreKeyID: upload.signedPreKey?.id ?? 0), 1)
        // The first store refuses to consume it again (its own read of the prekeys is fresh).
        try await first.deleteSession(for: sender)
        await assertThrows(SessionError.duplicateMessage) { _ = try await firstManager.decrypt(message, from: sender) }
        let (other, otherSender) = try await prekeyMessage(1, to: try XCTUnwrap(upload.bundle(oneTimePreKey: oneTime)))
        await assertThrows(SessionError.unknownPreKey) { _ = try await firstManager.decrypt(other, from: otherSender) }
    }

    // MARK: Records go with their signed prekey

    /// The upkeep that removes an expired signed prekey deletes its records, and only its
    /// records, in the same transaction; an update that throws deletes nothing.
    func testTheRecordsOfAnExpiredSignedPrekeyAreDeletedWithIt() async throws {
        let path = try temporaryStorePath()
        let clock = FakeClock(Timestamp(secondsSince1970: 1_700_000_000))
        let (store, manager) = try bob(path, clock: clock)
        defer { try? store.close() }
        let firstUpload = try await manager.maintainPreKeys()
        let first = try XCTUnwrap(firstUpload.bundle(oneTimePreKey: nil))
        var messages: [(message: [UInt8], sender: ProtocolAddress)] = []
        for index in 0 ..< 3 {
            let sent = try await prekeyMessage(index, to: first)
            _ = try await manager.decrypt(sent.message, from: sent.sender)
            messages.append(sent)
        }
        clock.advance(bySeconds: Int64(ProtocolLimits.signedPreKeyRotationInterval))
        let rotation = try await manager.maintainPreKeys()
        let second = try XCTUnwrap(rotation.bundle(oneTimePreKey: nil))
        XCTAssertEqual(second.signedPreKeyID, first.signedPreKeyID + 1)
        let (later, laterSender) = try await prekeyMessage(3, to: second)
        _ = try await manager.decrypt(later, from: laterSender)
        for (_, sender) in messages { try await store.deleteSession(for: sender) }
        var rows = try await replayRows(store, signedPreKeyID: first.signedPreKeyID)
        XCTAssertEqual(rows.all, 4)
        XCTAssertEqual(rows.underKey, 3, "the retired signed prekey keeps its records for its grace period")
        await assertThrows(SessionError.duplicateMessage) { _ = try await manager.decrypt(messages[0].message, from: messages[0].sender) }

        // An update that removes the signed prekey and then throws changes nothing.
        await assertThrows(SessionError.invalidPayload) {
            try await store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in
                keys?.removeExpiredSignedPreKeys(now: Timestamp(secondsSince1970: .max))
                throw .invalidPayload
            }
        }
        rows = try await replayRows(store, signedPreKeyID: first.signedPreKeyID)
        XCTAssertEqual(rows.underKey, 3)

        // The grace period passes: the upkeep removes signed prekey 1 and its records.
        clock.advance(bySeconds: Int64(ProtocolLimits.signedPreKeyGracePeriod))
        _ = try await manager.maintainPreKeys()
        rows = try await replayRows(store, signedPreKeyID: first.signedPreKeyID)
        XCTAssertEqual(rows.underKey, 0, "the records went with their signed prekey")
        XCTAssertEqual(rows.all, 1, "the current signed prekey's record stays")
        let kept = try await store.hasRecordedBaseKey(try X25519.PublicKey(rawRepresentation: Array(later[33 ..< 65])),
                                                      signedPreKeyID: second.signedPreKeyID)
        XCTAssertTrue(kept)
        await assertThrows(SessionError.unknownPreKey) { _ = try await manager.decrypt(messages[0].message, from: messages[0].sender) }
    }

    /// Prekeys replaced by other prekeys whose signed prekey has the same id (a device that
    /// generated new prekeys) keep none of the old key's records; prekeys deleted keep none.
    func testReplacedOrDeletedPrekeysKeepNoRecord() async throws {
        let path = try temporaryStorePath()
        let (store, manager) = try bob(path)
        defer { try? store.close() }
        let upload = try await manager.maintainPreKeys()
        let bundle = try XCTUnwrap(upload.bundle(oneTimePreKey: nil))
        let (message, sender) = try await prekeyMessage(0, to: bundle)
        _ = try await manager.decrypt(message, from: sender)
        let identity = try await store.localIdentity()
        let replacement = try LocalPreKeys(identity: identity, now: Timestamp(secondsSince1970: 1_700_000_000))
        XCTAssertEqual(replacement.currentSignedPreKey.key.id, bundle.signedPreKeyID, "the same id, another key")
        try await store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in keys = replacement }
        var rows = try await replayRows(store, signedPreKeyID: bundle.signedPreKeyID)
        XCTAssertEqual(rows.all, 0)
        let newBundle = try XCTUnwrap(replacement.bundle(identityKey: identity.publicKey, oneTimePreKeyID: nil))
        let (newMessage, newSender) = try await prekeyMessage(1, to: newBundle)
        _ = try await manager.decrypt(newMessage, from: newSender)
        rows = try await replayRows(store, signedPreKeyID: bundle.signedPreKeyID)
        XCTAssertEqual(rows.all, 1)
        try await store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in keys = nil }
        rows = try await replayRows(store, signedPreKeyID: bundle.signedPreKeyID)
        XCTAssertEqual(rows.all, 0, "no prekeys, no records")
    }

    // MARK: Migration

    /// `Fixtures/schema4.sqlite` (schema 4: the records inside the prekeys blob) opens at
    /// schema 5 with its five records moved into rows, the blob counting them, and both archived
    /// prekey messages recognised as replays; signed prekey 1's records go with it.
    func testTheSchema4FileMovesItsRecordsIntoRows() async throws {
        let path = try temporaryStorePath()
        try FileManager.default.copyItem(at: fixturesFolder.appendingPathComponent(Schema4Fixture.fileName), to: URL(fileURLWithPath: path))
        let (version, tables) = try withRawDatabase(path) { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version"), try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
        }
        XCTAssertEqual(version, 4)
        XCTAssertFalse(tables.contains("prekey_replay_records"))

        var (store, manager) = try bob(path, address: Schema4Fixture.bob)
        let migrated = try await store.readTransaction { try Int.fetchOne($0, sql: "PRAGMA user_version") }
        XCTAssertEqual(migrated, Schema.currentVersion)
        let identity = try await store.localIdentity()
        XCTAssertEqual(identity.publicKey, try IdentityKeyPair(seed: Schema4Fixture.identitySeed).publicKey)
        let keys = try await store.loadPreKeys()
        XCTAssertEqual(keys?.signedPreKeyEntries.map(\.key.id), [2, 1])
        XCTAssertEqual(keys?.signedPreKeyEntries.map(\.recordedBaseKeyCount), [4, 1], "the blob counts the records it held")
        var rows = try await replayRows(store, signedPreKeyID: 1)
        XCTAssertEqual(rows.all, 5)
        XCTAssertEqual(rows.underKey, 1)

        let archived = try await store.archivedMessages(inConversation: Schema4Fixture.conversation, limit: 10)
        let byID = Dictionary(uniqueKeysWithValues: archived.messages.map { ($0.messageID, $0.plaintext.bytes) })
        let first = try XCTUnwrap(byID[Schema4Fixture.firstMessageID])
        let second = try XCTUnwrap(byID[Schema4Fixture.secondMessageID])
        let expected = [
            BaseKeyRecord(signedPreKeyID: 1, baseKey: try X25519.PublicKey(rawRepresentation: Array(first[33 ..< 65]))),
            BaseKeyRecord(signedPreKeyID: 2, baseKey: try X25519.PublicKey(rawRepresentation: Array(second[33 ..< 65]))),
        ] + (try Schema4Fixture.extraBaseKeys().map { BaseKeyRecord(signedPreKeyID: 2, baseKey: $0) })
        for record in expected {
            let held = try await store.hasRecordedBaseKey(record.baseKey, signedPreKeyID: record.signedPreKeyID)
            XCTAssertTrue(held, "\(record)")
        }
        let misplaced = try await store.hasRecordedBaseKey(expected[2].baseKey, signedPreKeyID: 1)
        XCTAssertFalse(misplaced, "a record is found under its own signed prekey only")

        // Alice 1's session was deleted and her one-time prekey is gone: the record is found
        // first (SPEC §3's order), so her prekey message is a replay, not an unknown prekey.
        await assertThrows(SessionError.duplicateMessage) { _ = try await manager.decrypt(first, from: Schema4Fixture.alice1) }
        try await store.deleteSession(for: Schema4Fixture.alice2)
        await assertThrows(SessionError.duplicateMessage) { _ = try await manager.decrypt(second, from: Schema4Fixture.alice2) }

        // Reopened: nothing moves twice.
        try store.close()
        (store, manager) = try bob(path, address: Schema4Fixture.bob)
        defer { try? store.close() }
        rows = try await replayRows(store, signedPreKeyID: 1)
        XCTAssertEqual(rows.all, 5)
        await assertThrows(SessionError.duplicateMessage) { _ = try await manager.decrypt(first, from: Schema4Fixture.alice1) }

        // Signed prekey 1 expires: its record goes, the other four stay.
        _ = try await store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in
            keys?.removeExpiredSignedPreKeys(now: Timestamp(secondsSince1970: .max))
        }
        rows = try await replayRows(store, signedPreKeyID: 1)
        XCTAssertEqual(rows.all, 4)
        XCTAssertEqual(rows.underKey, 0)
        await assertThrows(SessionError.unknownPreKey) { _ = try await manager.decrypt(first, from: Schema4Fixture.alice1) }
    }
}

/// What `Fixtures/schema4.sqlite` holds (see `Fixtures/README.md`).
enum Schema4Fixture {
    static let fileName = "schema4.sqlite"
    static let identitySeed = [UInt8](repeating: 0x44, count: 32)
    static let bob = address("fixture-bob", 7)
    /// Her prekey message used signed prekey 1 and a one-time prekey; her session was deleted.
    static let alice1 = address("fixture-alice", 1)
    /// Her prekey message used signed prekey 2 and no one-time prekey; her session is kept.
    static let alice2 = address("fixture-alice", 2)
    static let conversation = "fixture-replays"
    static let firstMessageID = "spk1-prekey-message"
    static let secondMessageID = "spk2-prekey-message"
    /// The three other records under signed prekey 2: the public keys of the private keys
    /// 32 × 0x51, 0x52, 0x53.
    static func extraBaseKeys() throws -> [X25519.PublicKey] {
        try (UInt8(0x51) ... 0x53).map { try X25519.PrivateKey(rawRepresentation: [UInt8](repeating: $0, count: 32)).publicKey }
    }
}

private func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
