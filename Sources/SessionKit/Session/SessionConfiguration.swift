/// The limits of one Double Ratchet session (SPEC §4).
public struct SessionConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// MAX_SKIP: the most message keys one received message may skip in one chain.
    public let maxSkip: Int
    /// MAX_STORED: the most skipped message keys kept per session (the oldest is evicted first).
    public let maxStored: Int

    /// The defaults of SPEC §4: MAX_SKIP = 256, MAX_STORED = 2000.
    public static let `default` = SessionConfiguration(
        validatedMaxSkip: ProtocolLimits.defaultMaxSkip, maxStored: ProtocolLimits.defaultMaxStored)

    /// Creates a configuration.
    /// - Throws: `SessionError.invalidConfiguration` unless 0 ≤ maxSkip ≤ maxStored ≤
    ///   `ProtocolLimits.maximumMaxStored` (100,000).
    public init(
        maxSkip: Int = ProtocolLimits.defaultMaxSkip, maxStored: Int = ProtocolLimits.defaultMaxStored
    ) throws(SessionError) {
        guard maxSkip >= 0 else { throw .invalidConfiguration("maxSkip must not be negative") }
        guard maxSkip <= maxStored else { throw .invalidConfiguration("maxSkip must not exceed maxStored") }
        guard maxStored <= ProtocolLimits.maximumMaxStored else {
            throw .invalidConfiguration("maxStored must not exceed \(ProtocolLimits.maximumMaxStored)")
        }
        self.init(validatedMaxSkip: maxSkip, maxStored: maxStored)
    }

    private init(validatedMaxSkip maxSkip: Int, maxStored: Int) {
        self.maxSkip = maxSkip
        self.maxStored = maxStored
    }

    /// `SessionConfiguration(maxSkip: …, maxStored: …)`.
    public var description: String { "SessionConfiguration(maxSkip: \(maxSkip), maxStored: \(maxStored))" }
}
