import Foundation
import SignalPrimitives

/// Fan-out: one message to every device of a user (and to the local user's other devices),
/// each device with its own session and outcome.
extension SessionManager {
    /// Encrypts `plaintext` for the devices of `userID`, each as `encrypt(_:to:)` does, the
    /// advanced sessions stored in one store commit (`encrypt(_:toDevices:)`); with
    /// `includingOwnDevices`, also for this user's other devices that have a
    /// session (live copies of what the user sends, SPEC §6: keep self-encryption for what
    /// future devices must read). Returns one outcome per device, by user (the recipient
    /// first) and ascending device id, each with its `envelope`.
    ///
    /// Which devices: the manager knows only the devices it has sessions with. Pass `devices`,
    /// the user's current device list from your server, and every listed device gets an
    /// outcome: `.failure(.noSession)` for one without a session (fetch its bundle, call
    /// `processBundle(_:for:)`, encrypt to it again), while a device with a session that is not
    /// listed (removed from the account) is not encrypted to. Without `devices`, the outcomes
    /// are exactly the devices with a stored record, and a device without one is silently
    /// not reached (a device whose record holds no current session, because a retry notice
    /// archived it or because it only sent a message this device could not decrypt, gets
    /// `.failure(.noSession)`).
    ///
    /// Devices are independent: one device failing (`untrustedIdentity`, `noSession`, a store
    /// error) leaves that device's session unchanged and does not stop the others, whose
    /// sessions advance and whose messages should be sent. The app decides what to do about the
    /// failed ones (for example ask the user to accept a changed key, then encrypt again to
    /// that device only).
    /// - Throws: `SessionError.storage` only when the devices cannot be listed;
    ///   `.invalidAddress` for a user id that is not 1–255 UTF-8 bytes; `.invalidConfiguration`
    ///   for a plaintext over `maximumEnvelopePlaintextByteCount` bytes (nothing encrypted).
    public func encrypt(
        _ plaintext: [UInt8], toUser userID: String, devices: [UInt32]? = nil, includingOwnDevices: Bool = false
    ) async throws(SessionError) -> [DeviceEncryption] {
        // The user id is checked first, so that a malformed one is an error, not an empty result.
        _ = try ProtocolAddress(userID: userID, deviceID: 0)
        try Self.checkEnvelopeSize(plaintext)
        var addresses: [ProtocolAddress] = []
        let recipientDevices: [UInt32]
        if let devices { recipientDevices = Array(Set(devices)).sorted() } else { recipientDevices = try await store.deviceIDs(ofUser: userID) }
        for device in recipientDevices {
            addresses.append(try ProtocolAddress(userID: userID, deviceID: device))
        }
        if includingOwnDevices, !Array(userID.utf8).elementsEqual(localAddress.userIDBytes) {
            for device in try await store.deviceIDs(ofUser: localAddress.userID) where device != localAddress.deviceID {
                addresses.append(try ProtocolAddress(userID: localAddress.userID, deviceID: device))
            }
        } else if includingOwnDevices {
            addresses.removeAll { $0 == localAddress }
        }
        return await encryptTogether(plaintext, to: addresses, contentType: .application, group: nil)
    }

    /// Encrypts `plaintext` to every device your server lists for `userID` (`devices`) and for
    /// the local user (`ownDevices`, this device left out), starting a session from
    /// `bundle(for:)` with each listed device that has none, so that one call reaches every
    /// device, new ones included (the new sessions are started concurrently, then every
    /// message is encrypted and its session stored in one store commit, as
    /// `encrypt(_:toDevices:)` does). Returns one outcome per listed device, by user (the recipient
    /// first) and ascending device id, each with its `envelope`; a device with a session that
    /// is not listed is not encrypted to.
    ///
    /// Trust per user decides who receives: a bundle or session under another key than the
    /// user's on record is `untrustedIdentity` (and for the local user's devices, any key but
    /// the local identity key is `ownDeviceIdentityMismatch`), so a device the server added
    /// with a key of its own receives nothing. Per device: `bundle` returning `nil` is
    /// `noSession` (the server has no bundle for it); `bundle` throwing is `storage` (with the
    /// error's description); the errors of `processBundle(_:for:)` and `encrypt(_:to:)`.
    /// Devices are independent: one failing leaves the others' sessions advanced and their
    /// messages to send.
    /// - Throws: `SessionError.invalidAddress` for a user id that is not 1–255 UTF-8 bytes;
    ///   `.invalidConfiguration` for a plaintext over `maximumEnvelopePlaintextByteCount` bytes
    ///   (nothing encrypted).
    public func encrypt(
        _ plaintext: [UInt8], toUser userID: String, devices: [UInt32], ownDevices: [UInt32] = [],
        fetchingBundles bundle: @escaping @Sendable (ProtocolAddress) async throws -> PreKeyBundle?
    ) async throws(SessionError) -> [DeviceEncryption] {
        _ = try ProtocolAddress(userID: userID, deviceID: 0)
        try Self.checkEnvelopeSize(plaintext)
        var addresses: [ProtocolAddress] = []
        for device in Set(devices).sorted() {
            let address = try ProtocolAddress(userID: userID, deviceID: device)
            if address != localAddress { addresses.append(address) }
        }
        if !Array(userID.utf8).elementsEqual(localAddress.userIDBytes) {
            for device in Set(ownDevices).sorted() where device != localAddress.deviceID {
                addresses.append(try ProtocolAddress(userID: localAddress.userID, deviceID: device))
            }
        }
        // New sessions first (concurrently: each fetches a bundle), then one commit for all.
        let failures = await ensureSessions(with: addresses, fetchingBundle: bundle)
        let sent = await encryptTogether(
            plaintext, to: addresses.filter { failures[$0] == nil }, contentType: .application, group: nil)
        var outcomes = Dictionary(sent.map { ($0.address, $0) }, uniquingKeysWith: { first, _ in first })
        for (address, error) in failures {
            outcomes[address] = DeviceEncryption(from: localAddress, to: address, group: nil, result: .failure(error))
        }
        return addresses.compactMap { outcomes[$0] }
    }

