#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SessionKitAge
import SignalPrimitives
import Verification

/// Account restore (SPEC §10): a new store from an export.
extension SQLiteProtocolStore {
    /// The most items written per transaction while restoring.
    static let restoreBatchSize = 256

    /// Builds a new store at `storePath` from the export at `exportPath`, opened with the
    /// first of `identities` that matches (an `AgeX25519Identity` parsed from the recovery
    /// code, or an `AgeScryptIdentity` for the passphrase), and returns what was imported and
    /// each item skipped with the reason.
    ///
    /// The new store holds the export's identity, draws a new registration id (SPEC §9) and
    /// starts without sessions or prekeys: the restored device publishes new prekeys and starts
    /// new sessions. It is built under a temporary name in the target's folder while the file
    /// is decrypted and read (a batch of items per transaction, so memory stays bounded
    /// whatever the archive's size), closed, and linked to `storePath` only after the age
    /// payload's final chunk verified; on any error it is removed, and nothing exists at
    /// `storePath`.
    ///
    /// The export's first item must be the identity. A later line that this version cannot
    /// import (an unknown kind, a malformed item, a second identity, a repeated trust record or
    /// message) is skipped and listed in the report; the restore goes on.
    ///
    /// Who made the file: anyone who knows a recovery code's *recipient* (an app that keeps it
    /// to export again later, a server it was sent to) can write a file the code opens, with
    /// an identity and "verified" contacts of its choosing. So a contact's `verified` status is
    /// imported only from an export that is authenticated: one opened with a passphrase (an
    /// age `scrypt` stanza can only be written by someone who knows the passphrase), or one
    /// whose identity is `expectedIdentity` (its seed is in the file, so only the account's
    /// own device can have written it). From any other export a verified contact is restored
    /// as trusted, not verified (`AccountRestoreReport.unverifiedContactCount`): compare the
    /// safety numbers again. Pass `expectedIdentity` whenever the app knows the account's
    /// identity key (your server's record of it, or the key the user's contacts have).
    /// - Parameters:
    ///   - exportPath: the export file (binary or armored).
    ///   - identities: what may open it: the recovery code (`AgeX25519Identity`) or the
    ///     passphrase (`AgeScryptIdentity`).
    ///   - storePath: where the new store goes (nothing may be there yet).
    ///   - storageKey: the new store's storage key.
    ///   - expectedIdentity: the account's identity key, when known: an export under another
    ///     identity is refused (`AccountExportError.identity`), and a matching one is
    ///     authenticated.
    ///   - options: the new store's options (it is always created).
    /// - Throws: `AccountExportError.targetExists` when anything is at `storePath` (or its
    ///   `-wal`/`-shm` names); `.wrongKey` when no identity opens the file; `.damaged` when the
    ///   file or its header line is damaged; `.unknownFormat` or `.unsupportedVersion` for a
    ///   header this library does not read; `.identity` when the first item is not a usable
    ///   identity or is not `expectedIdentity`; `.file` when a file cannot be read or written;
    ///   `.store` when the new store fails.
    public static func restoreAccount(
        from exportPath: String, identities: [any AgeIdentity], to storePath: String, storageKey: StorageKey,
        expectedIdentity: Ed25519.PublicKey? = nil, options: SQLiteStoreOptions = SQLiteStoreOptions()
    ) async throws(AccountExportError) -> AccountRestoreReport {
        for suffix in ["", "-wal", "-shm", "-journal"] where ExportFiles.exists(storePath + suffix) {
            throw .targetExists(path: storePath + suffix)
        }
        var createOptions = options
        createOptions.createIfMissing = true
        let restore = AccountRestore(
            temporaryPath: ExportFiles.temporaryPath(for: storePath, suffix: ".restore-"), storageKey: storageKey, options: createOptions,
            expectedIdentity: expectedIdentity,
            // Only a passphrase holder can write a file that only passphrases open.
            openedByPassphraseOnly: !identities.isEmpty && identities.allSatisfy { $0 is AgeScryptIdentity })
        do throws(AccountExportError) {
            let input = try ExportInputFile(path: exportPath, pieceSize: 64 * 1024)
            let stream = AgeDecryptingStream(identities: identities)
            var reader = ExportLineReader()
            var events: [ExportLineReader.Event] = []
            var failure: AccountExportError?
            let release = { (plaintext: UnsafeRawBufferPointer) in
                guard failure == nil else { return }
                failure = reader.feed(plaintext)
                events += reader.takeEvents()
            }
            // The age stream calls back synchronously and the store writes asynchronously: the
            // events of each piece are collected, then imported.
            while try input.next({ (piece: UnsafeRawBufferPointer) throws(AccountExportError) in
                do throws(AgeError) { try stream.update(piece, releaseBytes: release) } catch { throw .reading(error) }
            }) {
                if let failure { throw failure }
                try await restore.handle(events)
                events.removeAll(keepingCapacity: true)
            }
            do throws(AgeError) { try stream.finish(releaseBytes: release) } catch { throw .reading(error) }
            if let failure { throw failure }
            do throws(ExportFormatError) { try reader.finish() } catch { throw .reading(error) }
            events += reader.takeEvents()
            try await restore.handle(events)
            return try await restore.finish(at: storePath, largestLine: reader.largestLineByteCount)
        } catch {
            restore.discard()
            throw error
        }
    }
}

