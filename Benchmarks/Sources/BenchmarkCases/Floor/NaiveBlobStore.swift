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

    /// The row's key: the address in clear (`user.device`).
    private static func rowName(_ peer: ProtocolAddress) -> String { "\(peer.userID).\(peer.deviceID)" }

    /// nonce ‖ XChaCha20-Poly1305(record) with the address as associated data.
    private func seal(_ plaintext: [UInt8], peer: ProtocolAddress) throws -> Data {
        let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
        var out = [UInt8](repeating: 0, count: nonceBytes + plaintext.count + tagBytes)
        let ad = Array(Self.rowName(peer).utf8)
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
        let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
        guard sealed.count >= nonceBytes + tagBytes else { throw CheckFailure("store.sqlite floor: short blob") }
        var out = [UInt8](repeating: 0, count: sealed.count - nonceBytes - tagBytes)
        let ad = Array(Self.rowName(peer).utf8)
        var written: UInt64 = 0
        let nonce = Array(sealed[0..<nonceBytes])
        let ciphertext = Array(sealed[nonceBytes...])
        let status = crypto_aead_xchacha20poly1305_ietf_decrypt(
            &out, &written, nil, ciphertext, UInt64(ciphertext.count), ad, UInt64(ad.count), nonce, key)
        guard status == 0 else { throw CheckFailure("store.sqlite floor: the stored record does not open") }
        return out
    }
}
