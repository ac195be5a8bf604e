import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// What survives a crash: named blobs, written atomically (one call may change several).
actor Disk {
    private var blobs: [String: [UInt8]] = [:]

    func read(_ name: String) -> [UInt8]? { blobs[name] }

    func names(withPrefix prefix: String) -> [String] { blobs.keys.filter { $0.hasPrefix(prefix) }.sorted() }

    func write(_ changes: [String: [UInt8]?]) {
        for (name, value) in changes { blobs[name] = value }
    }

    /// Everything on the disk.
    func contents() -> [String: [UInt8]] { blobs }
}

/// Where a planned crash happens relative to the write it interrupts.
enum CrashPoint: Sendable, CaseIterable {
    /// The process dies just before the write: nothing of it reaches the disk.
    case beforeWrite
    /// The process dies just after the write: it is on the disk, but the caller never learns.
    case afterWrite
}

/// A `ProtocolStore` kept as serialized blobs on a `Disk` (as an app's database keeps them),
/// loading every state from its bytes on each call, with an optional planned crash at the
/// n-th write (counting this process's writes from 0, the app's own inbox and outbox writes
/// included). After the crash every call throws `DiskStore.crash`: the process is dead, and
/// the test starts a new store and manager on the same disk.
actor DiskStore: ProtocolStore {
    static let crash = SessionError.storage("simulated crash")

    let disk: Disk
    private let plan: (write: Int, point: CrashPoint)?
    private var writes = 0
    private(set) var crashed = false

    init(disk: Disk, crashAt plan: (write: Int, point: CrashPoint)? = nil) {
        self.disk = disk
        self.plan = plan
    }

    /// The number of writes this process attempted.
    var writeCount: Int { writes }

    private func alive() throws(SessionError) {
        if crashed { throw Self.crash }
    }

    /// Writes `changes` atomically, or crashes as planned.
    func write(_ changes: [String: [UInt8]?]) async throws(SessionError) {
        try alive()
        defer { writes += 1 }
        if let plan, plan.write == writes {
            crashed = true
            if plan.point == .afterWrite { await disk.write(changes) }
            throw Self.crash
        }
        await disk.write(changes)
    }

    private func read(_ name: String) async throws(SessionError) -> [UInt8]? {
        try alive()
        return await disk.read(name)
    }

    static func sessionName(_ address: ProtocolAddress) -> String { "session/\(address.userID)/\(address.deviceID)" }

    // MARK: IdentityKeyStore

    func localIdentity() async throws(SessionError) -> IdentityKeyPair {
        guard let blob = try await read("identity") else { throw .storage("no identity on disk") }
        return try IdentityKeyPair(serialized: blob)
    }

    func localRegistrationID() async throws(SessionError) -> RegistrationID {
        guard let blob = try await read("registrationID"), blob.count == 4,
              let id = RegistrationID(rawValue: blob.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) else {
            throw .storage("no registration id on disk")
        }
        return id
    }

    // MARK: SessionStore

    /// A stored blob: the store generation (u64, big-endian) and the state's serialization.
    static func stored(_ serialized: [UInt8], generation: UInt64) -> [UInt8] {
        (0 ..< 8).map { UInt8(truncatingIfNeeded: generation >> (56 - 8 * $0)) } + serialized
    }

    /// The generation and the serialization of a stored blob.
    static func split(_ blob: [UInt8]) throws(SessionError) -> (generation: UInt64, serialized: [UInt8]) {
        guard blob.count >= 8 else { throw .invalidPayload }
        return (blob.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }, Array(blob.dropFirst(8)))
    }

    func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord? {
        guard let blob = try await read(Self.sessionName(address)) else { return nil }
        let (generation, serialized) = try Self.split(blob)
        var record = try SessionRecord(serialized: serialized)
        record.generation = generation
        return record
    }

    func deleteSession(for address: ProtocolAddress) async throws(SessionError) {
        try await write([Self.sessionName(address): nil])
    }

    func deviceIDs(ofUser userID: String) async throws(SessionError) -> [UInt32] {
        try alive()
        return await disk.names(withPrefix: "session/\(userID)/").compactMap { UInt32($0.split(separator: "/").last ?? "") }.sorted()
    }

    // MARK: PreKeyStore

    func loadPreKeys() async throws(SessionError) -> LocalPreKeys? {
        try await read("prekeys").map { (blob: [UInt8]) throws(SessionError) in try LocalPreKeys(serialized: blob) }
    }

    /// The name of a replay record: one empty blob per record.
    static func recordName(_ record: BaseKeyRecord) -> String {
        "record/\(record.signedPreKeyID)/\(record.baseKey.hexString)"
    }

    func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        let stored = try await loadPreKeys()
        var keys = stored
        let result = try update(&keys)
        var changes: [String: [UInt8]?] = ["prekeys": keys?.serialized()]
        for id in stored?.signedPreKeyIDsRemoved(in: keys) ?? [] {
            for name in await disk.names(withPrefix: "record/\(id)/") { changes[name] = .some(nil) }
        }
        try await write(changes)
        return result
    }

    func hasRecordedBaseKey(_ baseKey: X25519.PublicKey, signedPreKeyID: UInt32) async throws(SessionError) -> Bool {
        try await read(Self.recordName(BaseKeyRecord(signedPreKeyID: signedPreKeyID, baseKey: baseKey))) != nil
    }

    // MARK: ProtocolStore

    /// The stored generation of the blob `name` (0 when none is stored).
    private func storedGeneration(_ name: String) async throws(SessionError) -> UInt64 {
        guard let blob = try await read(name) else { return 0 }
        return try Self.split(blob).generation
    }

    func commit(_ commit: StoreCommit) async throws(SessionError) {
        var changes: [String: [UInt8]?] = [:]
        for write in commit.sessions {
            let name = Self.sessionName(write.address)
            guard try await storedGeneration(name) == write.record.generation else { throw .staleState }
            changes[name] = Self.stored(write.record.serialized(), generation: write.record.generation + 1)
        }
        if let write = commit.sendingChain {
            let name = "sending/\(write.group)"
            guard try await storedGeneration(name) == write.chain.generation else { throw .staleState }
            changes[name] = Self.stored(write.chain.serialized(), generation: write.chain.generation + 1)
        }
        if let write = commit.receiverState {
            let name = "receiving/\(write.group)/\(write.sender)"
            guard try await storedGeneration(name) == write.state.generation else { throw .staleState }
            changes[name] = Self.stored(write.state.serialized(), generation: write.state.generation + 1)
        }
        if let record = commit.baseKeyRecord {
            guard try await read(Self.recordName(record)) == nil else { throw .staleState }
            guard var keys = try await loadPreKeys() else { throw .unknownPreKey }
            try commit.applyPreKeyChanges(to: &keys)
            changes["prekeys"] = keys.serialized()
            changes[Self.recordName(record)] = []
        }
        if let write = commit.groupMembers {
            changes["members/\(write.group)"] = write.members.isEmpty ? nil : Self.encodeMembers(write.members)
        }
        try await pendingChanges(of: commit, into: &changes)
        try await write(changes)
    }

    // MARK: GroupStore

    /// Members as a blob: `Encode(address)` after `Encode(address)`, in increasing order.
    static func encodeMembers(_ members: Set<ProtocolAddress>) -> [UInt8] {
        members.map(\.encoded).sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 }
    }

    func loadGroupMembers(for group: GroupID) async throws(SessionError) -> Set<ProtocolAddress> {
        guard var blob = try await read("members/\(group)")?[...] else { return [] }
        var members: Set<ProtocolAddress> = []
        while let length = blob.first.map(Int.init), blob.count >= 1 + length + 4 {
            let uid = String(decoding: blob.dropFirst().prefix(length), as: UTF8.self)
            let device = blob.dropFirst(1 + length).prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            members.insert(try ProtocolAddress(userID: uid, deviceID: device))
            blob = blob.dropFirst(1 + length + 4)
        }
        guard blob.isEmpty else { throw .invalidPayload }
        return members
    }

    /// None: this store keeps no join points (a group notice then re-sends no logged message).
    func loadGroupJoinPoints(for group: GroupID) async throws(SessionError) -> [ProtocolAddress: GroupJoinPoint] { [:] }

    /// The pending messages of (group, sender) as a blob: per message u64(id), u64(expiry),
    /// u32(length), bytes.
    private func pending(_ name: String, group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> [PendingGroupMessage] {
        guard var blob = try await read(name)?[...] else { return [] }
        var messages: [PendingGroupMessage] = []
        func number(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
        while blob.count >= 20 {
            let length = Int(number(blob.dropFirst(16).prefix(4)))
            guard blob.count >= 20 + length else { throw .invalidPayload }
            messages.append(PendingGroupMessage(
                id: number(blob.prefix(8)), group: group, sender: sender, message: Array(blob.dropFirst(20).prefix(length)),
                expiresAt: Timestamp(secondsSince1970: Int64(bitPattern: number(blob.dropFirst(8).prefix(8))))))
            blob = blob.dropFirst(20 + length)
        }
        guard blob.isEmpty else { throw .invalidPayload }
        return messages
    }

    private static func encodePending(_ messages: [PendingGroupMessage]) -> [UInt8] {
        func bytes(_ value: UInt64, _ count: Int) -> [UInt8] { (0 ..< count).map { UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - $0))) } }
        return messages.flatMap {
            bytes($0.id, 8) + bytes(UInt64(bitPattern: $0.expiresAt.secondsSince1970), 8) + bytes(UInt64($0.message.count), 4) + $0.message
        }
    }

    /// The pending-message writes of `commit`, as blob changes.
    private func pendingChanges(of commit: StoreCommit, into changes: inout [String: [UInt8]?]) async throws(SessionError) {
        let released = Set(commit.releasedPendingGroupMessages)
        guard commit.pendingGroupMessage != nil || !released.isEmpty || commit.expiringPendingGroupMessages != nil else { return }
        var nextID = (try await read("pending-next-id")).map { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } } ?? 1
        for name in await disk.names(withPrefix: "pending/") {
            let parts = name.split(separator: "/", maxSplits: 2)
            guard parts.count == 3 else { continue }
            var messages = try await pending(name, group: try GroupID(String(parts[1])), sender: try Self.address(String(parts[2])))
            let expiry = commit.expiringPendingGroupMessages
            messages.removeAll { message in released.contains(message.id) || (expiry.map { message.expiresAt <= $0 } ?? false) }
            changes[name] = messages.isEmpty ? nil : Self.encodePending(messages)
        }
        if let new = commit.pendingGroupMessage {
            let name = "pending/\(new.group.rawRepresentation.map { String(UnicodeScalar($0)) }.joined())/\(new.sender)"
            var messages = try await pending(name, group: new.group, sender: new.sender)
            messages.append(PendingGroupMessage(id: nextID, group: new.group, sender: new.sender, message: new.message, expiresAt: new.expiresAt))
            nextID += 1
            changes[name] = Self.encodePending(Array(messages.suffix(PendingGroupMessage.maximumPerSender)))
            changes["pending-next-id"] = (0 ..< 8).map { UInt8(truncatingIfNeeded: nextID >> (56 - 8 * $0)) }
        }
    }

    /// `user.device` back to an address.
    private static func address(_ text: String) throws(SessionError) -> ProtocolAddress {
        guard let dot = text.lastIndex(of: "."), let device = UInt32(text[text.index(after: dot)...]) else { throw .invalidPayload }
        return try ProtocolAddress(userID: String(text[..<dot]), deviceID: device)
    }

    func loadPendingGroupMessages(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> [PendingGroupMessage] {
        try await pending("pending/\(group.rawRepresentation.map { String(UnicodeScalar($0)) }.joined())/\(sender)", group: group, sender: sender)
    }

    func holdsReceiverChain(_ chainID: [UInt8]) async throws(SessionError) -> Bool {
        for name in await disk.names(withPrefix: "receiving/") {
            guard let blob = try await read(name) else { continue }
            let state = try SenderKeyReceiverState(serialized: try Self.split(blob).serialized)
            if state.chainIDs.contains(where: { $0.rawRepresentation == chainID }) { return true }
        }
        return false
    }

    // MARK: SenderKeyStore

    func loadSendingChain(for group: GroupID) async throws(SessionError) -> SenderKeySendingChain? {
        guard let blob = try await read("sending/\(group)") else { return nil }
        let (generation, serialized) = try Self.split(blob)
        var chain = try SenderKeySendingChain(serialized: serialized)
        chain.generation = generation
        return chain
    }

    func loadReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> SenderKeyReceiverState? {
        guard let blob = try await read("receiving/\(group)/\(sender)") else { return nil }
        let (generation, serialized) = try Self.split(blob)
        var state = try SenderKeyReceiverState(serialized: serialized)
        state.generation = generation
        return state
    }

    func removeReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) {
        try await write(["receiving/\(group)/\(sender)": nil])
    }
}

