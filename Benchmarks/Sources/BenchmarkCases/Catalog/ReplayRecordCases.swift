import BenchmarkHarness
import Foundation
@_spi(Testing) import SessionKit
import SignalPrimitives
import Verification

/// Prekey messages on the SQLite store with 10 and with 100,000 EK_A replay records held
/// (group `store`, issue 18): the time and the bytes written per prekey message must not grow
/// with the records.
///
/// Bob holds 11 signed prekeys (the current one and 10 retired within their grace period) and
/// either 10 records (one under each retired signed prekey) or 100,000 (10,000, the cap, under
/// each). Every timed message is a prekey message from a new contact (a new identity, a bundle
/// without a one-time prekey), prepared untimed, that Bob decrypts and persists: a new session,
/// a trust record, one more record under the current signed prekey.
///
/// - library: Bob's `SessionManager` over a `SQLiteProtocolStore` (`LibrarySQLiteDevice`):
///   the records are rows of their own, one looked up and one added per message;
/// - floor: the same manager over in-memory state (`NaiveBlobStoreDevice`), plus, per message,
///   the session record and the prekeys with every record (`LocalPreKeys.serialized()` followed
///   by `u32(spk_id) ‖ EK_A` per record) sealed and written as two blobs in one transaction:
///   records kept in the prekeys blob, as SessionKitSQLite kept them before schema 5.
enum ReplayRecordCases {
    /// Time per prekey message with 10 records held.
    static let timeFew = "store.sqlite.prekey-message.10-records"
    /// Time per prekey message with 100,000 records held.
    static let timeMany = "store.sqlite.prekey-message.100000-records"
    /// Bytes written per prekey message with 10 records held.
    static let bytesFew = "store.sqlite.bytes-per-prekey-message.10-records"
    /// Bytes written per prekey message with 100,000 records held.
    static let bytesMany = "store.sqlite.bytes-per-prekey-message.100000-records"

    /// The signed prekeys retired before the measured messages (each holds a tenth of the records).
    static let retiredSignedPreKeys = 10

    static var all: [BenchmarkCase] {
        let plaintext = Fixture.bytes(64)
        return [
            time(name: timeFew, records: 10, plaintext, targets: RatioTargets(floor: 1.10)),
            time(name: timeMany, records: 100_000, plaintext,
                 targets: RatioTargets(floor: 1.10, baseline: BaselineTarget(caseName: timeFew, maximum: 1.25))),
            bytes(name: bytesFew, records: 10, plaintext, targets: RatioTargets(floor: 1.10)),
            bytes(name: bytesMany, records: 100_000, plaintext,
                  targets: RatioTargets(floor: 1.10, baseline: BaselineTarget(caseName: bytesFew, maximum: 1.10))),
        ]
    }

    static func summary(_ records: Int) -> String {
        "Bob decrypts a prekey message from a new contact (no one-time prekey) and persists it, holding 11 signed prekeys and "
            + "\(records) EK_A replay records (SQLiteProtocolStore, synchronous=NORMAL, WAL) vs in-memory state + the session "
            + "and the prekeys with every record as two sealed blobs"
    }

    static func time(name: String, records: Int, _ plaintext: [UInt8], targets: RatioTargets) -> BenchmarkCase {
        .probing(
            name: name, summary: "wall-clock ns: " + summary(records), group: .store, targets: targets, clock: .wall,
            library: { try PreKeyFlood(bob: try device(LibrarySQLiteDevice.self), records: records, plaintext: plaintext).probe(checkpointAfterBatch: false) },
            floor: { try PreKeyFlood(bob: try device(NaiveBlobStoreDevice.self), records: records, plaintext: plaintext).probe(checkpointAfterBatch: false) },
            swiftCrypto: nil)
    }

    static func bytes(name: String, records: Int, _ plaintext: [UInt8], targets: RatioTargets) -> BenchmarkCase {
        func probe<Device: ReplayRecordDevice>(_ type: Device.Type) throws -> Probe {
            guard ProcessWriteCounter.isAvailable else {
                throw CheckFailure("\(name): needs /proc/self/io (Linux) to count the bytes written")
            }
            return try PreKeyFlood(bob: try device(type), records: records, plaintext: plaintext).probe(checkpointAfterBatch: true)
        }
        return .probing(
            name: name, summary: "bytes written (wchar, batches ending with wal_checkpoint(TRUNCATE)) per message: " + summary(records),
            group: .store, targets: targets, unit: .bytesPerMessage,
            library: { try probe(LibrarySQLiteDevice.self) }, floor: { try probe(NaiveBlobStoreDevice.self) }, swiftCrypto: nil)
    }

    /// A new Bob of type `type` (a new file in a new temporary folder).
    static func device<Device: ReplayRecordDevice>(_ type: Device.Type) throws -> Device {
        try Device(address: try ProtocolAddress(userID: "bob", deviceID: 7))
    }
}

/// A Bob whose prekey messages are persisted with their EK_A replay records.
protocol ReplayRecordDevice: PersistingDevice, AddressedDevice {
    /// The device's identity.
    func localIdentity() async throws -> IdentityKeyPair
    /// The stored prekeys.
    func loadPreKeys() async throws -> LocalPreKeys?
    /// Runs `update` on the stored prekeys and persists the result.
    func updatePreKeys(_ update: @escaping @Sendable (inout LocalPreKeys?) throws(SessionError) -> Void) async throws
    /// Adds `records` as prekey messages would (each counted under its signed prekey) and persists them.
    func addBaseKeyRecords(_ records: [BaseKeyRecord]) async throws
    /// Decrypts a prekey message and persists everything it changed; returns the plaintext.
    func decryptPreKeyMessage(_ message: [UInt8], from peer: ProtocolAddress) async throws -> [UInt8]
    /// Whether the file (read anew) holds `record`.
    func persists(_ record: BaseKeyRecord) async throws -> Bool
}

