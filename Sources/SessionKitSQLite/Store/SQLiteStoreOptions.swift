/// How `SQLiteProtocolStore` opens its file.
public struct SQLiteStoreOptions: Sendable, Equatable {
    /// Whether a missing file is created (with mode 0600). When `false`, a missing file is
    /// `SQLiteStoreError.cannotOpen`. Default `true`.
    public var createIfMissing: Bool
    /// How long a write waits for another connection or process holding the file's write lock
    /// before failing with a database error ("database is locked"), in seconds. Default 10.
    /// Values outside 0 … 2,147,483 (SQLite's limit) are clamped to it.
    public var busyTimeout: Double
    /// The most concurrent read connections (WAL readers do not block the writer). Default 4.
    public var maximumReaderCount: Int
    /// What a committed transaction survives. Default `.powerLoss`.
    public var durability: Durability

    /// What a committed transaction survives (SQLite's `synchronous` setting, in WAL mode, on
    /// every connection of the store).
    public enum Durability: Sendable, Equatable {
        /// A crash of the process and a power loss or OS crash (`synchronous = FULL`: the WAL
        /// is synced at every commit, so each commit waits for the disk). A state that was used
        /// to send survives, as long as the disk keeps what it reported written.
        case powerLoss
        /// A crash of the process only (`synchronous = NORMAL`: the WAL is synced only when it
        /// is checkpointed). Faster, but a power loss or OS crash may lose the transactions
        /// committed since the last checkpoint, and nothing detects it. A ratchet state that
        /// already sent then comes back: the next message is encrypted under a message key
        /// (and nonce) that was already used, a received message whose state was lost decrypts
        /// again (its processing step runs again), and a one-time prekey that was used up can
        /// be used again. Choose it only where that is acceptable.
        case processCrash

        /// The `PRAGMA synchronous` value.
        var pragmaValue: String {
            switch self {
            case .powerLoss: return "FULL"
            case .processCrash: return "NORMAL"
            }
        }
    }

    /// Options with the defaults above.
    public init(
        createIfMissing: Bool = true, busyTimeout: Double = 10, maximumReaderCount: Int = 4, durability: Durability = .powerLoss
    ) {
        self.durability = durability
        self.createIfMissing = createIfMissing
        self.busyTimeout = busyTimeout
        self.maximumReaderCount = maximumReaderCount
    }
}