/// A pretend server for the crash tests: mailboxes of envelopes that stay until acknowledged
/// (so a message is redelivered after the receiver crashed), and published bundles.
actor MailServer {
    struct Envelope: Sendable, Equatable {
        let id: Int
        let from: ProtocolAddress
        let bytes: [UInt8]
    }

    private var nextID = 0
    private var mailboxes: [ProtocolAddress: [Envelope]] = [:]
    private var bundles: [ProtocolAddress: PreKeyBundle] = [:]

    func post(_ bytes: [UInt8], from sender: ProtocolAddress, to recipient: ProtocolAddress) {
        mailboxes[recipient, default: []].append(Envelope(id: nextID, from: sender, bytes: bytes))
        nextID += 1
    }

    /// The unacknowledged envelopes for `recipient`, oldest first.
    func pending(for recipient: ProtocolAddress) -> [Envelope] { mailboxes[recipient] ?? [] }

    func acknowledge(_ id: Int, for recipient: ProtocolAddress) {
        mailboxes[recipient]?.removeAll { $0.id == id }
    }

    func publish(_ upload: PreKeyUpload, for address: ProtocolAddress) {
        guard let bundle = upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first) else { return }
        bundles[address] = bundle
    }

    func bundle(for address: ProtocolAddress) -> PreKeyBundle? { bundles[address] }
}

