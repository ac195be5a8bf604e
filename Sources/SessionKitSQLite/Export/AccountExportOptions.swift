import SessionKit
import SessionKitAge

/// What an account export holds besides the identity: the account's user id (the header's
/// `user`), the contacts whose trust records go in, and the conversations whose archived
/// messages go in.
///
/// The store keeps user and conversation ids as keyed hashes; since schema 10 it also keeps,
/// sealed, the id behind each hash of a trust record or an archived conversation (recorded
/// when the record is written or a message archived). So
/// `everything(userID:contacts:conversations:)` exports every record and conversation the
/// store can name, without lists. `init(userID:contacts:conversations:)` exports exactly the
/// listed ones. A file written by an older version of the library has records and
/// conversations whose ids the store never recorded (until they are written again): only the
/// app's lists can name those. What the store holds and the export leaves out is counted in
/// the report (`AccountExportReport.unlistedTrustRecordCount`, `.unlistedConversationCount`,
/// `.isComplete`), never dropped silently.
public struct AccountExportContents: Sendable, Equatable {
    /// The account's user id.
    public var userID: String
    /// The users whose trust records are exported (with `includesKnownIDs`, besides those
    /// whose id the store knows).
    public var contacts: [String]
    /// The conversations whose archived messages are exported (with `includesKnownIDs`,
    /// besides those whose id the store knows).
    public var conversations: [String]
    /// Whether the export also holds every trust record and archived conversation whose id the
    /// store knows (`everything(userID:contacts:conversations:)`); `false`: the lists alone.
    public var includesKnownIDs: Bool

    /// Contents for `userID` with exactly these contacts and conversations.
    public init(userID: String, contacts: [String], conversations: [String]) {
        self.userID = userID
        self.contacts = contacts
        self.conversations = conversations
        includesKnownIDs = false
    }

    /// Contents for `userID` with every trust record and archived conversation whose id the
    /// store knows, and also those of `contacts` and `conversations` (the lists are needed only
    /// for records and conversations written before the store recorded ids, schema 10: the
    /// report's unlisted counts say whether any remain). The listed ones come first in the
    /// file, then the others in the order of their ids' UTF-8 bytes.
    public static func everything(userID: String, contacts: [String] = [], conversations: [String] = []) -> AccountExportContents {
        var contents = AccountExportContents(userID: userID, contacts: contacts, conversations: conversations)
        contents.includesKnownIDs = true
        return contents
    }
}

/// One export file to write: where, for whom, binary or armored.
public struct AccountExportDestination: Sendable {
    /// How the file is encrypted.
    public enum Protection: Sendable {
        /// To a recovery code: the recipient of an `AgeX25519Identity` whose
        /// `secretKeyString` (`AGE-SECRET-KEY-1…`) the app shows the user
        /// (`AccountExport.newRecoveryCode()`).
        case recoveryCode(AgeX25519Recipient)
        /// To a passphrase (age `scrypt`, the file's only stanza), at a work factor from
        /// `AccountExport.minimumWorkFactor` (16) to 20 (what readers accept by default);
        /// `AgeScryptRecipient`'s default is 18.
        case passphrase(AgeScryptRecipient)
    }

    /// The path of the file (replaced when it exists, only once the new file is complete).
    public var path: String
    /// The recipient.
    public var protection: Protection
    /// Whether the file is ASCII-armored (`-----BEGIN AGE ENCRYPTED FILE-----`).
    public var armored: Bool

    /// A destination at `path` for `protection`, binary unless `armored`.
    public init(path: String, protection: Protection, armored: Bool = false) {
        self.path = path
        self.protection = protection
        self.armored = armored
    }
}

/// Account export constants and the recovery code.
public enum AccountExport {
    /// The smallest scrypt work factor (log2 N) an export accepts: 16 (SPEC §10).
    public static let minimumWorkFactor = 16
    /// The export version this library writes and the highest it reads.
    public static let version = ExportFormat.version

    /// A new recovery code: an age X25519 identity. Show `secretKeyString`
    /// (`AGE-SECRET-KEY-1…`) to the user once, export to its `recipient`, and read it back with
    /// `AgeX25519Identity(_:)` to restore.
    /// - Throws: `AgeError.primitive` when libsodium is unusable.
    public static func newRecoveryCode() throws(AgeError) -> AgeX25519Identity {
        try AgeX25519Identity()
    }
}
