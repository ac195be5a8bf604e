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

    /// Options with the defaults above.
    public init(createIfMissing: Bool = true, busyTimeout: Double = 10, maximumReaderCount: Int = 4) {
        self.createIfMissing = createIfMissing
        self.busyTimeout = busyTimeout
        self.maximumReaderCount = maximumReaderCount
    }
}
