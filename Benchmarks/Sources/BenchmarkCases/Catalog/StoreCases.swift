import BenchmarkHarness
@_spi(Testing) import SessionKit

/// SessionKitSQLite's store under a `SessionManager` (group `store`): a message encrypted or
/// decrypted and persisted to an SQLite file (`synchronous = NORMAL`), and the bytes each
/// message writes to the file and its WAL.
///
/// - library: Bob's `SessionManager` over a `SQLiteProtocolStore` (also its trust store),
///   `SQLiteStoreOptions(durability: .processCrash)` (`LibrarySQLiteDevice`): a record is
///   stored in parts, and a message rewrites its small record row;
/// - floor: the same manager over in-memory state, plus the whole `SessionRecord.serialized()`
///   sealed (XChaCha20-Poly1305) and written with one `INSERT OR REPLACE` per message, through
///   GRDB on a file with the same settings (`NaiveBlobStoreDevice`).
///
/// Alice, the peer, is an in-memory manager; the messages Bob decrypts are encrypted untimed
/// before each batch. The time rows are in ns/op on the wall clock (the work runs on the
/// concurrency runtime's threads). The bytes rows are in bytes per message
/// (`CaseUnit.bytesPerMessage`): the bytes the process passed to `write`/`pwrite` during a
/// batch of messages decrypted in order, ending with a `wal_checkpoint(TRUNCATE)`, over the
/// batch's size.
enum StoreCases {
    /// A message encrypted by Bob and persisted.
    static let encrypt = "store.sqlite.encrypt"
    /// A message decrypted by Bob and persisted.
    static let decrypt = "store.sqlite.decrypt"
    /// Bytes written per message decrypted, fresh session.
    static let bytesFresh = "store.sqlite.bytes-per-message.fresh"
    /// Bytes written per message decrypted, 40 previous sessions and 2,000 skipped keys.
    static let bytesHeavy = "store.sqlite.bytes-per-message.heavy"

    /// `encrypt` with a sync per commit on both sides (`.powerLoss`, `synchronous = FULL`).
    static let encryptFull = "store.sqlite.encrypt.synchronous-full"
    /// `decrypt` with a sync per commit on both sides.
    static let decryptFull = "store.sqlite.decrypt.synchronous-full"
    /// A message decrypted by Bob holding 40 previous sessions and 2,000 skipped keys, against
    /// the same with a fresh peer.
    static let decryptHistory = "store.sqlite.decrypt.history-40-sessions-2000-skipped"
    /// A message decrypted by Bob holding 41 sessions of 2,000 skipped keys each (the largest
    /// record), against the same with a fresh peer.
    static let decryptLargest = "store.sqlite.decrypt.history-41-sessions-2000-skipped-each"
    /// The first message decrypted by a store just opened on Bob's file, with the largest record.
    static let openLargest = "store.sqlite.first-message-after-open.history-41-sessions-2000-skipped-each"

    /// The store takes at most 1.5 × the naive whole-blob store's time per message, at equal
    /// durability (issue 18: one trip through the database per message where possible).
    static let timeTarget = RatioTargets(floor: 1.5)
    /// At most 2 KiB written per message, whatever the device holds (an absolute target).
    static let bytesTarget = RatioTargets(libraryMaximum: 2048)