    /// Starts a session from `bundle(address)` with each of `addresses` that has no current
    /// session, concurrently (each fetches a bundle); returns the devices that failed, with why.
    func ensureSessions(
        with addresses: [ProtocolAddress], fetchingBundle bundle: @escaping @Sendable (ProtocolAddress) async throws -> PreKeyBundle?
    ) async -> [ProtocolAddress: SessionError] {
        await withTaskGroup(of: (ProtocolAddress, SessionError?).self) { group in
            for address in addresses {
                group.addTask {
                    do throws(SessionError) {
                        try await self.ensureSession(with: address, fetchingBundle: bundle)
                        return (address, nil)
                    } catch {
                        return (address, error)
                    }
                }
            }
            var failures: [ProtocolAddress: SessionError] = [:]
            for await (address, error) in group { if let error { failures[address] = error } }
            return failures
        }
    }

    /// Starts a session with `address` from `bundle(address)` when it has no current session.
    func ensureSession(
        with address: ProtocolAddress, fetchingBundle bundle: @Sendable (ProtocolAddress) async throws -> PreKeyBundle?
    ) async throws(SessionError) {
        guard try await loadSession(for: address)?.remoteIdentityKey == nil else { return }
        let fetched: PreKeyBundle?
        do { fetched = try await bundle(address) } catch { throw .storage("bundle for \(address): \(error)") }
        guard let fetched else { throw .noSession }
        try await processBundle(fetched, for: address)
    }

    /// Encrypts `plaintext` to each of `devices` through its pairwise session and stores every
    /// advanced session in **one store commit** (one transaction, however many devices): a
    /// burst to many peers, a pairwise fan-out to a group's members. Returns one outcome per
    /// device, in the order given (a device named twice once), each with its `envelope`.
    ///
    /// The devices' locks are taken in one call, their records and trust decisions read in one
    /// call each, and the records are encrypted off the actor, in place, by one task per core
    /// (for 32 devices and more), so that a burst to many peers uses every core.
    ///
    /// Devices are independent: one that cannot be encrypted to with the others (no session,
    /// an identity to accept, a sending policy, or a commit the store refused) is then
    /// encrypted to alone, as `encrypt(_:to:)` does, and its outcome says why it failed; the
    /// others' sessions advance and their messages should be sent.
    /// - Throws: `SessionError.invalidConfiguration` for a plaintext over
    ///   `maximumEnvelopePlaintextByteCount` bytes (nothing encrypted).
    public func encrypt(_ plaintext: [UInt8], toDevices devices: [ProtocolAddress]) async throws(SessionError) -> [DeviceEncryption] {
        try Self.checkEnvelopeSize(plaintext)
        return await encryptTogether(plaintext, to: devices, contentType: .application, group: nil)
    }

