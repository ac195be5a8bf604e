import Foundation
import GRDB
@_spi(Storage) import SessionKit
import SessionKitAge
import SignalPrimitives
import Verification

/// Account export (SPEC §10): the identity, trust records and archived messages in an age file.
extension SQLiteProtocolStore {
    /// The archived messages read per page while exporting.
    static let exportPageSize = 256

    /// Writes an export of this account to each of `destinations` (one pass over the store
    /// feeds them all): a complete age v1 file whose plaintext is the JSON Lines of SPEC §10
    /// (the header, the identity, the trust records of `contents.contacts`, the archived
    /// messages of `contents.conversations`, and with `contents.includesKnownIDs` those of every
    /// user and conversation whose id the store knows; see the article "Backups and Key
    /// Files"). It holds no sessions, prekeys, sender-key chains or registration id. The report
    /// counts what the store holds and the export did not name.
    ///
    /// The archive is read a page at a time and each line goes straight to the age streams, so
    /// memory stays bounded by a page whatever the archive's size. Each file is written under a
    /// temporary name in its folder and renamed into place (replacing a file there) only when
    /// every file is complete; on an error before that none of them appears (should renaming
    /// the second file fail, the first is already in place). Writes that other tasks make
    /// meanwhile may or may not be included (the pages are separate reads).
    ///
    /// The files hold the identity key: keep them as safe as the recovery code or passphrase
    /// that opens them.
    /// - Throws: `AccountExportError.invalidArgument` for no destination, an scrypt work factor
    ///   outside 16 … 22, or an id that cannot be used; `.age` when a recipient cannot be used;
    ///   `.file` when a file cannot be written; `.store` when the store fails.
    public func exportAccount(
        _ contents: AccountExportContents, to destinations: [AccountExportDestination]
    ) async throws(AccountExportError) -> AccountExportReport {
        guard !destinations.isEmpty else { throw .invalidArgument("no destination") }
        guard (try? TrustUserID(contents.userID)) != nil else { throw .invalidArgument("the user id is not 1 to 255 UTF-8 bytes") }
        for contact in contents.contacts where (try? TrustUserID(contact)) == nil {
            throw .invalidArgument("a contact id is not 1 to 255 UTF-8 bytes")
        }
        guard !contents.conversations.contains(where: \.isEmpty) else { throw .invalidArgument("an empty conversation id") }
        var outputs: [(stream: AgeEncryptingStream, file: TemporaryOutputFile)] = []
        for destination in destinations {
            let recipient: any AgeRecipient
            switch destination.protection {
            case let .recoveryCode(x25519): recipient = x25519
            case let .passphrase(scrypt):
                guard scrypt.workFactor >= AccountExport.minimumWorkFactor else {
                    throw .invalidArgument("an scrypt work factor of \(scrypt.workFactor) (at least \(AccountExport.minimumWorkFactor))")
                }
                // Above what readers compute by default (`AgeScryptIdentity.defaultMaximumWorkFactor`,
                // 20), the file would not open where it is restored without a raised limit.
                guard scrypt.workFactor <= AgeScryptIdentity.defaultMaximumWorkFactor else {
                    throw .invalidArgument(
                        "an scrypt work factor of \(scrypt.workFactor) (at most \(AgeScryptIdentity.defaultMaximumWorkFactor), what readers accept)")
                }
                recipient = scrypt
            }
            let stream: AgeEncryptingStream
            do { stream = try AgeEncryptor(recipients: [recipient], armored: destination.armored).makeStream() } catch { throw .age(error) }
            outputs.append((stream, try TemporaryOutputFile(destination: destination.path)))
        }
        let files = outputs.map(\.file)
        defer { for file in files { file.discard() } }

        func emit(_ line: [UInt8]) throws(AccountExportError) {
            for output in outputs {
                do {
                    try line.withBytes { (bytes: UnsafeRawBufferPointer) throws(AgeError) in
                        try output.stream.update(bytes, outputBytes: output.file.write)
                    }
                } catch {
                    throw .age(error)
                }
                if let failure = output.file.failure { throw .file(failure) }
            }
        }

        try emit(ExportLineEncoder.header(ExportHeader(userID: contents.userID, created: Int64(Date().timeIntervalSince1970))))
        var identityLine = identity.privateKey.seedRepresentation.withUnsafeBytes { seed in
            ExportLineEncoder.identity(seed: seed, publicKey: identity.publicKey.rawRepresentation)
        }
        defer { SecureMemory.zero(&identityLine) }
        try emit(identityLine)

        var (contacts, conversations) = (contents.contacts, contents.conversations)
        if contents.includesKnownIDs {
            let known = try await knownIDs()
            contacts += known.users
            conversations += known.conversations
        }
        let listedContactCount = contents.contacts.count

        var trustCount = 0
        var withoutRecord: [String] = []
        var seenUsers = Set<[UInt8]>()
        var exportedUsers: [TrustUserID] = []
        for (index, contact) in contacts.enumerated() where seenUsers.insert(Array(contact.utf8)).inserted {
            let record: TrustRecord?
            do { record = try await self.record(forUser: contact) } catch { throw .store(.database("reading a trust record: \(error)")) }
            guard let record else {
                // A known id whose record was removed meanwhile is not the app's contact.
                if index < listedContactCount { withoutRecord.append(contact) }
                continue
            }
            if let user = try? TrustUserID(contact) { exportedUsers.append(user) }
            try emit(ExportLineEncoder.trust(userID: contact, record: record))
            trustCount += 1
        }

        var messageCount = 0, damaged = 0, largestPage = 0
        var seenConversations = Set<[UInt8]>()
        for conversation in conversations where seenConversations.insert(Array(conversation.utf8)).inserted {
            var cursor: ArchiveCursor?
            repeat {
                let page: ArchivePage
                do {
                    page = try await archivedMessages(inConversation: conversation, limit: Self.exportPageSize, before: cursor)
                } catch {
                    throw .store(error)
                }
                largestPage = max(largestPage, page.messages.count)
                damaged += page.damagedCount
                for message in page.messages {
                    var line = message.plaintext.withUnsafeBytes { body in
                        ExportLineEncoder.message(
                            conversationID: conversation, messageID: message.messageID, timestamp: message.timestamp, body: body)
                    }
                    defer { SecureMemory.zero(&line) }
                    try emit(line)
                    messageCount += 1
                }
                cursor = page.nextCursor
            } while cursor != nil
        }

        for output in outputs {
            do { try output.stream.finish(outputBytes: output.file.write) } catch { throw .age(error) }
        }
        for output in outputs { try output.file.commit(replace: true) }

        let unlisted = try await unlistedCounts(users: exportedUsers, conversations: Array(seenConversations))
        return AccountExportReport(
            trustRecordCount: trustCount, messageCount: messageCount, contactsWithoutRecord: withoutRecord,
            damagedMessageCount: damaged, unlistedTrustRecordCount: unlisted.users, unlistedConversationCount: unlisted.conversations,
            largestPageCount: largestPage)
    }