/// An app on one device whose process can crash and restart. Durable app state lives on its
/// disk next to the protocol state: the inbox (received plaintexts, keyed by the app-level
/// message id they carry, so a message processed twice is stored once) and the outbox
/// (messages still to send, removed once posted).
final class CrashingApp {
    let address: ProtocolAddress
    let disk = Disk()
    let trust = TestTrustEvaluator()
    let random: SeededRandomSource
    private(set) var store: DiskStore
    private(set) var manager: SessionManager
    private(set) var restarts = 0
    /// Plaintexts returned by successful decrypt calls, per envelope id (to check that no
    /// envelope decrypts twice).
    private(set) var decryptedEnvelopes: [Int: Int] = [:]

    init(_ userID: String, seed: UInt64) async throws {
        address = TestSupport.address(userID, 1)
        random = SeededRandomSource(seed: seed)
        let registrationID = RegistrationID.random(using: random).rawValue
        await disk.write([
            "identity": try IdentityKeyPair(using: random).serialized(),
            "registrationID": (0 ..< 4).map { UInt8(truncatingIfNeeded: registrationID >> (24 - 8 * $0)) },
        ])
        store = DiskStore(disk: disk)
        manager = SessionManager(store: store, trust: trust, localAddress: address, random: random)
    }

    /// Plans a crash at this process's `write`-th write (from now on).
    func planCrash(at write: Int, _ point: CrashPoint) {
        store = DiskStore(disk: disk, crashAt: (write, point))
        manager = SessionManager(store: store, trust: trust, localAddress: address, random: random)
    }

