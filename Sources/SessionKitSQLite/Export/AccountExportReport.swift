import SessionKit

/// What `SQLiteProtocolStore.exportAccount` wrote (the same into every destination).
public struct AccountExportReport: Sendable, Equatable {
    /// Trust records written.
    public let trustRecordCount: Int
    /// Archived messages written.
    public let messageCount: Int
    /// Contacts passed in `AccountExportContents.contacts` that have no trust record (nothing
    /// written for them).
    public let contactsWithoutRecord: [String]
    /// Archive rows of the listed conversations that do not open (damaged on disk): not
    /// written.
    public let damagedMessageCount: Int
    /// Trust records in the store that the export did not name (under user ids neither the
    /// contents listed nor, with `AccountExportContents.includesKnownIDs`, the store knows):
    /// not written. Records of a file of schema 1 or 2 that were never written since (one per
    /// device then) count once per device.
    public let unlistedTrustRecordCount: Int
    /// Conversations in the archive that the export did not name (under ids neither the
    /// contents listed nor, with `AccountExportContents.includesKnownIDs`, the store knows):
    /// not written.
    public let unlistedConversationCount: Int

    /// Whether the export holds every trust record and archived message of the store: nothing
    /// unlisted and no damaged archive row (as the store was when each part was read).
    public var isComplete: Bool {
        unlistedTrustRecordCount == 0 && unlistedConversationCount == 0 && damagedMessageCount == 0
    }
    /// The most archived messages held at once while writing (one page), for the tests of
    /// bounded memory.
    let largestPageCount: Int
}

/// What `SQLiteProtocolStore.restoreAccount` imported, and each item it skipped with the reason.
public struct AccountRestoreReport: Sendable {
    /// The header's user id.
    public let userID: String
    /// The header's creation time (Unix seconds).
    public let created: Int64
    /// The registration id the new store drew (SPEC §9: a restored device never reuses one).
    public let registrationID: RegistrationID
    /// Trust records imported.
    public let importedTrustRecordCount: Int
    /// Archived messages imported.
    public let importedMessageCount: Int
    /// The items not imported, in file order.
    public let skipped: [AccountRestoreSkippedItem]
    /// Whether the export was shown to come from the account's owner: opened with a
    /// passphrase, or holding the expected identity (`restoreAccount`'s `expectedIdentity`).
    /// Only then were contacts' `verified` statuses imported.
    public let isAuthenticated: Bool
    /// Contacts the export marked verified that were restored as trusted, because the export
    /// is not authenticated: compare their safety numbers again before relying on them.
    public let unverifiedContactCount: Int
    /// The most items held at once before being written (one batch), for the tests of bounded
    /// memory.
    let largestBatchCount: Int
    /// The longest plaintext line held, in bytes.
    let largestLineByteCount: Int
}

/// An export line that restore did not import.
public struct AccountRestoreSkippedItem: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The line number (the header is line 1).
    public let line: Int
    /// The item's `kind`, when the line has one (at most 64 characters).
    public let kind: String?
    /// Why it was skipped (no value of the item).
    public let reason: String

    /// The line, kind and reason.
    public var description: String { "line \(line) (\(kind ?? "no kind")): \(reason)" }
}
