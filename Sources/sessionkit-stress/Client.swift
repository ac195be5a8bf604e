#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@_spi(Testing) import SessionKit
import SessionKitSQLite
import SignalPrimitives
import Verification

/// The storage key of every stress-test file: bytes 0x00 … 0x1f (the test fixtures' key).
let stressStorageKeyBytes: [UInt8] = Array(0 ..< 32)

/// One client of an account (an app, or its extension) running the app model of
/// `CrashConsistencyTests` against an SQLite file:
///
/// - sending: the user queues a message in the durable outbox; the client encrypts it
///   (`SessionManager.encrypt`: the advanced chain is persisted before it returns), logs the
///   ciphertext's (ratchet key, counter) as `sent` in the ledger, posts it to every queue of the
///   peer, logs `posted`, and moves it from the outbox to `sent/`. A process killed before the
///   move sends the message again on restart (under a new message key and a new envelope id).
/// - receiving: for each envelope in its queue, oldest first, `decrypt(_:from:beforePersisting:)`
///   whose step stores the plaintext in the account's inbox (idempotent, keyed by the app-level
///   message id) and logs `step`; once decrypt returns, `decrypted`; a redelivered envelope
///   whose state was committed is `duplicateMessage`, logged as `duplicate` (or
///   `invalidMessage`, logged as `invalid`, when another client decrypted it and the session
///   has since moved to a newer receiving chain); then the envelope is acknowledged (moved to
///   `acked/`) and `acked` logged.
///
/// `staleState` reaching the app (more than `SessionManager.staleStateRetries` refused commits)
/// is logged as `stale` and the operation is tried again later. Any other error stops the
/// process with status 3.
final class Client {
    private let options: Options
    private let workspace: Workspace
    private let ledger: Ledger
    private let store: SQLiteProtocolStore
    private let manager: SessionManager
    /// Messages queued so far (in the outbox or sent).
    private var queued: Int
    /// Envelopes acknowledged so far.
    private var received: Int

    init(_ options: Options) async throws {
        self.options = options
        workspace = try Workspace(options.directory)
        let client = options.client
        for folder in ["mail/\(client)", "acked/\(client)", "outbox/\(client)", "sent/\(client)", "inbox/\(options.account)"]
            + options.deliveries.map({ "mail/\($0)" }) {
            try Workspace.makeFolder(options.directory + "/" + folder)
        }
        ledger = try Ledger(path: "\(options.directory)/ledger/\(client).log", client: client)
        try ledger.log("start", String(getpid()), options.drain ? "drain" : "run")
        store = try SQLiteProtocolStore(
            path: options.directory + "/" + options.database, storageKey: try StorageKey(bytes: stressStorageKeyBytes),
            options: SQLiteStoreOptions(createIfMissing: false, durability: options.durability))
        manager = SessionManager(store: store, trust: store, localAddress: options.account)
        queued = try workspace.names(in: "outbox/\(client)").count + workspace.names(in: "sent/\(client)").count
        received = try workspace.names(in: "acked/\(client)").count
        try ledger.log("opened")
    }

    /// Closes the store, then logs `closed` (the last line of a run that ended by itself).
    func close() throws {
        try store.close()
        try ledger.log("closed")
    }

    /// Closes the store after a failure, ignoring a second failure (the first one is reported).
    func closeAfterFailure() {
        try? store.close()
    }

    /// Runs the client (see `Options` for when it stops).
    func run() async throws {
        if options.drain {
            _ = try await receiveAll()
            _ = try await flushOutbox()
            try ledger.log("drained")
            return
        }
        while true {
            var progressed = try await receiveAll() > 0
            if let limit = options.sendLimit, queued >= limit {
                if received >= (options.expected ?? 0), try workspace.names(in: "outbox/\(options.client)").isEmpty {
                    try ledger.log("done", String(queued), String(received))
                    return
                }
            } else if try await mayQueue() {
                for _ in 0 ..< Int.random(in: 1 ... 3) where queued < options.sendLimit ?? Int.max { try queue() }
            }
            progressed = try await flushOutbox() > 0 || progressed
            if !progressed { usleep(1000) }
        }
    }

    /// Whether the user may queue more: there is a session with the peer (the peer has written
    /// first, or a bundle was processed) and neither the outbox nor any peer queue is full.
    private func mayQueue() async throws -> Bool {
        guard try await store.loadSession(for: options.peer) != nil else { return false }
        guard try workspace.names(in: "outbox/\(options.client)").count < options.window else { return false }
        for queue in options.deliveries where try workspace.names(in: "mail/\(queue)").count >= options.window { return false }
        return true
    }

    /// The user queues the next numbered message (durably, before anything is sent).
    private func queue() throws {
        let number = String(format: "%06d", queued)
        try workspace.writeAtomically(Array("\(options.client)-\(number)".utf8), to: "outbox/\(options.client)/\(number)")
        queued += 1
    }