    /// Starts a new process on the same disk (after a crash).
    func restart() {
        restarts += 1
        store = DiskStore(disk: disk)
        manager = SessionManager(store: store, trust: trust, localAddress: address, random: random)
    }

    var hasCrashed: Bool { get async { await store.crashed } }

    /// The app-level ids of the messages in the inbox.
    func inbox() async -> Set<String> {
        Set(await disk.names(withPrefix: "inbox/").map { String($0.dropFirst("inbox/".count)) })
    }

    /// Queues `text` (an app-level message id) for `recipient` in the durable outbox (the
    /// user's action; it happens before the crash plan counts writes).
    func queue(_ text: String, to recipient: ProtocolAddress) async {
        let sequence = await disk.names(withPrefix: "outbox/").count + disk.names(withPrefix: "sent/").count
        await disk.write([String(format: "outbox/%06d", sequence): Array("\(recipient.userID)|\(text)".utf8)])
    }

    /// Sends the outbox in order: encrypt → post → remove from the outbox. Returns false when
    /// the process crashed.
    func flushOutbox(_ server: MailServer) async -> Bool {
        for name in await disk.names(withPrefix: "outbox/") {
            guard let entry = await disk.read(name), let text = String(bytes: entry, encoding: .utf8) else { continue }
            let parts = text.split(separator: "|", maxSplits: 1).map(String.init)
            let recipient = TestSupport.address(parts[0], 1)
            do {
                let message = try await manager.encrypt(Array(parts[1].utf8), to: recipient)
                await server.post(message, from: address, to: recipient)
                try await store.write([name: nil, "sent/" + name.dropFirst("outbox/".count): entry])
            } catch {
                if await hasCrashed { return false }
                XCTFail("\(address) could not send \(parts[1]): \(error)")
            }
        }
        return true
    }

    /// Receives every pending envelope: decrypt, storing the plaintext in the inbox before the
    /// session is persisted, then acknowledge. A redelivered envelope that is a duplicate was
    /// processed before a crash: its plaintext must be in the inbox, and it is acknowledged.
    /// Returns false when the process crashed.
    func receiveAll(_ server: MailServer) async -> Bool {
        for envelope in await server.pending(for: address) {
            let store = store
            do {
                let plaintext = try await manager.decrypt(envelope.bytes, from: envelope.from, beforePersisting: { (message: DecryptedMessage) async throws(SessionError) in
                    try await store.write(["inbox/" + String(decoding: message.plaintext, as: UTF8.self): message.plaintext])
                }).plaintext
                decryptedEnvelopes[envelope.id, default: 0] += 1
                let stored = await inbox().contains(String(decoding: plaintext, as: UTF8.self))
                XCTAssertTrue(stored, "a returned plaintext is in the inbox")
                await server.acknowledge(envelope.id, for: address)
            } catch {
                if await hasCrashed { return false }
                if error == .duplicateMessage {
                    await server.acknowledge(envelope.id, for: address)
                    continue
                }
                XCTFail("\(address) could not decrypt envelope \(envelope.id): \(error)")
            }
        }
        return true
    }
}