extension ExportLineReader {
    /// `update`, with its error as an `AccountExportError` (`nil` when none).
    mutating func feed(_ plaintext: UnsafeRawBufferPointer) -> AccountExportError? {
        do throws(ExportFormatError) {
            try update(plaintext)
            return nil
        } catch {
            return .reading(error)
        }
    }
}

/// The state of one restore: the new store (once the identity arrived), the batch waiting to
/// be written, and the report so far.
private final class AccountRestore {
    let temporaryPath: String
    let storageKey: StorageKey
    let options: SQLiteStoreOptions
    var store: SQLiteProtocolStore?
    var header: ExportHeader?
    var trustRows: [(userID: String, record: TrustRecord, line: Int)] = []
    var messageRows: [(row: SQLiteProtocolStore.SealedArchiveRow, line: Int)] = []
    var importedUsers = Set<[UInt8]>()
    var trustCount = 0
    var messageCount = 0
    var skipped: [AccountRestoreSkippedItem] = []
    var largestBatch = 0
    let expectedIdentity: Ed25519.PublicKey?
    /// Whether the export is known to come from the account's owner (a passphrase opened it,
    /// or its identity is the expected one): only then is a `verified` status imported.
    var isAuthenticated: Bool
    /// Verified contacts restored as trusted because the export is not authenticated.
    var unverifiedContactCount = 0

    init(
        temporaryPath: String, storageKey: StorageKey, options: SQLiteStoreOptions, expectedIdentity: Ed25519.PublicKey?,
        openedByPassphraseOnly: Bool
    ) {
        self.temporaryPath = temporaryPath
        self.storageKey = storageKey
        self.options = options
        self.expectedIdentity = expectedIdentity
        isAuthenticated = openedByPassphraseOnly
    }

    func skip(_ line: Int, _ kind: String?, _ reason: String) {
        skipped.append(AccountRestoreSkippedItem(line: line, kind: kind, reason: reason))
    }