    /// Sends the outbox in order: encrypt → ledger → post → move to `sent/`. Returns how many
    /// were sent; stops at the first message that cannot be sent now (no session yet, or
    /// `staleState`).
    private func flushOutbox() async throws -> Int {
        var sent = 0
        for name in try workspace.names(in: "outbox/\(options.client)") {
            guard let entry = workspace.read("outbox/\(options.client)/\(name)") else { continue }
            let messageID = String(decoding: entry, as: UTF8.self)
            // (A `Result`, not typed `catch` patterns, which crash Swift 6.3's SIL verifier here.)
            let outcome: Result<[UInt8], SessionError>
            do { outcome = .success(try await manager.encrypt(entry, to: options.peer)) } catch { outcome = .failure(error) }
            let ciphertext: [UInt8]
            switch outcome {
            case let .success(bytes): ciphertext = bytes
            case .failure(.staleState):
                try ledger.log("stale", "encrypt", messageID)
                return sent
            case .failure(.noSession): return sent
            case let .failure(error): throw error
            }
            let slot = try IncomingMessage(serialized: ciphertext).ratchetMessage
            let envelopeID = "\(messageID).\(hex((0 ..< 4).map { _ in UInt8.random(in: 0 ... 255) }))"
            // The evidence first: a ciphertext can reach the peer only once its slot is logged.
            try ledger.log("sent", messageID, envelopeID, options.peer.description, hex(slot.ratchetKey.rawRepresentation),
                           String(slot.counter))
            let envelope = Envelope(sender: options.account.description, messageID: messageID, envelopeID: envelopeID, bytes: ciphertext)
            let fileName = String(format: "%020llu", realtimeNanoseconds()) + "-" + envelopeID
            for queue in options.deliveries { try workspace.writeAtomically(envelope.encoded, to: "mail/\(queue)/\(fileName)") }
            try ledger.log("posted", envelopeID)
            try workspace.rename(from: "outbox/\(options.client)/\(name)", to: "sent/\(options.client)/\(name)")
            sent += 1
        }
        return sent
    }

    /// Receives every envelope in the client's queue, oldest first (see the type's
    /// documentation). Returns how many were acknowledged.
    private func receiveAll() async throws -> Int {
        var handled = 0
        let client = options.client
        for name in try workspace.names(in: "mail/\(client)") {
            guard let file = workspace.read("mail/\(client)/\(name)") else { continue }
            let envelope = try Envelope(decoding: file)
            let sender = try Options.address(envelope.sender)
            guard sender == options.peer else { throw StressError("envelope \(envelope.envelopeID) from \(sender), not the peer") }
            let expected = Array(envelope.messageID.utf8)
            let (workspace, ledger, inbox) = (workspace, ledger, "inbox/\(options.account)/\(envelope.messageID)")
            do {
                let message = try await manager.decrypt(envelope.bytes, from: sender, beforePersisting: {
                    (decrypted: DecryptedMessage) async throws(SessionError) in
                    do {
                        guard decrypted.plaintext == expected else { throw StressError("the plaintext is not the message id") }
                        // Idempotent: a message processed again finds its plaintext stored.
                        if let stored = workspace.read(inbox) {
                            guard stored == decrypted.plaintext else { throw StressError("the inbox holds another plaintext") }
                        } else {
                            try workspace.writeAtomically(decrypted.plaintext, to: inbox)
                        }
                        try ledger.log("step", envelope.envelopeID, envelope.messageID)
                    } catch {
                        throw .storage("app: \(error)")
                    }
                })
                guard message.plaintext == expected else { throw StressError("envelope \(envelope.envelopeID) decrypted to another text") }
                try ledger.log("decrypted", envelope.envelopeID, envelope.messageID)
            } catch SessionError.duplicateMessage {
                try ledger.log("duplicate", envelope.envelopeID, envelope.messageID)
            } catch SessionError.invalidMessage {
                // A message another client of the account decrypted first, after which the
                // account's session moved to the peer's next ratchet key: the Double Ratchet keeps
                // only the current receiving chain, so the old message looks like a forged DH step
                // (see the README). An app keyed by envelope id would find it processed; this one
                // logs it (the test accepts it only after another client decrypted the envelope)
                // and acknowledges it.
                try ledger.log("invalid", envelope.envelopeID, envelope.messageID)
            } catch SessionError.staleState {
                try ledger.log("stale", "decrypt", envelope.envelopeID)
                continue
            }
            try workspace.rename(from: "mail/\(client)/\(name)", to: "acked/\(client)/\(name)")
            try ledger.log("acked", envelope.envelopeID)
            received += 1
            handled += 1
        }
        return handled
    }
}
