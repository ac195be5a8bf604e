import Foundation
import RelayWire
import SessionKit
import SessionKitSQLite
import Verification

/// One chat device: a `SessionManager` over its `SQLiteProtocolStore` (which is also its trust
/// store), talking to the relay through a `RelayConnection`.
///
/// It runs the commands of its script (`run(_:)`) and processes what the relay delivers
/// (`deliver(_:from:envelope:)`), concurrently: the manager serialises the work per peer device.
/// Everything it prints is one line; received messages start with `received`.
final class ChatClient: Sendable {
    /// This device.
    let address: ProtocolAddress
    /// Encrypts, decrypts and keeps the sessions, over `store`.
    let manager: SessionManager
    /// The device's encrypted SQLite file: identity, prekeys, sessions, sender keys, trust
    /// records and the archive of received messages.
    let store: SQLiteProtocolStore
    /// The WebSocket to the relay.
    let relay: RelayConnection
    private let fingerprints: FingerprintGenerator

    /// Whether to exit after the first delivery was persisted, before acknowledging it (the
    /// demo's crash; `--exit-before-ack`).
    let exitsBeforeAcknowledging: Bool

    init(
        address: ProtocolAddress, manager: SessionManager, store: SQLiteProtocolStore, relay: RelayConnection,
        exitsBeforeAcknowledging: Bool = false
    ) throws {
        self.address = address
        self.exitsBeforeAcknowledging = exitsBeforeAcknowledging
        self.manager = manager
        self.store = store
        self.relay = relay
        fingerprints = try FingerprintGenerator()
    }

    // MARK: Start-up

    /// Publishes what the relay does not have yet: everything on first start, afterwards only
    /// what `maintainPreKeys` replaced or added (nothing, usually).
    func publishPreKeys() async throws {
        let upload = try await manager.maintainPreKeys()
        guard !upload.isEmpty else { return }
        try await relay.upload(upload.serialized)
        say("published \(upload.oneTimePreKeys.count) one-time prekey(s), \(upload.oneTimeKEMPreKeys.count) one-time KEM prekey(s)"
            + (upload.signedPreKey == nil ? "" : ", a signed prekey with its last-resort KEM prekey"))
    }

    // MARK: Commands

    /// Runs one command line of the script:
    /// `send USER TEXT…`, `members NAME USER…`, `group NAME`, `gsend NAME TEXT…`, `safety USER`,
    /// `accept USER`, `history USER` (or `history group:NAME`).
    func run(_ line: String) async {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let command = words.first else { return }
        let rest = { (from: Int) in words.dropFirst(from).joined(separator: " ") }
        do {
            switch command {
            case "send" where words.count >= 3: try await send(rest(2), to: words[1])
            case "members" where words.count >= 3: try await setMembers(of: words[1], to: Array(words.dropFirst(2)))
            case "group" where words.count == 2: try await shareSenderKey(words[1])
            case "gsend" where words.count >= 3: try await sendToGroup(words[1], rest(2))
            case "safety" where words.count == 2: try await showSafetyNumbers(with: words[1])
            case "accept" where words.count == 2: try await acceptIdentityChange(of: words[1])
            case "history" where words.count == 2: try await showHistory(of: words[1])
            default: say("unknown command: \(line)")
            }
        } catch {
            say("failed: \(line): \(error)")
        }
    }

    /// Encrypts `text` to every device of `user` (starting sessions from the relay's bundles
    /// when there are none) and hands the envelopes to the relay. SessionKit has persisted each
    /// advanced session before it returns the envelope (encrypt → persist → send), so a relay
    /// failure here costs one message number, never a reused key.
    func send(_ text: String, to user: String) async throws {
        try await ensureSessions(with: user)
        for outcome in try await manager.encrypt(Array(text.utf8), toUser: user) {
            let device = outcome.address
            switch (outcome.result, outcome.envelope) {
            case let (.success, envelope?):
                try await relay.send(envelope.encodedText(), to: [device])
                say("sent to \(device): \(text)")
            case (.failure(.untrustedIdentity), _):
                say("not sent to \(device): its identity key changed; compare the safety number (safety \(user)), then accept it (accept \(user))")
            case let (.failure(error), _):
                say("not sent to \(device): \(error)")
            case (.success, nil):
                say("not sent to \(device): no envelope")
            }
        }
    }

