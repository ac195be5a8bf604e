#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RelayWire
import SessionKit
import SessionKitMLKEM
import SessionKitSQLite

// chat-client --name alice --server ws://127.0.0.1:PORT --db DIR/alice.sqlite [--device 1] [--prekeys 50]
//
// One chat device. Opens (or creates) its SQLite store, with the storage key in DB.key
// (created 0600), connects to the relay, publishes its prekeys, prints `ready`, then runs the
// commands it reads from standard input, one per line, while it prints what arrives:
//
//   send USER TEXT…        a message to every device of USER
//   members NAME USER…     the members of group NAME: every device of USERs (ourselves left out)
//   group NAME             sends our sender key for group NAME to its members
//   gsend NAME TEXT…       a message to group NAME, encrypted once with our sender key
//   safety USER            the safety numbers with USER's devices (before and after a key change)
//   accept USER            accept USER's changed identity key
//   history USER           the messages received from USER (or `group:NAME`), from the archive
//   sendfile USER PATH     the file at PATH to every device of USER, as an attachment (SPEC §10)
//   export PATH CONV…      an account export (identity, trust records and archived messages of
//                          the conversations CONV: user ids or group:NAME) to PATH, encrypted to
//                          a new recovery code written to PATH.code
//   quit                   (or end of input) disconnect and exit
//
// `--prekeys N` publishes N one-time prekeys and N one-time KEM prekeys and never tops them up
// (the demo uses 1, so that the relay soon hands out the last-resort KEM prekey).
// `--exit-before-ack` (for the demo) exits right after the first delivery was decrypted and
// persisted, before acknowledging it, as a crash there would: the relay delivers it again.
// `--restore EXPORT` (with no database at --db yet) first builds the database from the account
// export EXPORT, opened with the recovery code in EXPORT.code: the same identity, a new
// registration id. Received files are saved in DB.files/.

/// The command-line options.
struct Options {
    var name = ""
    var server = ""
    var database = ""
    var device: UInt32 = 1
    var preKeys: Int?
    var exitsBeforeAcknowledging = false
    var restore: String?

    init(_ arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        while let option = rest.popFirst() {
            if option == "--exit-before-ack" {
                exitsBeforeAcknowledging = true
                continue
            }
            guard let value = rest.popFirst() else { throw UsageError() }
            switch option {
            case "--name": name = value
            case "--server": server = value
            case "--db": database = value
            case "--restore": restore = value
            case "--device":
                guard let number = UInt32(value) else { throw UsageError() }
                device = number
            case "--prekeys":
                guard let number = Int(value) else { throw UsageError() }
                preKeys = number
            default:
                throw UsageError()
            }
        }
        guard !name.isEmpty, !server.isEmpty, !database.isEmpty else { throw UsageError() }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String {
        "usage: chat-client --name USER --server ws://HOST:PORT --db PATH.sqlite [--device ID] [--prekeys N] [--exit-before-ack] [--restore EXPORT]"
    }
}

/// The lines of standard input, read on a thread of their own (reading blocks).
func standardInputLines() -> AsyncStream<String> {
    let (lines, continuation) = AsyncStream.makeStream(of: String.self)
    let reader = Thread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }
    reader.start()
    return lines
}

func runClient() async throws {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    let address = try ProtocolAddress(userID: options.name, deviceID: options.device)

    // The store: one file per device, sealed with a storage key kept in a 0600 key file next
    // to it (on Apple platforms, keep the key in the Keychain instead).
    var isNew = !FileManager.default.fileExists(atPath: options.database)
    let keyPath = options.database + ".key"
    let key = try StorageKey.loadOrCreateKeyFile(at: keyPath)
    if let export = options.restore, isNew {
        // A new device from an account export: the identity, trust records and archive; no
        // sessions or prekeys, and a new registration id (SPEC §9, §10).
        let code = try String(contentsOfFile: export + ".code", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        // A real app also passes `expectedIdentity:` (the account's identity key as its server
        // knows it), so that a file someone else wrote to the code's recipient is refused and
        // verified contacts stay verified; the demo's relay keeps no such record.
        let report = try await SQLiteProtocolStore.restoreAccount(
            from: export, identities: [try AgeX25519Identity(code)], to: options.database, storageKey: key)
        say("restored \(address) from \(export): the identity, \(report.importedTrustRecordCount) trust record(s), "
            + "\(report.importedMessageCount) archived message(s)\(report.skipped.isEmpty ? "" : ", \(report.skipped.count) skipped"); "
            + "new registration id \(report.registrationID)")
        isNew = false
    }
    // Restore detection: every open advances an epoch kept in the file and in the key file; a
    // file behind the key file is an older copy (a restored backup), which the store makes safe
    // at once (sessions archived, sending chains dropped, prekeys due, a new registration id).
    let store = try SQLiteProtocolStore(path: options.database, storageKey: key, epochKeeper: KeyFileEpochKeeper(path: keyPath))
    defer { try? store.close() }
    if let restore = store.restoredFromOlderCopy {
        say("\(options.database) is an older copy of itself (\(restore)): new prekeys, and new sessions with every peer")
    }
    let policy = try options.preKeys.map { count in
        try PreKeyPolicy(oneTimePreKeyBatchSize: count, oneTimePreKeyLowWaterMark: 0)
    } ?? .default
    // Post-quantum sessions (PQXDH with ML-KEM-768); the store is also the trust store.
    // The send log (in the store, sealed like the rest, kept a day): what a peer could not
    // decrypt, or what the relay refused for a device that re-registered, is sent again from it.
    let manager = SessionManager(store: store, trust: store, localAddress: address, kem: SwiftCryptoMLKEM768(),
                                 preKeyPolicy: policy, sendLog: store)
    let registration = try await manager.localRegistrationID()
    say((isNew ? "new device \(address): created \(options.database)" : "restarted \(address) from \(options.database)")
        + " (registration id \(registration))")

    let commands = standardInputLines()
    try await WebSocketClient.connect(to: options.server + "/relay", maxMessageSize: WireCoding.maximumFrameSize) {
        inbound, outbound in
        let relay = RelayConnection(outbound)
        let client = try ChatClient(
            address: address, manager: manager, store: store, relay: relay, files: URL(fileURLWithPath: options.database + ".files"),
            exitsBeforeAcknowledging: options.exitsBeforeAcknowledging)
        // Deliveries are processed one after the other, in the order the relay sent them.
        let (deliveries, delivered) = AsyncStream.makeStream(of: (UInt64, ProtocolAddress, String).self)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { delivered.finish() }
                for try await text in inbound {
                    guard let frame = try? WireCoding.decode(ServerFrame.self, from: text) else { continue }
                    if case let .deliver(id, from, envelope) = frame {
                        delivered.yield((id, from, envelope))
                    } else {
                        await relay.answer(frame)
                    }
                }
                await relay.close()
                say("connection to the relay closed")
            }
            tasks.addTask {
                for await (id, from, envelope) in deliveries {
                    await client.deliver(id, from: from, envelope: envelope)
                }
            }
            try await relay.hello(address)
            try await client.publishPreKeys()
            say("ready")
            for await line in commands {
                if line.trimmingCharacters(in: .whitespaces) == "quit" { break }
                await client.run(line)
            }
            // Closing ends the inbound loop (the relay answers the close), then the deliveries.
            try await outbound.close(reason: "bye")
            try await tasks.waitForAll()
        }
    }
}

do {
    try await runClient()
} catch {
    say("chat-client: \(error)")
    exit(1)
}