    /// Encrypts `plaintext` to each of `devices` (once per device, in their order): those that
    /// can be in one store commit (`encryptInOneCommit`), the others alone, each reporting its
    /// own outcome.
    func encryptTogether(
        _ plaintext: [UInt8], to devices: [ProtocolAddress], contentType: MessagePadding.ContentType, group: GroupID?
    ) async -> [DeviceEncryption] {
        var seen = Set<ProtocolAddress>(minimumCapacity: devices.count)
        let devices = devices.filter { seen.insert($0).inserted }
        var sent: [[UInt8]?] = []
        if devices.count > 1 {
            do throws(SessionError) {
                sent = try await encryptInOneCommit(plaintext, to: devices, contentType: contentType)
            } catch {
                sent = []
            }
        }
        var outcomes: [DeviceEncryption] = []
        outcomes.reserveCapacity(devices.count)
        for (index, device) in devices.enumerated() {
            if index < sent.count, let message = sent[index] {
                outcomes.append(DeviceEncryption(from: localAddress, to: device, group: group, result: .success(message)))
                continue
            }
            do throws(SessionError) {
                let message = try await encrypt(plaintext, to: device, contentType: contentType)
                outcomes.append(DeviceEncryption(from: localAddress, to: device, group: group, result: .success(message)))
            } catch {
                outcomes.append(DeviceEncryption(from: localAddress, to: device, group: group, result: .failure(error)))
            }
        }
        return outcomes
    }

    /// Encrypts `plaintext` to each of `devices` (distinct) that has a current session whose
    /// identity may receive, holding every device's lock (taken in the order of the encoded
    /// addresses, so that two such calls cannot wait for each other), and stores every advanced
    /// session in one store commit. Returns the message of each device, in the order of
    /// `devices`, or `nil` for a device left out (no session, an identity to accept, a policy, a
    /// stored record that did not load), which is to be encrypted to alone (which judges its
    /// failure on the stored record).
    /// - Throws: the store's errors (`staleState` among them) when the commit fails: then
    ///   nothing was stored and no message may be sent.
    func encryptInOneCommit(
        _ plaintext: [UInt8], to devices: [ProtocolAddress], contentType: MessagePadding.ContentType
    ) async throws(SessionError) -> [[UInt8]?] {
        guard !devices.isEmpty else { return [] }
        let keys = devices.sorted { $0.encoded.lexicographicallyPrecedes($1.encoded) }.map { LockKey.peer($0) }
        return try await exclusive(all: keys) { () async throws(SessionError) -> [[UInt8]?] in
            // Every record and every trust decision in one call each (where the store and the
            // evaluator can), then the checks of `encrypt(_:to:)` per device.
            var loaded: [SessionRecord?]
            if store is any CachingSessionStore {
                loaded = []
                loaded.reserveCapacity(devices.count)
                for address in devices { loaded.append(try? await loadSessionForUpdate(for: address, currentSessionSuffices: true)) }
            } else {
                do { loaded = try await store.loadSessions(for: devices) } catch { return [] }
                guard loaded.count == devices.count else { return [] }
            }
            var candidates: [Int] = []
            var queries: [(Ed25519.PublicKey, ProtocolAddress)] = []
            for index in devices.indices {
                guard let remote = sendingIdentity(of: &loaded[index]) else { continue }
                candidates.append(index)
                queries.append((remote, devices[index]))
            }
            let decisions = await identityDecisions(queries)
            // The chosen records are taken out of `loaded` (not copied) into the one batch the
            // tasks encrypt with, and from there into the commit.
            var chosenRecords: [SessionRecord] = []
            var chosenIndices: [Int] = []
            chosenRecords.reserveCapacity(candidates.count)
            chosenIndices.reserveCapacity(candidates.count)
            var sendLogChanges: SendLogChanges?
            for (index, decision) in zip(candidates, decisions) {
                guard let decision, !decision.isSuperseded, decision.allowsSending else { continue }
                // Application content goes to the send log (a distribution holds our chain
                // key): the position is the one the message is about to take.
                if sendLog != nil, contentType == .application, let session = loaded[index]?.currentSession,
                   let changes = self.sendLogChanges(
                    logging: plaintext,
                    on: .pairwise(recipient: devices[index], ratchetKey: session.ratchet.sendingRatchetKey.publicKey.rawRepresentation),
                    at: session.ratchet.sendCounter, peerIdentityKey: session.remoteIdentityKey) {
                    if sendLogChanges == nil { sendLogChanges = changes } else { sendLogChanges?.added += changes.added }
                }
                guard let record = loaded[index].take() else { continue }
                chosenRecords.append(record)
                chosenIndices.append(index)
            }
            guard !chosenRecords.isEmpty else { return [] }
            let batch = EncryptionBatch(records: chosenRecords, indices: chosenIndices)
            chosenRecords = []
            try await Self.encrypt(batch, tasks: Self.encryptionTaskCount(for: batch.count), plaintext: plaintext, contentType: contentType)
            var commit = StoreCommit()
            commit.reserveSessionCapacity(batch.count)
            var messages = [[UInt8]?](repeating: nil, count: devices.count)
            batch.takeResults { record, index, message in
                commit.store(record, for: devices[index])
                messages[index] = message
            }
            commit.sendLog = sendLogChanges
            try await commitWithSendLog(commit)
            return messages
        }
    }

