@_spi(Storage) import SessionKit
import SignalPrimitives

/// A session record split into the parts the file keeps (computed before the write
/// transaction, so that the transaction only compares and writes). The serialized parts are
/// `SecureBytes`: every copy of the plan shares them, and they are wiped when the last goes.
struct SessionWritePlan: Sendable {
    /// One session's part.
    struct Part: Sendable {
        /// Its key within the record.
        let stateKey: [UInt8]
        /// `serializedWithoutSkippedMessageKeys()` (secret).
        let bytes: SecureBytes
        /// SHA-256 of `bytes`.
        let digest: [UInt8]
        /// Its skipped keys, oldest first, each with its slot hash.
        let skipped: [SkippedKey]
    }

    /// A skipped key and the keyed hash of its slot (its row key).
    struct SkippedKey: Sendable {
        let slotHash: [UInt8]
        let entry: SkippedMessageKeyEntry
    }

    let address: ProtocolAddress
    let names: SessionRowNames
    /// The generation the record was loaded with (the compare-and-swap's expected value).
    let expectedGeneration: UInt64
    let record: SessionRecord
    let current: Part?
    let previous: [Part]

    init(_ write: StoreCommit.SessionWrite, sealer: ValueSealer) {
        address = write.address
        names = SessionRowNames(write.address, sealer: sealer)
        expectedGeneration = write.record.generation
        record = write.record
        func part(_ session: SessionState) -> Part {
            var serialized = session.serializedWithoutSkippedMessageKeys()
            defer { SecureMemory.zero(&serialized) }
            return Part(
                stateKey: SQLiteProtocolStore.stateKey(of: session, sealer: sealer), bytes: SecureBytes(copying: serialized),
                digest: SHA256.hash(serialized),
                skipped: session.skippedMessageKeyEntries.map { SkippedKey(slotHash: sealer.rowKey($0.slot, in: .skippedSlot), entry: $0) })
        }
        current = write.record.currentSession.map(part)
        previous = write.record.previousSessions.map(part)
    }
}
