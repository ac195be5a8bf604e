/// A table whose values are sealed, as the additional data names it (`ValueSealer`).
///
/// `valueVersion` is the schema version that defined the layout of the table's sealed values.
/// It is bound into every value's additional data, so a value written under one layout never
/// opens as another. A later schema that changes a table's value layout gives the table a new
/// `valueVersion` and its migration step re-seals the table's rows; a schema that leaves a
/// table's values alone leaves its `valueVersion`, so upgrading touches no row.
struct SealedTable: Sendable, Hashable, CustomStringConvertible {
    /// The SQL table name (also what errors name).
    let name: String
    /// The schema version that defined the layout of its values.
    let valueVersion: UInt32

    /// The store's own bookkeeping (`meta`): the key check.
    static let meta = SealedTable(name: "meta", valueVersion: 1)
    /// This device's identity key pair (one row).
    static let identity = SealedTable(name: "identity", valueVersion: 1)
    /// This device's prekeys, one sealed `LocalPreKeys` blob (one row), persisted version 3
    /// (the replay records in `prekey_replay_records`: schema 5).
    static let preKeys = SealedTable(name: "prekeys", valueVersion: UInt32(SchemaVersion5.version))
    /// The prekeys row as schemas 1–4 sealed it (`LocalPreKeys` version 2, the replay records
    /// inside); opened only to move the records out (`SchemaVersion5.moveReplayRecords`).
    static let preKeysBeforeSchema5 = SealedTable(name: "prekeys", valueVersion: 1)
    /// This installation's registration id (one row; `SchemaRegistrationID`, schema 6).
    static let registration = SealedTable(name: "registration", valueVersion: 6)
    /// The store epoch (one row; `SchemaStoreEpoch`, schema 7).
    static let storeEpoch = SealedTable(name: "store_epoch", valueVersion: 7)
    /// Trust records of schema 1 and 2, by hashed address (one per device); read only to fold
    /// them into `trustUsers`.
    static let trust = SealedTable(name: "trust", valueVersion: 1)
    /// Trust records, one per user, by hashed user id (schema 3).
    static let trustUsers = SealedTable(name: "trust_users", valueVersion: 3)
    /// Group member devices, by hashed group (schema 4).
    static let groupMembers = SealedTable(name: "group_members", valueVersion: 4)
    /// Group messages waiting for their distribution, by id (schema 4).
    static let pendingGroupMessages = SealedTable(name: "pending_group_messages", valueVersion: 4)
    /// The send log, by hashed chain, id and expiry (`SchemaSendLog`, schema 8).
    static let sendLog = SealedTable(name: "send_log", valueVersion: UInt32(SchemaSendLogPeers.version))
    /// The message archive, by hashed conversation and message ids.
    static let archive = SealedTable(name: "archive", valueVersion: 1)
    /// The ids behind the keyed hashes of `trust_users` and `archive`, by hash (`SchemaKnownIDs`,
    /// schema 10).
    static let knownIDs = SealedTable(name: "known_ids", valueVersion: UInt32(SchemaKnownIDs.version))

    /// Session records, one row per peer device: the current session without its skipped keys
    /// (schema 2), sealed for the row key and the row's generation (`SchemaGenerationBinding`).
    static let sessions = SealedTable(name: "sessions", valueVersion: 9)
    /// `sessions` before schema 9 (sealed for the row key alone).
    static let sessionsBeforeSchema9 = SealedTable(name: "sessions", valueVersion: 2)
    /// The order of a record's previous sessions (their state keys), one row per record that
    /// has previous sessions (schema 2).
    static let sessionOrders = SealedTable(name: "session_orders", valueVersion: 2)
    /// Previous sessions without their skipped keys, one row per session (schema 2).
    static let sessionStates = SealedTable(name: "session_states", valueVersion: 2)
    /// Skipped message keys, one row per key (schema 2).
    static let skippedKeys = SealedTable(name: "skipped_keys", valueVersion: 2)
    /// Our sending chains, by hashed group (schema 2), sealed for the row key and the row's
    /// generation (`SchemaGenerationBinding`).
    static let sendingChains = SealedTable(name: "sending_chains", valueVersion: 9)
    /// `sending_chains` before schema 9.
    static let sendingChainsBeforeSchema9 = SealedTable(name: "sending_chains", valueVersion: 2)
    /// Received chains, by hashed group and sender (schema 2), sealed for the row key and the
    /// row's generation (`SchemaGenerationBinding`).
    static let receiverStates = SealedTable(name: "receiver_states", valueVersion: 9)
    /// `receiver_states` before schema 9.
    static let receiverStatesBeforeSchema9 = SealedTable(name: "receiver_states", valueVersion: 2)

    var description: String { name }
}