    /// Imports the events of one piece.
    func handle(_ events: [ExportLineReader.Event]) async throws(AccountExportError) {
        for event in events {
            switch event {
            case let .header(value):
                header = value
            case let .skipped(line, kind, reason):
                guard store != nil else { throw .identity("line \(line) is not an identity (\(reason))") }
                skip(line, kind, reason)
            case let .item(line, item):
                guard let store else {
                    guard case let .identity(seed) = item else { throw .identity("the first item is a \(item.kind), not the identity") }
                    try createStore(seed)
                    continue
                }
                switch item {
                case .identity:
                    skip(line, item.kind, "a second identity (the first one was restored)")
                case let .trust(userID, record):
                    guard importedUsers.insert(Array(userID.utf8)).inserted else {
                        skip(line, item.kind, "a second trust record for the same user")
                        continue
                    }
                    if record.status == .verified, !isAuthenticated {
                        // An unauthenticated file cannot vouch for a verification.
                        unverifiedContactCount += 1
                        trustRows.append((userID, record.withoutVerification(), line))
                    } else {
                        trustRows.append((userID, record, line))
                    }
                case let .message(conversationID, messageID, timestamp, body):
                    do {
                        let row = try body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(SQLiteStoreError) in
                            try store.sealArchivedMessage(bytes, messageID: messageID, conversationID: conversationID, timestamp: timestamp)
                        }
                        messageRows.append((row, line))
                    } catch {
                        skip(line, item.kind, "\(error)")
                    }
                }
                if trustRows.count + messageRows.count >= SQLiteProtocolStore.restoreBatchSize { try await flush() }
            }
        }
    }

    private func createStore(_ seed: IdentityKeyPairSeed) throws(AccountExportError) {
        let identity: IdentityKeyPair
        do { identity = try seed.seed.withUnsafeBytes { try IdentityKeyPair(seed: Array($0)) } } catch {
            throw .identity("the seed is not an Ed25519 seed")
        }
        guard identity.publicKey.rawRepresentation == seed.publicKey else {
            throw .identity("the public key does not belong to the seed")
        }
        if let expectedIdentity {
            guard identity.publicKey == expectedIdentity else { throw .identity("the export holds another identity than the account's") }
            // The seed of the expected key: only the account's own device can have written it.
            isAuthenticated = true
        }
        do {
            store = try SQLiteProtocolStore(path: temporaryPath, storageKey: storageKey, identity: identity, options: options)
        } catch {
            throw .store(error)
        }
    }

    /// Writes the waiting batch in one transaction.
    private func flush() async throws(AccountExportError) {
        guard let store, !(trustRows.isEmpty && messageRows.isEmpty) else { return }
        largestBatch = max(largestBatch, trustRows.count + messageRows.count)
        let trust = trustRows.map { ($0.userID, $0.record) }
        let messages = messageRows.map(\.row)
        let sealer = store.sealer
        let inserted: [Bool]
        do {
            inserted = try await store.writeTransaction { db in
                for (userID, record) in trust {
                    let user = try TrustUserID(userID)
                    try SQLiteProtocolStore.writeUserRecord(
                        record, user: user, replacing: SQLiteProtocolStore.StoredTrustRecord(record: nil, legacyRowKeys: []), db: db,
                        sealer: sealer)
                }
                return try messages.map { row in try SQLiteProtocolStore.insertArchived(row, replacing: false, db: db, sealer: sealer) }
            }
        } catch let error as SQLiteStoreError {
            throw .store(error)
        } catch {
            throw .store(SQLiteProtocolStore.storeError(error))
        }
        trustCount += trust.count
        for (index, wasInserted) in inserted.enumerated() {
            if wasInserted {
                messageCount += 1
            } else {
                skip(messageRows[index].line, "message", "a second message with the same id in its conversation")
            }
        }
        trustRows.removeAll(keepingCapacity: true)
        messageRows.removeAll(keepingCapacity: true)
    }

    /// Writes the last batch, closes the store and links it to `path`.
    func finish(at path: String, largestLine: Int) async throws(AccountExportError) -> AccountRestoreReport {
        guard let header else { throw .damaged("the export has no header") }
        guard let store else { throw .identity("the export holds no identity") }
        try await flush()
        do { try store.close() } catch { throw .store(error) }
        for suffix in ["-wal", "-shm"] where ExportFiles.exists(temporaryPath + suffix) {
            throw .file("\(temporaryPath)\(suffix) remains after closing the restored store")
        }
        guard link(temporaryPath, path) == 0 else {
            let code = errno
            throw code == EEXIST ? .targetExists(path: path) : .file("\(path): \(ExportFiles.reason(code))")
        }
        unlink(temporaryPath)
        ExportFiles.syncFolder(of: path)
        skipped.sort { $0.line < $1.line }
        return AccountRestoreReport(
            userID: header.userID, created: header.created, registrationID: store.registrationID, importedTrustRecordCount: trustCount,
            importedMessageCount: messageCount, skipped: skipped, isAuthenticated: isAuthenticated,
            unverifiedContactCount: unverifiedContactCount, largestBatchCount: largestBatch, largestLineByteCount: largestLine)
    }

    /// Closes and removes the temporary store.
    func discard() {
        try? store?.close()
        store = nil
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporaryPath + suffix) }
    }
}

extension TrustRecord {
    /// The record with a `verified` status lowered to `trusted` (an unauthenticated export
    /// cannot vouch for a verification); the key, devices and superseded keys stay.
    fileprivate func withoutVerification() -> TrustRecord {
        guard status == .verified else { return self }
        return TrustRecord(
            identityKey: identityKey, status: .trusted, previousIdentityKey: previousIdentityKey, devices: devices,
            supersededIdentityKeys: supersededIdentityKeys)
    }
}
