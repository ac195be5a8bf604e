import BenchmarkHarness
import CSodiumBench
import Foundation
import GRDB
@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification

/// The floor of the `store.sqlite.*` cases: what a team would write without a store designed
/// for sessions, "serialize the record and store it as one blob".
///
/// Bob's `SessionManager` runs over an `InMemoryProtocolStore` and `InMemoryTrustStore` (the
/// same SessionKit work as the library's, state in memory); after every `encrypt` and
/// `decrypt` the whole `SessionRecord.serialized()` of the peer is sealed with
/// XChaCha20-Poly1305 (libsodium, a random 24-byte nonce, the address as associated data,
/// stored as nonce ‖ ciphertext ‖ tag, like the library's sealed values) and written with one
/// `INSERT OR REPLACE` into a GRDB `DatabasePool` on a file with the library's settings: WAL,
/// `synchronous = NORMAL`, 1 KiB pages, `secure_delete` on. So library / floor compares storing
/// a record in parts (one small row per message) with storing it whole, nothing else.
///
/// For the prekey-message rows (`ReplayRecordCases`) it also keeps the prekeys the naive way:
/// `LocalPreKeys.serialized()` followed by every EK_A replay record (`u32(spk_id) ‖ EK_A`, in
/// the order they were added), sealed as one blob in `prekeys (id = 1, blob)` and rewritten
/// whole, with the session, by every prekey message.
final class NaiveBlobStoreDevice: PersistingDevice {
    /// Bob's address.
    let address: ProtocolAddress
    /// Bob's manager.
    let manager: SessionManager
    /// The in-memory state the manager works on.
    let memory: InMemoryProtocolStore
    /// The file (`sessions (address TEXT PRIMARY KEY, record BLOB)`).
    private let pool: DatabasePool
    /// The sealing key (32 random bytes).
    private let key: [UInt8]
    /// The folder of the file, removed after the pool closes.
    private let folder: TemporaryFolder
    /// The EK_A replay records, `u32(spk_id) ‖ EK_A` each (the prekey-message rows).
    private let records = LockedBytes()

    /// A new file in a new temporary folder, `synchronous = NORMAL`.
    convenience init(address: ProtocolAddress) throws { try self.init(address: address, fullDurability: false) }

