@_spi(Storage) import SessionKit

/// What a `SQLiteProtocolStore` found and did when it opened an older copy of its file (a
/// restored backup, a copied-back file): `SQLiteProtocolStore.restoredFromOlderCopy`.
///
/// Every sending chain of the old copy is behind the one the lost copy used, so sending on it
/// would reuse message keys. In the opening transaction, before anything could send, the store:
/// - archived the current session of every peer device (as a retry notice does, SPEC §9: it
///   still decrypts late messages but is never used to send; the next message to the device
///   needs a new bundle, `noSession` until then);
/// - dropped this device's sender-key sending chains (the next `senderKeyDistributionMessage`
///   or `distributeSenderKey` starts a new chain; `groupEncrypt` is `noSession` until then);
/// - dropped every one-time prekey and made the signed prekey due for rotation
///   (`SessionManager.maintainPreKeys()` generates new ones);
/// - drew a new registration id (SPEC §9: a restored device draws a new one).
///
/// What the app does: run `SessionManager.maintainPreKeys()` and upload the result (its new
/// registration id makes the server drop what it published before: a re-registration), fetch a
/// bundle for each peer device before sending to it again, and distribute new sender keys to
/// its groups. Peers that send on sessions this copy does not know get retry notices (SPEC §9)
/// and start new sessions; messages sent between the backup and the restore are lost to this
/// device (their peers re-send what their send logs hold).
public struct StoreRestore: Sendable, Hashable, CustomStringConvertible {
    /// The epoch the file held (`nil`: the file had none, a copy from before restore detection).
    public let fileEpoch: UInt64?
    /// The epoch kept beside the storage key, which the file was behind.
    public let keptEpoch: UInt64
    /// The number of peer devices whose current session was archived.
    public let archivedSessionCount: Int
    /// The number of this device's sender-key sending chains dropped.
    public let droppedSendingChainCount: Int
    /// The registration id the old copy held.
    public let previousRegistrationID: RegistrationID
    /// The new registration id (`SQLiteProtocolStore.localRegistrationID()`).
    public let registrationID: RegistrationID

    /// The counts and ids (nothing secret).
    public var description: String {
        "StoreRestore(file epoch \(fileEpoch.map(String.init) ?? "none") behind \(keptEpoch), "
            + "\(archivedSessionCount) sessions archived, \(droppedSendingChainCount) sending chains dropped, "
            + "registration id \(previousRegistrationID) → \(registrationID))"
    }
}