    /// The ids the store knows (`known_ids`) of its trust records and archived conversations,
    /// each list in the order of the UTF-8 bytes.
    private func knownIDs() async throws(AccountExportError) -> (users: [String], conversations: [String]) {
        do {
            return try await readTransaction { [sealer] db in
                func sorted(_ ids: [String]) -> [String] { ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) } }
                return (
                    sorted(try KnownIDs.trustUsers(db, sealer: sealer)),
                    sorted(try KnownIDs.archivedConversations(db, sealer: sealer))
                )
            }
        } catch let error as SQLiteStoreError {
            throw .store(error)
        } catch {
            throw .store(Self.storeError(error))
        }
    }

    /// How many trust records and archived conversations the store holds other than these
    /// (compared by keyed hash): the `trust_users` rows of other users, the per-device rows of
    /// schema 1 and 2 (`trust`) that none of `users` folds, and the conversations of other ids.
    private func unlistedCounts(users: [TrustUserID], conversations: [[UInt8]]) async throws(AccountExportError) -> (users: Int, conversations: Int) {
        let userHashes = Set(users.map { sealer.rowKey($0.utf8, in: .trustUser) })
        let conversationHashes = Set(conversations.map { sealer.rowKey($0, in: .archiveConversation) })
        do {
            return try await readTransaction { [sealer] db in
                let storedUsers = try Data.fetchAll(db, sql: "SELECT user_hash FROM trust_users").map { [UInt8]($0) }
                let storedConversations = try Data.fetchAll(db, sql: "SELECT DISTINCT conversation_hash FROM archive").map { [UInt8]($0) }
                var legacyRows = 0
                let storedLegacy = try Data.fetchAll(db, sql: "SELECT address_hash FROM trust").map { [UInt8]($0) }
                if !storedLegacy.isEmpty {
                    var folded = Set<[UInt8]>()
                    for user in users { folded.formUnion(try Self.legacyRowKeys(db, user: user, sealer: sealer)) }
                    legacyRows = storedLegacy.filter { !folded.contains($0) }.count
                }
                return (
                    storedUsers.filter { !userHashes.contains($0) }.count + legacyRows,
                    storedConversations.filter { !conversationHashes.contains($0) }.count
                )
            }
        } catch let error as SQLiteStoreError {
            throw .store(error)
        } catch {
            throw .store(Self.storeError(error))
        }
    }
}