    /// The peer's identity key in `record`'s current session when its sending policy allows
    /// sending, else `nil` (`inout`: read in place, without a copy of the record).
    private func sendingIdentity(of record: inout SessionRecord?) -> Ed25519.PublicKey? {
        guard let remote = record?.remoteIdentityKey, (try? record?.checkSendingPolicy(configuration)) != nil else { return nil }
        return remote
    }

    /// The number of tasks that encrypt `count` records: one per core when there are enough
    /// records for the work to outweigh a task's cost (at least 16 per task), else one.
    nonisolated static func encryptionTaskCount(for count: Int) -> Int {
        max(1, min(processorCount, count / 16))
    }

    /// The machine's active cores, read once (`ProcessInfo` reads the system's files each time).
    nonisolated static let processorCount = ProcessInfo.processInfo.activeProcessorCount

    /// Encrypts `plaintext` with every record of `batch`, off the actor, in `tasks` tasks at
    /// once (the calling one and `tasks - 1` child tasks), each taking the next few records
    /// until none are left (so a task that starts late or runs slowly takes fewer).
    /// - Throws: the first encryption error (`tooManyMessages`, `primitive`).
    nonisolated static func encrypt(
        _ batch: EncryptionBatch, tasks: Int, plaintext: [UInt8], contentType: MessagePadding.ContentType
    ) async throws(SessionError) {
        await withTaskGroup(of: Void.self) { group in
            for _ in 1 ..< max(tasks, 1) { group.addTask { batch.encrypt(plaintext, contentType: contentType) } }
            batch.encrypt(plaintext, contentType: contentType)
            await group.waitForAll()
        }
        if let failure = batch.failure { throw failure }
    }
}

/// The records of one `SessionManager.encryptInOneCommit` call, advanced in place by the tasks
/// that encrypt with them: the records are moved in, each task takes the next few positions
/// (under a lock) and advances those records (a copy of a record would retain its parts, shared
/// with the other cores' records), and the results are moved out after every task ended.
///
/// `@unchecked Sendable`: the tasks touch only the positions they took under the lock, and the
/// results are read only after the tasks ended (the task group's end orders those reads after
/// every write).
final class EncryptionBatch: @unchecked Sendable {
    /// How many records a task takes at a time.
    private static let share = 4

    private let records: UnsafeMutableBufferPointer<SessionRecord?>
    private let messages: UnsafeMutableBufferPointer<[UInt8]?>
    private let indices: [Int]
    private let lock = NSLock()
    /// The next position to take (under `lock`).
    private var next = 0
    /// The first encryption error (under `lock`); no position is taken after it.
    private var firstFailure: SessionError?

    /// A batch of `records`, the record of the device at `indices[i]` of the call at position `i`.
    init(records: [SessionRecord], indices: [Int]) {
        self.records = .allocate(capacity: records.count)
        messages = .allocate(capacity: records.count)
        messages.initialize(repeating: nil)
        for (position, record) in records.enumerated() { self.records.initializeElement(at: position, to: record) }
        self.indices = indices
    }

    deinit {
        _ = records.deinitialize()
        records.deallocate()
        _ = messages.deinitialize()
        messages.deallocate()
    }

    /// The number of records.
    var count: Int { records.count }

    /// The first encryption error, if one happened.
    var failure: SessionError? { lock.withLock { firstFailure } }

    /// Takes the next positions until none are left, encrypting `plaintext` with each record.
    func encrypt(_ plaintext: [UInt8], contentType: MessagePadding.ContentType) {
        while let taken = take() {
            for position in taken {
                do throws(SessionError) {
                    messages[position] = try records[position]?.encrypt(plaintext, contentType: contentType)
                } catch {
                    lock.withLock { if firstFailure == nil { firstFailure = error } }
                    return
                }
            }
        }
    }

    /// The next `share` positions (fewer at the end), or `nil` when none are left or an
    /// encryption failed.
    private func take() -> Range<Int>? {
        lock.withLock {
            guard firstFailure == nil, next < records.count else { return nil }
            let start = next
            next = min(next + Self.share, records.count)
            return start ..< next
        }
    }

    /// Calls `body` with each advanced record (moved out of the batch), the index of its
    /// device in the call and its message (after every task ended).
    func takeResults(_ body: (consuming SessionRecord, Int, [UInt8]) -> Void) {
        for position in 0 ..< records.count {
            guard let record = records[position].take(), let message = messages[position] else { continue }
            body(record, indices[position], message)
        }
    }
}