    /// Starts a session with each device of `user` from the bundles the relay hands out, when
    /// we have no session with any of its devices.
    private func ensureSessions(with user: String) async throws {
        guard try await store.deviceIDs(ofUser: user).isEmpty else { return }
        let bundles = try await relay.bundles(of: user)
        if bundles.isEmpty { say("\(user) is not registered at the relay") }
        for published in bundles {
            let peer = try ProtocolAddress(userID: user, deviceID: published.device)
            guard let bytes = WireCoding.bytes(base64: published.bundle) else { throw RelayConnectionError.unexpectedAnswer }
            try await manager.processBundle(try PreKeyBundle(serialized: bytes), for: peer)
            say("new session with \(peer) from its bundle (\(published.note))")
        }
    }

    /// Starts a session with the device `peer` from the bundle the relay hands out for it (after
    /// a retry notice archived ours, or SessionKit advised one).
    private func startSession(with peer: ProtocolAddress) async throws {
        guard let published = try await relay.bundles(of: peer.userID).first(where: { $0.device == peer.deviceID }),
              let bytes = WireCoding.bytes(base64: published.bundle) else {
            say("no bundle of \(peer) at the relay")
            return
        }
        try await manager.processBundle(try PreKeyBundle(serialized: bytes), for: peer)
        say("new session with \(peer) from its bundle (\(published.note))")
    }

    /// Sets the member devices of group `name` in SessionKit: every device of `users` other than
    /// this one (starting sessions from the relay's bundles where there are none). A real app
    /// takes this roster from its server; SessionKit then accepts sender keys and group
    /// messages from these devices only.
    func setMembers(of name: String, to users: [String]) async throws {
        var devices: [ProtocolAddress] = []
        for user in users {
            if user != address.userID { try await ensureSessions(with: user) }
            devices += try await store.deviceIDs(ofUser: user).map { device in try ProtocolAddress(userID: user, deviceID: device) }
        }
        try await manager.setGroupMembers(devices.filter { $0 != address }, for: try GroupID(name))
        say("members of \(name): \(try await manager.groupMembers(of: try GroupID(name)).map(\.description).joined(separator: ", "))")
    }

    /// Sends our sender key for group `name` to each of its member devices, through the
    /// pairwise sessions.
    func shareSenderKey(_ name: String) async throws {
        let group = try GroupID(name)
        for outcome in try await manager.distributeSenderKey(for: group, to: try await manager.groupMembers(of: group)) {
            let device = outcome.address
            if let envelope = outcome.envelope {
                try await relay.send(envelope.encodedText(), to: [device])
                say("sent our sender key for \(name) to \(device)")
            } else {
                say("sender key for \(name) not sent to \(device): \(outcome.error.map { "\($0)" } ?? "no envelope")")
            }
        }
    }

    /// Encrypts `text` once with our sender key for group `name` and has the relay deliver the
    /// one envelope to every member device.
    func sendToGroup(_ name: String, _ text: String) async throws {
        let group = try GroupID(name)
        let devices = try await manager.groupMembers(of: group)
        let envelope = try await manager.groupEncryptEnvelope(Array(text.utf8), for: group)
        try await relay.send(envelope.encodedText(), to: devices)
        say("sent to \(name) (\(devices.map(\.description).joined(separator: ", "))): \(text)")
    }

    /// Prints the safety number with `user` for each of its devices (trust is the user's: one
    /// key, one number), and the one before the change when its identity key changed: the
    /// users compare them (in person, or by scanning the QR form) before accepting the new key.
    func showSafetyNumbers(with user: String) async throws {
        let local = try await manager.store.localIdentity().publicKey
        guard let record = try await store.record(forUser: user) else { return }
        for device in try await store.deviceIDs(ofUser: user) {
            let peer = try ProtocolAddress(userID: user, deviceID: device)
            if let previous = record.previousIdentityKey {
                say("safety number with \(peer) before its key changed: \(safetyNumber(local, user, previous))")
            }
            say("safety number with \(peer) (\(record.status)): \(safetyNumber(local, user, record.identityKey))")
        }
    }

