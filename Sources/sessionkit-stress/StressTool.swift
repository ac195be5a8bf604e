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

/// `sessionkit-stress`: one device process of the multi-process and crash tests
/// (`Tests/SessionKitSQLiteProcessTests`, `make crash`).
///
///     sessionkit-stress run --dir D --client NAME --account USER.DEVICE --db FILE --peer USER.DEVICE
///                           --deliver QUEUE [--deliver QUEUE ...] [--send N] [--expect E]
///                           [--window W] [--durability power|process] [--drain]
///
/// The process opens the account's `SQLiteProtocolStore` (`D/FILE`, created and set up by the
/// test beforehand) and acts as one client of the account: an app, or its extension, on the
/// same file. It sends numbered messages to the peer and receives the peer's messages, through
/// files in `D` (see `Workspace`): the peer's mail queues (`--deliver`, one per client of the
/// peer account, each receiving a copy), its own queue `mail/NAME`, an append-only ledger
/// (`ledger/NAME.log`) written before each step becomes visible to others, the account's inbox
/// and the client's outbox. Everything is written with atomic renames or single appends, so a
/// process killed with SIGKILL at any point leaves consistent evidence.
///
/// Without `--send` it runs until it is killed (the crash test); with `--send N --expect E`
/// it exits once it sent N messages and received E envelopes (the two-process test); with
/// `--drain` it sends what its outbox holds, receives what is pending and exits. Before exiting
/// it closes its store (the ledger's last line is then `closed`) and has no task left running.
/// It exits with status 0 when done, 2 for a usage error and 3 when the library or a check
/// failed (the ledger and standard error say why).
///
///     sessionkit-stress commits --db FILE --count N [--durability power|process]
///
/// opens (or creates) the store `FILE`, commits N archive messages, one transaction each, and
/// closes it: the workload the durability test runs under `strace` to count the syncs.
@main
struct StressTool {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "commits" {
            exit(await CommitWorkload.run(Array(arguments.dropFirst())))
        }
        guard arguments.first == "run" else {
            FileHandle.standardError.write(Data("usage: sessionkit-stress run --dir D --client NAME ... | commits --db FILE --count N (see StressTool.swift)\n".utf8))
            exit(2)
        }
        arguments.removeFirst()
        let options: Options
        do {
            options = try Options(arguments)
        } catch {
            FileHandle.standardError.write(Data("sessionkit-stress: \(error)\n".utf8))
            exit(2)
        }
        exit(await run(options))
    }

    /// Runs the client and returns the exit status. Everything it made is released before it
    /// returns: the store is closed (its connections and their cached statements are gone, the
    /// WAL checkpointed) and no task of it is still running, so that `exit` finds no object
    /// in flight (the ASan run checks for leaks at exit).
    static func run(_ options: Options) async -> Int32 {
        let client: Client
        do {
            client = try await Client(options)
        } catch {
            FileHandle.standardError.write(Data("sessionkit-stress \(options.client): \(error)\n".utf8))
            return 3
        }
        do {
            try await client.run()
            try client.close()
            return 0
        } catch {
            FileHandle.standardError.write(Data("sessionkit-stress \(options.client): \(error)\n".utf8))
            client.closeAfterFailure()
            return 3
        }
    }
}

/// `sessionkit-stress commits`: N commits on one store, then close.
enum CommitWorkload {
    /// Runs the workload and returns the exit status (0, 2 for a usage error, 3 when the store
    /// failed).
    static func run(_ arguments: [String]) async -> Int32 {
        let usage = "usage: sessionkit-stress commits --db FILE --count N [--durability power|process]\n"
        var values: [String: String] = [:]
        if arguments.count.isMultiple(of: 2) {
            for index in stride(from: 0, to: arguments.count, by: 2) { values[arguments[index]] = arguments[index + 1] }
        }
        let durability: SQLiteStoreOptions.Durability?
        switch values["--durability"] {
        case nil, "power": durability = .powerLoss
        case "process": durability = .processCrash
        default: durability = nil
        }
        guard arguments.count == 2 * values.count, Set(values.keys).isSubset(of: ["--db", "--count", "--durability"]),
              let path = values["--db"], let count = values["--count"].flatMap({ Int($0) }), count >= 0, let durability else {
            FileHandle.standardError.write(Data(usage.utf8))
            return 2
        }
        do {
            let store = try SQLiteProtocolStore(
                path: path, storageKey: try StorageKey(bytes: stressStorageKeyBytes), options: SQLiteStoreOptions(durability: durability))
            for number in 0 ..< count {
                try await store.appendArchivedMessage(
                    Array("message \(number)".utf8), messageID: "m\(number)", conversationID: "commits", timestamp: Int64(number))
            }
            try store.close()
            return 0
        } catch {
            FileHandle.standardError.write(Data("sessionkit-stress commits: \(error)\n".utf8))
            return 3
        }
    }
}

/// A failure of the stress tool (usage, file or protocol), with what happened.
struct StressError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The command line of `run`.
struct Options: Sendable {
    /// The working folder shared by every process of the test.
    var directory = ""
    /// This client's name (its mail queue, ledger, outbox and message ids).
    var client = ""
    /// The account this client acts as.
    var account: ProtocolAddress
    /// The account's database file, relative to `directory`.
    var database = ""
    /// The one peer this client talks to.
    var peer: ProtocolAddress
    /// The peer's mail queues (each receives a copy of every message).
    var deliveries: [String] = []
    /// How many messages to send in all (`nil`: until killed).
    var sendLimit: Int?
    /// How many envelopes to receive before exiting (with `sendLimit`).
    var expected: Int?
    /// The most unacknowledged messages in a peer queue before new ones are queued.
    var window = 8
    /// The store's durability setting.
    var durability = SQLiteStoreOptions.Durability.processCrash
    /// Send the outbox, receive what is pending, and exit.
    var drain = false

    init(_ arguments: [String]) throws {
        var account: ProtocolAddress?
        var peer: ProtocolAddress?
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw StressError("\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--dir": directory = try value()
            case "--client": client = try value()
            case "--account": account = try Self.address(try value())
            case "--db": database = try value()
            case "--peer": peer = try Self.address(try value())
            case "--deliver": deliveries.append(try value())
            case "--send": sendLimit = try Self.number(try value())
            case "--expect": expected = try Self.number(try value())
            case "--window": window = try Self.number(try value())
            case "--durability":
                switch try value() {
                case "power": durability = .powerLoss
                case "process": durability = .processCrash
                case let other: throw StressError("unknown durability \(other)")
                }
            case "--drain": drain = true
            case let other: throw StressError("unknown option \(other)")
            }
            index += 1
        }
        guard let account, let peer, !directory.isEmpty, !client.isEmpty, !database.isEmpty, !deliveries.isEmpty else {
            throw StressError("--dir, --client, --account, --db, --peer and --deliver are required")
        }
        self.account = account
        self.peer = peer
    }

    /// `user.device` as an address.
    static func address(_ text: String) throws -> ProtocolAddress {
        guard let dot = text.lastIndex(of: "."), let device = UInt32(text[text.index(after: dot)...]) else {
            throw StressError("not an address: \(text)")
        }
        return try ProtocolAddress(userID: String(text[..<dot]), deviceID: device)
    }

    private static func number(_ text: String) throws -> Int {
        guard let number = Int(text), number >= 0 else { throw StressError("not a count: \(text)") }
        return number
    }
}
