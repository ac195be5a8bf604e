/// How `SQLiteProtocolStore` opens its file.
public struct SQLiteStoreOptions: Sendable, Equatable {
    /// Whether a missing file is created (with mode 0600). When `false`, a missing file is
    /// `SQLiteStoreError.cannotOpen`. Default `true`.
    public var createIfMissing: Bool
    /// How long a write waits for another connection or process holding the file's write lock
    /// before failing with a database error ("database is locked"), in seconds. Default 10.
    public var busyTimeout: Double
    /// The most concurrent read connections (WAL readers do not block the writer). Default 4.
    public var maximumReaderCount: Int
    /// What a committed transaction survives. Default `.powerLoss`.
    public var durability: Durability

    /// What a committed transaction survives (SQLite's `synchronous` setting, in WAL mode).
    public enum Durability: Sendable, Equatable {
        /// A crash of the process and a power loss or OS crash (`synchronous = FULL`: the WAL
        /// is synced at every commit). A state that was used to send can then never roll back.
        case powerLoss
        /// A crash of the process only (`synchronous = NORMAL`: the WAL is synced at
        /// checkpoints). Faster, but a power loss may roll back the last transactions, so a
        /// ratchet state that already sent could be used again after the reboot.
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