    /// A new file in a new temporary folder; with `fullDurability`, `synchronous = FULL` (a sync
    /// per commit, as `SQLiteStoreOptions`'s default `.powerLoss`).
    init(address: ProtocolAddress, fullDurability: Bool) throws {
        guard SodiumBackend.isReady else { throw CheckFailure("sodium_init failed") }
        self.address = address
        folder = try TemporaryFolder()
        memory = InMemoryProtocolStore(identity: try IdentityKeyPair())
        manager = SessionManager(store: memory, trust: InMemoryTrustStore(), localAddress: address)
        var key = [UInt8](repeating: 0, count: Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES))
        crypto_aead_xchacha20poly1305_ietf_keygen(&key)
        self.key = key
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA page_size = 1024")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        pool = try DatabasePool(path: folder.path("bob-naive.sqlite"), configuration: configuration)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE sessions (address TEXT PRIMARY KEY NOT NULL, record BLOB NOT NULL)")
            try db.execute(sql: "CREATE TABLE prekeys (id INTEGER PRIMARY KEY NOT NULL, blob BLOB NOT NULL)")
        }
        // The pool sets NORMAL when it enables WAL (after `prepareDatabase`): FULL is set on the
        // writer afterwards, and read back.
        if fullDurability {
            let level = try pool.writeWithoutTransaction { db -> Int in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                return try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
            }
            guard level == 2 else { throw CheckFailure("store.sqlite floor: synchronous is \(level), not FULL (2)") }
        }
    }

    deinit { try? pool.close() }

    func encrypt(_ plaintext: [UInt8], to peer: ProtocolAddress) async throws -> [UInt8] {
        let wire = try await manager.encrypt(plaintext, to: peer)
        try await persist(peer)
        return wire
    }

    func decrypt(_ message: [UInt8], from peer: ProtocolAddress) async throws -> [UInt8] {
        let plaintext = try await manager.decrypt(message, from: peer).plaintext
        try await persist(peer)
        return plaintext
    }

    /// Seals the whole record of `peer` and writes it in one `INSERT OR REPLACE`.
    private func persist(_ peer: ProtocolAddress) async throws {
        guard let record = await memory.loadSession(for: peer) else { throw CheckFailure("store.sqlite floor: no session") }
        var serialized = record.serialized()
        defer { sodium_memzero(&serialized, serialized.count) }
        let sealed = try seal(serialized, peer: peer)
        let name = Self.rowName(peer)
        try await pool.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO sessions (address, record) VALUES (?, ?)", arguments: [name, sealed])
        }
    }

    func checkpoint() throws {
        try pool.writeWithoutTransaction { db in try WALCheckpoint.truncate(db) }
    }

    func recordBytes(of peer: ProtocolAddress) async throws -> (live: [UInt8], persisted: [UInt8]) {
        guard let live = await memory.loadSession(for: peer) else { throw CheckFailure("store.sqlite floor: no session") }
        let name = Self.rowName(peer)
        guard let sealed = try await pool.read({ db in
            try Data.fetchOne(db, sql: "SELECT record FROM sessions WHERE address = ?", arguments: [name])
        }) else { throw CheckFailure("store.sqlite floor: the file holds no session") }
        return (live.serialized(), try open([UInt8](sealed), peer: peer))
    }

    /// The prekeys blob: `u32(len(prekeys)) ‖ LocalPreKeys.serialized() ‖ records`, sealed with
    /// "prekeys" as associated data.
    private func sealedPreKeys() async throws -> Data {
        guard let keys = await memory.loadPreKeys() else { throw CheckFailure("prekey-message floor: no prekeys") }
        var plaintext = keys.serialized()
        defer { sodium_memzero(&plaintext, plaintext.count) }
        var blob = withUnsafeBytes(of: UInt32(plaintext.count).bigEndian) { Array($0) } + plaintext
        defer { sodium_memzero(&blob, blob.count) }
        records.read { blob.append(contentsOf: $0) }
        return try seal(blob, associatedData: Array("prekeys".utf8))
    }

    /// Writes the prekeys blob, alone.
    private func persistPreKeys() async throws {
        let sealed = try await sealedPreKeys()
        try await pool.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO prekeys (id, blob) VALUES (1, ?)", arguments: [sealed])
        }
    }

    /// The row's key: the address in clear (`user.device`).
    private static func rowName(_ peer: ProtocolAddress) -> String { "\(peer.userID).\(peer.deviceID)" }

    /// nonce ‖ XChaCha20-Poly1305(record) with the address as associated data.
    private func seal(_ plaintext: [UInt8], peer: ProtocolAddress) throws -> Data {
        try seal(plaintext, associatedData: Array(Self.rowName(peer).utf8))
    }

    /// nonce ‖ XChaCha20-Poly1305(plaintext) with `ad` as associated data.
    private func seal(_ plaintext: [UInt8], associatedData ad: [UInt8]) throws -> Data {
        let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
        var out = [UInt8](repeating: 0, count: nonceBytes + plaintext.count + tagBytes)
        var written: UInt64 = 0
        let status = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            randombytes_buf(base, nonceBytes)
            return crypto_aead_xchacha20poly1305_ietf_encrypt(
                base + nonceBytes, &written, plaintext, UInt64(plaintext.count), ad, UInt64(ad.count), nil, base, key)
        }
        guard status == 0 else { throw CheckFailure("store.sqlite floor: sealing failed") }
        return Data(out)
    }

    /// Opens what `seal` produced.
    private func open(_ sealed: [UInt8], peer: ProtocolAddress) throws -> [UInt8] {
        try open(sealed, associatedData: Array(Self.rowName(peer).utf8))
    }

    /// Opens what `seal(_:associatedData:)` produced.
    private func open(_ sealed: [UInt8], associatedData ad: [UInt8]) throws -> [UInt8] {
        let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
        guard sealed.count >= nonceBytes + tagBytes else { throw CheckFailure("store.sqlite floor: short blob") }
        var out = [UInt8](repeating: 0, count: sealed.count - nonceBytes - tagBytes)
        var written: UInt64 = 0
        let nonce = Array(sealed[0..<nonceBytes])
        let ciphertext = Array(sealed[nonceBytes...])
        let status = crypto_aead_xchacha20poly1305_ietf_decrypt(
            &out, &written, nil, ciphertext, UInt64(ciphertext.count), ad, UInt64(ad.count), nonce, key)
        guard status == 0 else { throw CheckFailure("store.sqlite floor: the stored record does not open") }
        return out
    }
}