    /// Accepts `user`'s changed identity key, when one awaits acceptance: sending to the user's
    /// devices is allowed again, and the sessions under the old key are retired.
    func acceptIdentityChange(of user: String) async throws {
        guard let record = try await store.record(forUser: user), record.isAwaitingAcceptance else { return }
        try await manager.acceptIdentityChange(record.identityKey, forUser: user)
        for device in try await store.deviceIDs(ofUser: user) {
            say("accepted the new identity key of \(try ProtocolAddress(userID: user, deviceID: device))")
        }
    }

    /// Prints the messages received in `conversation` (a user id, or `group:NAME`), oldest
    /// first, from the store's encrypted archive, where each was kept before its session
    /// advanced: they survive restarts.
    func showHistory(of conversation: String) async throws {
        let page = try await store.archivedMessages(inConversation: conversation, limit: 50)
        for entry in page.messages.reversed() {
            say("archived in \(conversation): \(String(decoding: entry.plaintext.bytes, as: UTF8.self))")
        }
    }

    private func safetyNumber(_ local: Ed25519.PublicKey, _ user: String, _ remote: Ed25519.PublicKey) -> String {
        fingerprints.fingerprint(
            version: 2, localUserID: address.userID, localIdentityKey: local, remoteUserID: user, remoteIdentityKey: remote
        ).displayable.formatted
    }

    // MARK: Deliveries (see Envelopes.swift)

    /// Prints what arrived.
    func show(_ received: ReceivedMessage) async throws {
        switch received {
        case let .message(message):
            if message.establishedSession { say("new session with \(message.sender) (it started it)") }
            if message.identityObservation == .newDevice { say("\(message.sender.userID) added a device: \(message.sender)") }
            if case .changed = message.identityObservation, !message.isQuarantined {
                say("identity key of \(message.sender) CHANGED: sending to \(message.sender.userID) is held until you compare "
                    + "the safety number (safety \(message.sender.userID)) and accept it (accept \(message.sender.userID))")
            }
            if message.isQuarantined {
                // A verified contact's key did not change: this came from another key. Shown apart.
                say("QUARANTINED from an unverified key claiming \(message.sender): \(String(decoding: message.plaintext, as: UTF8.self))")
            } else {
                say("received from \(message.sender.userID): \(String(decoding: message.plaintext, as: UTF8.self))")
            }
            // A prekey message used one of our one-time prekeys: top them up when they run low.
            if message.establishedSession { try await publishPreKeys() }
        case let .groupMessage(message):
            say("received in \(message.group.name) from \(message.sender.userID): \(String(decoding: message.plaintext, as: UTF8.self))")
        case let .senderKeyDistribution(group, sender, _, released):
            say("got the sender key of \(sender) for \(group.name)")
            // The group messages from `sender` that came before its sender key, kept by SessionKit.
            for message in released {
                say("received in \(group.name) from \(sender.userID): \(String(decoding: message.plaintext, as: UTF8.self))")
            }
        case let .undecryptable(failure):
            // Our state for the sender is lost (SPEC §9): SessionKit made a retry notice (at most
            // one per chain and one per hour) and says when to start a new session.
            say("a message from \(failure.sender) could not be decrypted (\(failure.error))")
            if let notice = failure.retryNotice {
                try await relay.send(notice.encodedText(), to: [failure.sender])
                say("sent a retry notice to \(failure.sender)")
            }
            if failure.startsNewSession { try await startSession(with: failure.sender) }
        case let .retryNotice(outcome):
            // The sender could not decrypt what we sent it.
            switch outcome.action {
            case let .sessionArchived(reregistered):
                say("\(outcome.sender) could not decrypt our messages\(reregistered ? " (it was reinstalled)" : ""): new session")
                try await startSession(with: outcome.sender)
            case let .distributionResent(encryption):
                if let envelope = encryption.envelope {
                    try await relay.send(envelope.encodedText(), to: [outcome.sender])
                    say("sent our sender key for \(outcome.group?.name ?? "?") to \(outcome.sender) again")
                }
            case .untrustedIdentity:
                say("a retry notice claiming \(outcome.sender) came from another identity key: ignored")
            case .rateLimited, .ignored:
                say("a retry notice from \(outcome.sender) changed nothing (\(outcome.action))")
            }
        }
    }
}

/// Prints one line of the client's output, written at once (standard output is a file or a
/// pipe in the demo, where `print` would buffer it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