    static var all: [BenchmarkCase] {
        let plaintext = Fixture.bytes(64)
        return [
            BenchmarkCase.probing(
                name: encrypt,
                summary: "wall-clock ns: Bob's SessionManager encrypts 64 bytes to Alice and persists the record "
                    + "(SQLiteProtocolStore, synchronous=NORMAL, WAL) vs in-memory state + the whole record sealed "
                    + "in one INSERT OR REPLACE (GRDB, same settings); fresh session",
                group: .store, targets: timeTarget, clock: .wall,
                library: { try conversation(LibrarySQLiteDevice.self, heavy: false, plaintext).encryptProbe() },
                floor: { try conversation(NaiveBlobStoreDevice.self, heavy: false, plaintext).encryptProbe() },
                swiftCrypto: nil),
            BenchmarkCase.probing(
                name: decrypt,
                summary: "wall-clock ns: Bob's SessionManager decrypts a 64-byte message from Alice (in order) and "
                    + "persists the record (SQLiteProtocolStore, synchronous=NORMAL, WAL) vs in-memory state + the "
                    + "whole record sealed in one INSERT OR REPLACE (GRDB, same settings); fresh session",
                group: .store, targets: timeTarget, clock: .wall,
                library: { try conversation(LibrarySQLiteDevice.self, heavy: false, plaintext).decryptProbe(checkpointAfterBatch: false) },
                floor: { try conversation(NaiveBlobStoreDevice.self, heavy: false, plaintext).decryptProbe(checkpointAfterBatch: false) },
                swiftCrypto: nil),
            BenchmarkCase.probing(
                name: encryptFull,
                summary: "wall-clock ns: as store.sqlite.encrypt, both files with synchronous=FULL (the library's "
                    + "default durability, .powerLoss: a sync per commit)",
                group: .store, targets: timeTarget, clock: .wall,
                library: { try fullConversation(library: true, plaintext).encryptProbe() },
                floor: { try fullConversation(library: false, plaintext).encryptProbe() },
                swiftCrypto: nil),
            BenchmarkCase.probing(
                name: decryptFull,
                summary: "wall-clock ns: as store.sqlite.decrypt, both files with synchronous=FULL (the library's "
                    + "default durability, .powerLoss: a sync per commit)",
                group: .store, targets: timeTarget, clock: .wall,
                library: { try fullConversation(library: true, plaintext).decryptProbe(checkpointAfterBatch: false) },
                floor: { try fullConversation(library: false, plaintext).decryptProbe(checkpointAfterBatch: false) },
                swiftCrypto: nil),
            history(name: decryptHistory, skippedOnEverySession: false, maximum: 1.25, plaintext),
            history(name: decryptLargest, skippedOnEverySession: true, maximum: 1.5, plaintext),
            BenchmarkCase.probing(
                name: openLargest,
                summary: "wall-clock ns: a SQLiteProtocolStore just opened on Bob's file (nothing cached; the open "
                    + "is untimed) and a new SessionManager over it decrypt one message from Alice; Bob holds 41 "
                    + "sessions of 2,000 skipped keys each; floor: the same with a fresh peer; target ≤ 10 ms",
                group: .store, targets: RatioTargets(libraryMaximum: 10_000_000), clock: .wall,
                library: {
                    try StoreConversation(
                        bob: try LibrarySQLiteDevice(address: try ProtocolAddress(userID: "bob", deviceID: 7)), heavy: true,
                        skippedOnEverySession: true, plaintext: plaintext
                    ).reopenDecryptProbe()
                },
                floor: { try conversation(LibrarySQLiteDevice.self, heavy: false, plaintext).reopenDecryptProbe() },
                swiftCrypto: nil),
            bytes(
                name: bytesFresh, heavy: false, plaintext,
                summary: "bytes written to the database file and its WAL per message decrypted and persisted "
                    + "(/proc/self/io wchar, batches ending with wal_checkpoint(TRUNCATE)), fresh session; "
                    + "floor: the whole record as one sealed blob; target ≤ 2,048"),
            bytes(
                name: bytesHeavy, heavy: true, plaintext,
                summary: "bytes written to the database file and its WAL per message decrypted and persisted "
                    + "(/proc/self/io wchar, batches ending with wal_checkpoint(TRUNCATE)), Bob holding 40 previous "
                    + "sessions and 2,000 skipped keys; floor: the whole record as one sealed blob; target ≤ 2,048"),
        ]
    }

    /// A fresh conversation whose Bob syncs every commit (`synchronous = FULL`).
    static func fullConversation(library: Bool, _ plaintext: [UInt8]) throws -> AnyStoreConversation {
        let address = try ProtocolAddress(userID: "bob", deviceID: 7)
        if library {
            return AnyStoreConversation(
                try StoreConversation(bob: try LibrarySQLiteDevice(address: address, durability: .powerLoss), heavy: false, plaintext: plaintext))
        }
        return AnyStoreConversation(
            try StoreConversation(bob: try NaiveBlobStoreDevice(address: address, fullDurability: true), heavy: false, plaintext: plaintext))
    }

