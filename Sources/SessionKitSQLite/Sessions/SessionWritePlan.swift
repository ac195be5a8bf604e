import SessionKit
import SignalPrimitives

/// A session record split into the parts the file keeps (computed before the write
/// transaction, so that the transaction only compares and writes).
struct SessionWritePlan: @unchecked Sendable {
    /// One session's part.
    struct Part {
        /// Its key within the record.
        let stateKey: [UInt8]
        /// `serializedWithoutSkippedMessageKeys()` (secret: wiped by `wipe()`).
        var bytes: [UInt8]
        /// SHA-256 of `bytes`.
        let digest: [UInt8]
        /// Its skipped keys, oldest first: slot hash and sealed-value plaintext (slot ‖ key).
        let skipped: [(slotHash: [UInt8], entry: SkippedMessageKeyEntry)]

        /// Wipes `bytes`.
        mutating func wipe() { SecureMemory.zero(&bytes) }
    }

    let address: ProtocolAddress
    let names: SessionRowNames
    /// The generation the record was loaded with (the compare-and-swap's expected value).
    let expectedGeneration: UInt64
    let record: SessionRecord
    var current: Part?
    var previous: [Part]

    init(_ write: StoreCommit.SessionWrite, sealer: ValueSealer) {
        address = write.address
        names = SessionRowNames(write.address, sealer: sealer)
        expectedGeneration = write.record.generation
        record = write.record
        func part(_ session: SessionState) -> Part {
            let bytes = session.serializedWithoutSkippedMessageKeys()
            return Part(
                stateKey: SQLiteProtocolStore.stateKey(of: session, sealer: sealer), bytes: bytes, digest: SHA256.hash(bytes),
                skipped: session.skippedMessageKeyEntries.map { (sealer.rowKey($0.slot, in: .skippedSlot), $0) })
        }
        current = write.record.currentSession.map(part)
        previous = write.record.previousSessions.map(part)
    }

    /// Wipes the serialized parts.
    mutating func wipe() {
        current?.wipe()
        for index in previous.indices { previous[index].wipe() }
    }
}