/// The prekey-message rows: the manager works in memory; the session and the prekeys blob
/// (with every record) are rewritten whole, in one transaction, after each prekey message.
extension NaiveBlobStoreDevice: ReplayRecordDevice {
    func localIdentity() async throws -> IdentityKeyPair { await memory.localIdentity() }

    func loadPreKeys() async throws -> LocalPreKeys? { await memory.loadPreKeys() }

    func updatePreKeys(_ update: @escaping @Sendable (inout LocalPreKeys?) throws(SessionError) -> Void) async throws {
        try await memory.updatePreKeys(update)
        try await persistPreKeys()
    }

    func addBaseKeyRecords(_ added: [BaseKeyRecord]) async throws {
        try await memory.addBaseKeyRecords(added)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(added.count * 36)
        for record in added {
            withUnsafeBytes(of: record.signedPreKeyID.bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: record.baseKey.rawRepresentation)
        }
        records.append(bytes)
        try await persistPreKeys()
    }

    func decryptPreKeyMessage(_ message: [UInt8], from peer: ProtocolAddress) async throws -> [UInt8] {
        let plaintext = try await manager.decrypt(message, from: peer).plaintext
        // SPEC §4: 0x22 ‖ IK_A (32) ‖ EK_A (32) ‖ u32(spk_id) ‖ ...: the record the manager added.
        records.append(Array(message[65 ..< 69]) + Array(message[33 ..< 65]))
        guard let record = await memory.loadSession(for: peer) else { throw CheckFailure("prekey-message floor: no session") }
        var serialized = record.serialized()
        defer { sodium_memzero(&serialized, serialized.count) }
        let sealedSession = try seal(serialized, peer: peer)
        let sealedPreKeys = try await sealedPreKeys()
        let name = Self.rowName(peer)
        try await pool.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO sessions (address, record) VALUES (?, ?)", arguments: [name, sealedSession])
            try db.execute(sql: "INSERT OR REPLACE INTO prekeys (id, blob) VALUES (1, ?)", arguments: [sealedPreKeys])
        }
        return plaintext
    }

    func persists(_ record: BaseKeyRecord) async throws -> Bool {
        guard let sealed = try await pool.read({ db in try Data.fetchOne(db, sql: "SELECT blob FROM prekeys WHERE id = 1") }) else {
            return false
        }
        let blob = try open([UInt8](sealed), associatedData: Array("prekeys".utf8))
        guard blob.count >= 4 else { throw CheckFailure("prekey-message floor: short prekeys blob") }
        let length = blob.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        let wanted = withUnsafeBytes(of: record.signedPreKeyID.bigEndian) { Array($0) } + record.baseKey.rawRepresentation
        var offset = 4 + length
        while offset + 36 <= blob.count {
            if Array(blob[offset ..< offset + 36]) == wanted { return true }
            offset += 36
        }
        return false
    }
}

/// Bytes appended from several threads (the records of the floor's prekeys blob).
final class LockedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8] = []

    func append(_ more: [UInt8]) { lock.withLock { bytes.append(contentsOf: more) } }

    func read(_ body: ([UInt8]) -> Void) { lock.withLock { body(bytes) } }
}