    /// A time row whose floor is the library itself with a fresh peer: Bob's time per message
    /// with a history (40 previous sessions, and 2,000 skipped keys on the current one or on
    /// every one) must stay within `maximum` × the fresh peer's.
    static func history(name: String, skippedOnEverySession: Bool, maximum: Double, _ plaintext: [UInt8]) -> BenchmarkCase {
        .probing(
            name: name,
            summary: "wall-clock ns: Bob's SessionManager decrypts a 64-byte message from Alice (in order) and persists "
                + "the record (SQLiteProtocolStore, synchronous=NORMAL, WAL), Bob holding 40 previous sessions and "
                + (skippedOnEverySession ? "2,000 skipped keys on each of the 41 sessions" : "2,000 skipped keys")
                + "; floor: the same store with a fresh peer (the cost must follow the change, not the history)",
            group: .store, targets: RatioTargets(floor: maximum), clock: .wall,
            library: {
                try StoreConversation(
                    bob: try LibrarySQLiteDevice(address: try ProtocolAddress(userID: "bob", deviceID: 7)), heavy: true,
                    skippedOnEverySession: skippedOnEverySession, plaintext: plaintext
                ).decryptProbe(checkpointAfterBatch: false)
            },
            floor: { try conversation(LibrarySQLiteDevice.self, heavy: false, plaintext).decryptProbe(checkpointAfterBatch: false) },
            swiftCrypto: nil)
    }

    /// A bytes-per-message case: messages decrypted in order, each batch ending with a
    /// TRUNCATE checkpoint. Refuses to build where `/proc/self/io` cannot be read.
    static func bytes(name: String, heavy: Bool, _ plaintext: [UInt8], summary: String) -> BenchmarkCase {
        func probe<Device: PersistingDevice & AddressedDevice>(_ device: Device.Type) throws -> Probe {
            guard ProcessWriteCounter.isAvailable else {
                throw CheckFailure("\(name): needs /proc/self/io (Linux) to count the bytes written")
            }
            let conversation = try conversation(device, heavy: heavy, plaintext)
            if heavy {
                let shape = try conversation.bobRecordShape()
                try CheckFailure.expect(shape.previous == 40 && shape.skipped == 2000,
                                        "\(name): Bob's record holds \(shape.previous) previous sessions and \(shape.skipped) skipped keys")
            }
            return conversation.decryptProbe(checkpointAfterBatch: true)
        }
        return .probing(
            name: name, summary: summary, group: .store, targets: bytesTarget, unit: .bytesPerMessage,
            library: { try probe(LibrarySQLiteDevice.self) },
            floor: { try probe(NaiveBlobStoreDevice.self) },
            swiftCrypto: nil)
    }

    /// A new conversation with a new Bob of type `device` (a new file in a new temporary folder).
    static func conversation<Device: PersistingDevice & AddressedDevice>(
        _ device: Device.Type, heavy: Bool, _ plaintext: [UInt8]
    ) throws -> StoreConversation<Device> {
        try StoreConversation(bob: try Device(address: try ProtocolAddress(userID: "bob", deviceID: 7)), heavy: heavy, plaintext: plaintext)
    }
}

/// A `PersistingDevice` created with a new file for an address.
protocol AddressedDevice {
    /// A new device at `address` with a new file in a new temporary folder.
    init(address: ProtocolAddress) throws
}

extension LibrarySQLiteDevice: AddressedDevice {}
extension NaiveBlobStoreDevice: AddressedDevice {}

/// The probes of a `StoreConversation` whatever its device type.
struct AnyStoreConversation {
    let encryptProbe: () -> Probe
    let decryptProbe: (_ checkpointAfterBatch: Bool) -> Probe

    init<Device: PersistingDevice>(_ conversation: StoreConversation<Device>) {
        encryptProbe = { conversation.encryptProbe() }
        decryptProbe = { conversation.decryptProbe(checkpointAfterBatch: $0) }
    }

    func decryptProbe(checkpointAfterBatch: Bool) -> Probe { decryptProbe(checkpointAfterBatch) }
}