/// Bob with 11 signed prekeys and the records, receiving prekey messages from new contacts.
final class PreKeyFlood<Device: ReplayRecordDevice> {
    let bob: Device
    /// The bundle every contact starts from: the current signed prekey, no one-time prekey.
    let bundle: PreKeyBundle
    let plaintext: [UInt8]
    /// Prekey messages Bob decrypts in the next batch, with their senders.
    private var pending: [(message: [UInt8], sender: ProtocolAddress)] = []
    private var nextContact = 0

    /// Bob's prekeys, 10 rotations (signed prekeys 1…10 retired, 11 current), and `records`
    /// records spread evenly over the retired ones; then a checkpoint.
    init(bob: Device, records: Int, plaintext: [UInt8]) throws {
        let retired = ReplayRecordCases.retiredSignedPreKeys
        bundle = try runBlocking { () async throws -> PreKeyBundle in
            _ = try await bob.manager.maintainPreKeys()
            let identity = try await bob.localIdentity()
            let now = SystemWallClock().now()
            try await bob.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in
                guard var held = keys else { throw .invalidPayload }
                for _ in 0 ..< retired { try held.rotateSignedPreKey(identity: identity, now: now) }
                keys = held
            }
            let perKey = records / retired
            var added: [BaseKeyRecord] = []
            added.reserveCapacity(records)
            for spk in 1 ... UInt32(retired) {
                for index in 0 ..< UInt32(perKey) {
                    // u32(spk) ‖ u32(index) ‖ 24 × 0x11: distinct canonical X25519 encodings.
                    var bytes = [UInt8](repeating: 0x11, count: 32)
                    withUnsafeBytes(of: spk.bigEndian) { bytes.replaceSubrange(0 ..< 4, with: $0) }
                    withUnsafeBytes(of: index.bigEndian) { bytes.replaceSubrange(4 ..< 8, with: $0) }
                    added.append(BaseKeyRecord(signedPreKeyID: spk, baseKey: try X25519.PublicKey(rawRepresentation: bytes)))
                }
            }
            try await bob.addBaseKeyRecords(added)
            guard let keys = try await bob.loadPreKeys(), keys.signedPreKeyEntries.count == retired + 1,
                  keys.signedPreKeyEntries.dropFirst().allSatisfy({ $0.recordedBaseKeyCount == perKey }),
                  let bundle = keys.bundle(identityKey: identity.publicKey, oneTimePreKeyID: nil)
            else { throw CheckFailure("prekey-message: Bob's prekeys are not 11 signed prekeys holding \(records) records") }
            return bundle
        }
        try bob.checkpoint()
        self.bob = bob
        self.plaintext = plaintext
    }

    /// `count` prekey messages from new contacts (untimed: in memory, nothing written).
    func prepare(_ count: Int) throws {
        let (bundle, plaintext, bob, first) = (bundle, plaintext, bob.address, nextContact)
        nextContact += count
        pending = try runBlocking { () async throws -> [(message: [UInt8], sender: ProtocolAddress)] in
            var messages: [(message: [UInt8], sender: ProtocolAddress)] = []
            messages.reserveCapacity(count)
            for index in first ..< first + count {
                let sender = try ProtocolAddress(userID: "contact-\(index)", deviceID: 1)
                let contact = SessionManager(
                    store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: sender)
                try await contact.processBundle(bundle, for: bob)
                messages.append((try await contact.encrypt(plaintext, to: bob), sender))
            }
            return messages
        }
    }

    /// Bob decrypts the prepared messages, each one persisted; checks every plaintext.
    func decryptPending() throws {
        let (messages, bob, plaintext) = (pending, bob, plaintext)
        pending = []
        try runBlocking { () async throws -> Void in
            for (message, sender) in messages {
                guard try await bob.decryptPreKeyMessage(message, from: sender) == plaintext else {
                    throw CheckFailure("prekey-message: a message decrypted to other bytes")
                }
            }
        }
    }

    /// The timed workload (a batch of prekey messages, with a TRUNCATE checkpoint for the bytes
    /// rows) and its output: one prekey message decrypted, after checking that the file holds
    /// its record.
    func probe(checkpointAfterBatch: Bool) -> Probe {
        Probe(
            workload: Workload(
                prepare: { n in try self.prepare(n) },
                run: { _ in
                    try self.decryptPending()
                    if checkpointAfterBatch { try self.bob.checkpoint() }
                }),
            output: {
                try self.prepare(1)
                guard let message = self.pending.first?.message else { throw CheckFailure("prekey-message: nothing prepared") }
                try self.decryptPending()
                if checkpointAfterBatch { try self.bob.checkpoint() }
                // SPEC §4: 0x22 ‖ IK_A (32) ‖ EK_A (32) ‖ u32(spk_id) ‖ ...
                let record = BaseKeyRecord(
                    signedPreKeyID: self.bundle.signedPreKeyID, baseKey: try X25519.PublicKey(rawRepresentation: Array(message[33 ..< 65])))
                let bob = self.bob
                let persisted = try runBlocking { () async throws -> Bool in try await bob.persists(record) }
                try CheckFailure.expect(persisted, "prekey-message: the file does not hold the message's replay record")
                return self.plaintext
            })
    }
}
