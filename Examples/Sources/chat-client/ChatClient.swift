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
    /// Bundles that came with a changed identity key, until the user accepts it.
    let changedKeys = ChangedKeys()
    /// Where received files are saved.
    let files: URL

    /// Whether to exit after the first delivery was persisted, before acknowledging it (the
    /// demo's crash; `--exit-before-ack`).
    let exitsBeforeAcknowledging: Bool

    init(
        address: ProtocolAddress, manager: SessionManager, store: SQLiteProtocolStore, relay: RelayConnection,
        files: URL, exitsBeforeAcknowledging: Bool = false
    ) throws {
        self.address = address
        self.files = files
        self.exitsBeforeAcknowledging = exitsBeforeAcknowledging
        self.manager = manager
        self.store = store
        self.relay = relay
        fingerprints = try FingerprintGenerator()
    }

    // MARK: Start-up

    /// Publishes what the relay does not have yet: everything on first start (or after a
    /// restore), afterwards what `maintainPreKeys` rotated, and then one-time prekeys by the
    /// count the relay reports (`replenishPreKeys`): the relay hands each out once, used or not,
    /// so only its count says when bundles are about to go out without one.
    func publishPreKeys() async throws {
        let upload = try await manager.maintainPreKeys()
        if !upload.isEmpty {
            try await relay.upload(upload.serialized)
            say("published \(upload.oneTimePreKeys.count) one-time prekey(s), \(upload.oneTimeKEMPreKeys.count) one-time KEM prekey(s)"
                + (upload.signedPreKey == nil ? "" : ", a signed prekey with its last-resort KEM prekey"))
        }
        let held = try await relay.preKeyCount()
        let more = try await manager.replenishPreKeys(serverOneTimePreKeyCount: held.oneTime, serverOneTimeKEMPreKeyCount: held.oneTimeKEM)
        guard !more.isEmpty else { return }
        try await relay.upload(more.serialized)
        say("the relay holds \(held.oneTime) one-time prekey(s) and \(held.oneTimeKEM) one-time KEM prekey(s) of ours: published "
            + "\(more.oneTimePreKeys.count) and \(more.oneTimeKEMPreKeys.count) more")
    }

    // MARK: Commands

    /// Runs one command line of the script:
    /// `send USER TEXT…`, `members NAME USER…`, `group NAME`, `gsend NAME TEXT…`, `safety USER`,
    /// `accept USER`, `history USER` (or `history group:NAME`), `sendfile USER PATH`,
    /// `export PATH [CONVERSATION…]`.
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
            case "sendfile" where words.count == 3: try await sendFile(words[2], to: words[1])
            case "export" where words.count >= 2: try await exportAccount(to: words[1], listing: Array(words.dropFirst(2)))
            default: say("unknown command: \(line)")
            }
        } catch {
            say("failed: \(line): \(error)")
        }
    }

    /// Encrypts `text` to every device of `user` (starting sessions from the relay's bundles
    /// when there are none) and hands the envelopes to the relay with the device list
    /// (`deliver(_:toUser:text:repairing:)`). SessionKit has persisted each advanced session
    /// (and kept the message in its send log) before it returns the envelope
    /// (encrypt → persist → send), so a relay failure here costs one message number, never a
    /// reused key.
    func send(_ text: String, to user: String) async throws {
        try await ensureSessions(with: user)
        var messages: [Outgoing] = []
        var withoutSession: [ProtocolAddress] = []
        for outcome in try await manager.encrypt(Array(text.utf8), toUser: user) {
            // A device whose session was archived (a retry notice, a restored older copy of our
            // file) needs a new one from its bundle.
            if case .failure(.noSession) = outcome.result {
                withoutSession.append(outcome.address)
            } else if let message = outgoing(outcome, user: user, shown: shown(Array(text.utf8))) {
                messages.append(message)
            }
        }
        for peer in withoutSession {
            guard try await startSession(with: peer) else { continue }
            messages += try await encrypt([Array(text.utf8)], to: peer)
        }
        try await deliver(messages, toUser: user, text: Array(text.utf8), repairing: true)
    }

    /// A message for one device of a user, with what the log shows of it.
    struct Outgoing: Sendable {
        let message: DeviceEnvelope
        let shown: String
    }

    /// The message of a successful encryption, or `nil` after saying why there is none.
    private func outgoing(_ outcome: DeviceEncryption, user: String, shown: String) -> Outgoing? {
        let device = outcome.address
        switch (outcome.result, outcome.envelope) {
        case let (.success, envelope?):
            return Outgoing(message: DeviceEnvelope(device: device.deviceID, envelope: envelope.encodedText()), shown: shown)
        case (.failure(.untrustedIdentity), _):
            say("not sent to \(device): its identity key changed; compare the safety number (safety \(user)), then accept it (accept \(user))")
        case let (.failure(error), _):
            say("not sent to \(device): \(error)")
        case (.success, nil):
            say("not sent to \(device): no envelope")
        }
        return nil
    }

    /// Hands `messages` (pairwise, to devices of `user`) to the relay, naming the devices this
    /// device has sessions with and the registration id each session recorded
    /// (`deviceListRequest(forUser:)`). The relay checks them against its `DeviceDirectory`;
    /// when it refuses (a `DeviceListMismatch`: nothing was queued), `applyDeviceListMismatch`
    /// archives the sessions of the stale and extra devices, new sessions start from fetched
    /// bundles, and the messages go again, once: the unaffected devices' envelopes as they were,
    /// a stale device's messages from the send log (`takeLoggedMessages`, those sent under the
    /// new session's key) in its new session, `text` to a missing device. A stale device whose
    /// bundle carries a changed identity key gets nothing until the user accepts the key
    /// (`accept USER`, which sends it `text` then, never the old key's log).
    private func deliver(_ messages: [Outgoing], toUser user: String, text: [UInt8], repairing: Bool) async throws {
        guard !messages.isEmpty else { return }
        let request = try await manager.deviceListRequest(forUser: user)
        let devices = request.map { DeviceRegistration(device: $0.key, registrationID: $0.value?.rawValue) }.sorted { $0.device < $1.device }
        guard let mismatch = try await relay.send(messages.map(\.message), toUser: user, naming: devices) else {
            for message in messages { say("sent to \(user).\(message.message.device): \(message.shown)") }
            return
        }
        var answer: [String] = []
        if !mismatch.stale.isEmpty { answer.append("stale \(mismatch.stale) (registration id changed)") }
        if !mismatch.missing.isEmpty { answer.append("missing \(mismatch.missing)") }
        if !mismatch.extra.isEmpty { answer.append("extra \(mismatch.extra)") }
        say("refused by the relay: devices of \(user) \(answer.joined(separator: ", "))")
        guard repairing else { return }
        let fetch = try await manager.applyDeviceListMismatch(mismatch, forUser: user)
        var again = messages.filter { !mismatch.stale.contains($0.message.device) && !mismatch.extra.contains($0.message.device) }
        for device in fetch {
            let peer = try ProtocolAddress(userID: user, deviceID: device)
            guard try await startSession(with: peer) else {
                // A new key to accept first: the refused message waits for it.
                if mismatch.stale.contains(device), !text.isEmpty { await changedKeys.keep(refused: text, for: peer) }
                continue
            }
            if mismatch.stale.contains(device) {
                // Without a send log entry (expired, or the log is off) the refused text itself.
                let logged = try await resendLogged(to: peer)
                again += logged.isEmpty && !text.isEmpty ? try await encrypt([text], to: peer) : logged
            } else {
                again += try await encrypt([text], to: peer)
            }
        }
        try await deliver(again, toUser: user, text: text, repairing: false)
    }

    /// The messages the send log kept for the archived session with `peer` (taken from the
    /// log), encrypted again in the current session.
    private func resendLogged(to peer: ProtocolAddress) async throws -> [Outgoing] {
        let logged = try await manager.takeLoggedMessages(ofArchivedSessionWith: peer)
        say("re-sending \(logged.count) message(s) from the send log to \(peer) in the new session")
        return try await resend(logged, to: peer)
    }

    /// Logged messages encrypted again to `peer` (only those sent under its current key: SPEC §9).
    private func resend(_ entries: [SendLogEntry], to peer: ProtocolAddress) async throws -> [Outgoing] {
        var result: [Outgoing] = []
        for (entry, outcome) in zip(entries, await manager.resendLoggedMessages(entries, to: peer)) {
            if let message = outgoing(outcome, user: peer.userID, shown: shown(entry.plaintext)) { result.append(message) }
        }
        return result
    }

    /// `plaintexts` encrypted to `peer`, in order.
    private func encrypt(_ plaintexts: [[UInt8]], to peer: ProtocolAddress) async throws -> [Outgoing] {
        var result: [Outgoing] = []
        for plaintext in plaintexts {
            for outcome in try await manager.encrypt(plaintext, toDevices: [peer]) {
                if let message = outgoing(outcome, user: peer.userID, shown: shown(plaintext)) { result.append(message) }
            }
        }
        return result
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
    /// a retry notice or a device-list answer archived ours, or SessionKit advised one).
    /// Returns whether it did: a bundle under a changed identity key is kept until the user
    /// accepts the key (`acceptIdentityChange(of:)`).
    @discardableResult
    private func startSession(with peer: ProtocolAddress) async throws -> Bool {
        guard let published = try await relay.bundles(of: peer.userID).first(where: { $0.device == peer.deviceID }),
              let bytes = WireCoding.bytes(base64: published.bundle) else {
            say("no bundle of \(peer) at the relay")
            return false
        }
        let bundle = try PreKeyBundle(serialized: bytes)
        let processed: Result<Void, SessionError>
        do { processed = .success(try await manager.processBundle(bundle, for: peer)) } catch { processed = .failure(error) }
        if case .failure(.untrustedIdentity) = processed {
            await changedKeys.hold(bundle, for: peer)
            say("not sent to \(peer): untrustedIdentity, its new bundle has another identity key; compare the safety number "
                + "(safety \(peer.userID)), then accept it (accept \(peer.userID))")
            return false
        }
        try processed.get()
        say("new session with \(peer) from its bundle (\(published.note))")
        return true
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
        // A chain that sent its 1,000 messages or is 7 days old is replaced first (the policy's
        // defaults), and the new chain goes to the members pairwise.
        for outcome in try await manager.rotateSenderKeyIfDue(for: group) {
            if let envelope = outcome.envelope {
                try await relay.send(envelope.encodedText(), to: [outcome.address])
                say("sent our new sender key for \(name) to \(outcome.address) (the old chain was due for rotation)")
            }
        }
        let envelope = try await manager.groupEncryptEnvelope(Array(text.utf8), for: group)
        try await relay.send(envelope.encodedText(), to: devices)
        say("sent to \(name) (\(devices.map(\.description).joined(separator: ", "))): \(text)")
    }

    /// Prints the safety number with `user` for each of its devices (trust is the user's: one
    /// key, one number), and the one before the change when its identity key changed (a message
    /// under the new key arrived, or a bundle with it did): the users compare them (in person,
    /// or by scanning the QR form) before accepting the new key.
    func showSafetyNumbers(with user: String) async throws {
        let local = try await manager.store.localIdentity().publicKey
        guard let record = try await store.record(forUser: user) else { return }
        let changed = await changedKeys.identityKey(ofUser: user)
        for device in try await store.deviceIDs(ofUser: user) {
            let peer = try ProtocolAddress(userID: user, deviceID: device)
            if let changed, changed != record.identityKey {
                say("safety number with \(peer) before its key changed: \(safetyNumber(local, user, record.identityKey))")
                say("safety number with \(peer) (new key, not accepted yet): \(safetyNumber(local, user, changed))")
                continue
            }
            if let previous = record.previousIdentityKey {
                say("safety number with \(peer) before its key changed: \(safetyNumber(local, user, previous))")
            }
            say("safety number with \(peer) (\(record.status)): \(safetyNumber(local, user, record.identityKey))")
        }
    }

    /// Accepts `user`'s changed identity key, when one awaits acceptance: sending to the user's
    /// devices is allowed again, and the sessions under the old key are retired. When the key
    /// came in a bundle (the relay said the device was stale), a session starts from the kept
    /// bundle and the message the relay refused is sent again in it. The send log gives the
    /// new key nothing: what the old key was sent is never re-sent to another (SPEC §9), and
    /// accepting the key discards it.
    func acceptIdentityChange(of user: String) async throws {
        let held = await changedKeys.take(user)
        if let key = held.first?.bundle.identityKey {
            try await manager.acceptIdentityChange(key, forUser: user)
            var messages: [Outgoing] = []
            for (peer, bundle) in held {
                say("accepted the new identity key of \(peer)")
                try await manager.processBundle(bundle, for: peer)
                let refused = await changedKeys.takeRefused(for: peer)
                say("new session with \(peer) from its bundle; re-sending \(refused.count) refused message(s)")
                messages += try await encrypt(refused, to: peer)
            }
            try await deliver(messages, toUser: user, text: [], repairing: false)
            return
        }
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
            } else if let file = AttachmentMessage(message.plaintext) {
                try await receive(file, from: message.sender)
            } else {
                say("received from \(message.sender.userID): \(String(decoding: message.plaintext, as: UTF8.self))")
            }
            // A prekey message used one of our one-time prekeys: top them up when they run low.
            if message.establishedSession { try await publishPreKeys() }
        case let .groupMessage(message):
            say("received in \(message.group.name) from \(message.sender.userID): \(String(decoding: message.plaintext, as: UTF8.self))")
        case let .senderKeyDistribution(group, sender, _, released, undecryptable):
            say("got the sender key of \(sender) for \(group.name)")
            // The group messages from `sender` that came before its sender key, kept by SessionKit.
            for message in released {
                say("received in \(group.name) from \(sender.userID): \(String(decoding: message.plaintext, as: UTF8.self))")
            }
            // Kept messages sent before we were given the chain: a placeholder each, and the notice.
            for failure in undecryptable {
                say("a message in \(group.name) from \(sender) could not be decrypted (\(failure.error))")
                if let notice = failure.retryNotice { try await relay.send(notice.encodedText(), to: [failure.sender]) }
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
                // The messages of the chain it could not read, from the send log, again in the new session.
                if try await startSession(with: outcome.sender), !outcome.resend.isEmpty {
                    say("re-sending \(outcome.resend.count) message(s) from the send log to \(outcome.sender)")
                    let messages = try await resend(outcome.resend, to: outcome.sender)
                    try await deliver(messages, toUser: outcome.sender.userID, text: [], repairing: false)
                }
            case .loggedMessagesReturned:
                // The sender started a new session before its notice for older messages arrived.
                say("re-sending \(outcome.resend.count) message(s) from the send log to \(outcome.sender) in the current session")
                let messages = try await resend(outcome.resend, to: outcome.sender)
                try await deliver(messages, toUser: outcome.sender.userID, text: [], repairing: false)
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

extension ChatClient {
    // MARK: Attachments

    /// Sends the file at `path` to `user` as an attachment (SPEC §10): encrypted to a
    /// ciphertext file with a new key (`Attachment.encrypt(contentsOf:to:)`), the ciphertext
    /// stored at the relay, and the 57-byte pointer (key, the ciphertext's SHA-256, the length)
    /// sent in a message. The relay never sees the key or the content.
    func sendFile(_ path: String, to user: String) async throws {
        let source = URL(fileURLWithPath: path)
        let sealed = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("chat-client-\(UUID().uuidString).age")
        defer { try? FileManager.default.removeItem(at: sealed) }
        let pointer = try Attachment.encrypt(contentsOf: source, to: sealed)
        let ciphertext = try Data(contentsOf: sealed)
        let id = try await relay.putAttachment(Array(ciphertext))
        say("encrypted \(source.lastPathComponent) (\(pointer.contentLength) bytes) to \(ciphertext.count) bytes of ciphertext, "
            + "stored at the relay as \(id)")
        let message = AttachmentMessage(relayID: id, pointer: pointer, name: source.lastPathComponent)
        try await send(message.text, to: user)
    }

    /// Fetches the ciphertext of `file` from the relay and decrypts it into the files folder
    /// (`Attachment.decrypt(contentsOf:pointer:to:)`: the file appears only once the length,
    /// every chunk and the ciphertext's SHA-256 against the pointer's digest are right).
    func receive(_ file: AttachmentMessage, from sender: ProtocolAddress) async throws {
        let ciphertext = try await relay.attachment(file.relayID)
        let sealed = files.appendingPathComponent(".\(file.relayID).age")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        try Data(ciphertext).write(to: sealed)
        defer { try? FileManager.default.removeItem(at: sealed) }
        let destination = files.appendingPathComponent(file.name)
        try Attachment.decrypt(contentsOf: sealed, pointer: file.pointer, to: destination)
        let digest = file.pointer.ciphertextDigest.prefix(8).map { String(format: "%02x", $0) }.joined()
        say("received a file from \(sender.userID): \(file.name), \(file.pointer.contentLength) bytes (ciphertext SHA-256 \(digest)… "
            + "matches the pointer), saved to \(destination.path)")
    }

    /// What the log shows of a message sent: its text, or the file an attachment message points to.
    func shown(_ plaintext: [UInt8]) -> String {
        if let file = AttachmentMessage(plaintext) { return "file \(file.name) (attachment \(file.relayID))" }
        return String(decoding: plaintext, as: UTF8.self)
    }

    // MARK: Account export

    /// Writes an export of this account (SPEC §10: the identity, every trust record and every
    /// archived conversation the store knows the id of, and those of `conversations` too, which
    /// only a database written before the store recorded ids needs) to `path`,
    /// encrypted to a new recovery code, which goes to `path.code` (mode 0600; an app shows it
    /// to the user once). The export holds no sessions and no registration id: a device
    /// restored from it (`chat-client --restore`) draws a new one, and its peers start new
    /// sessions when the relay says it is stale.
    func exportAccount(to path: String, listing conversations: [String]) async throws {
        let code = try AccountExport.newRecoveryCode()
        let codePath = path + ".code"
        guard FileManager.default.createFile(atPath: codePath, contents: Data(code.secretKeyString.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let contents = AccountExportContents.everything(
            userID: address.userID, contacts: conversations.filter { !$0.hasPrefix("group:") }, conversations: conversations)
        let report = try await store.exportAccount(contents, to: [AccountExportDestination(path: path, protection: .recoveryCode(code.recipient))])
        say("exported \(address.userID)'s account to \(path): the identity, \(report.trustRecordCount) trust record(s), "
            + "\(report.messageCount) archived message(s); the recovery code is in \(codePath)")
    }
}

/// The content of a message that carries a file: `attachment ID POINTER NAME`, the relay's id
/// of the ciphertext, the 57-byte pointer in base64 and the file's name.
struct AttachmentMessage: Sendable {
    let relayID: String
    let pointer: AttachmentPointer
    let name: String

    init(relayID: String, pointer: AttachmentPointer, name: String) {
        self.relayID = relayID
        self.pointer = pointer
        self.name = name
    }

    /// Parses a message's plaintext; `nil` when it is not an attachment message.
    init?(_ plaintext: [UInt8]) {
        let words = String(decoding: plaintext, as: UTF8.self).split(separator: " ", maxSplits: 3).map(String.init)
        guard words.count == 4, words[0] == "attachment", let bytes = WireCoding.bytes(base64: words[2]),
              let pointer = try? AttachmentPointer(serialized: bytes),
              !words[3].contains("/"), words[3] != "..", words[3] != "." else { return nil }
        self.init(relayID: words[1], pointer: pointer, name: words[3])
    }

    /// The message's text.
    var text: String { "attachment \(relayID) \(WireCoding.base64(pointer.serialized())) \(name)" }
}

/// Bundles that came with a changed identity key (the relay said the device was stale, and its
/// new bundle is under another key), kept until the user accepts the key.
actor ChangedKeys {
    private var bundles: [ProtocolAddress: PreKeyBundle] = [:]
    private var refused: [ProtocolAddress: [[UInt8]]] = [:]

    /// Keeps `bundle` for `peer`.
    func hold(_ bundle: PreKeyBundle, for peer: ProtocolAddress) { bundles[peer] = bundle }

    /// Keeps `text`, a message the relay refused for `peer`, to send once its key is accepted
    /// (only while a bundle is kept for it).
    func keep(refused text: [UInt8], for peer: ProtocolAddress) {
        if bundles[peer] != nil { refused[peer, default: []].append(text) }
    }

    /// Takes the refused messages kept for `peer`.
    func takeRefused(for peer: ProtocolAddress) -> [[UInt8]] { refused.removeValue(forKey: peer) ?? [] }

    /// The new identity key of `user`, if a bundle with one is kept.
    func identityKey(ofUser user: String) -> Ed25519.PublicKey? {
        bundles.first { $0.key.userID == user }?.value.identityKey
    }

    /// Takes the kept bundles of `user`'s devices, by device id.
    func take(_ user: String) -> [(ProtocolAddress, bundle: PreKeyBundle)] {
        let taken = bundles.filter { $0.key.userID == user }.sorted { $0.key.deviceID < $1.key.deviceID }
        for (peer, _) in taken { bundles[peer] = nil }
        return taken.map { ($0.key, $0.value) }
    }
}

/// Prints one line of the client's output, written at once (standard output is a file or a
/// pipe in the demo, where `print` would buffer it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
