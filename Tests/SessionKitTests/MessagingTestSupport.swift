import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

enum Days {
    static func seconds(_ days: Int64) -> Int64 { days * 24 * 3600 }
}

/// A minimal trust-on-first-use evaluator: the first key recorded for an address is trusted; a
/// different key later is recorded and refused until `accept(_:)`. Evaluating records nothing.
/// It remembers every address it was asked about and every key recorded.
actor TestTrustEvaluator: IdentityTrustEvaluator {
    struct Unavailable: Error {}

    private var keys: [ProtocolAddress: Ed25519.PublicKey] = [:]
    private var awaitingAcceptance: Set<ProtocolAddress> = []
    private(set) var checks = 0
    private(set) var records = 0
    private(set) var askedAbout: [ProtocolAddress] = []
    var isFailing = false

    func evaluateIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) throws -> TrustDecision {
        checks += 1
        askedAbout.append(address)
        if isFailing { throw Unavailable() }
        guard let known = keys[address] else { return TrustDecision(observation: .firstUse, allowsSending: true) }
        if known != identityKey { return TrustDecision(observation: .changed(previous: known), allowsSending: false) }
        return TrustDecision(observation: .unchanged, allowsSending: !awaitingAcceptance.contains(address))
    }

    func recordIdentity(_ identityKey: Ed25519.PublicKey, for address: ProtocolAddress) throws -> IdentityObservation {
        records += 1
        if isFailing { throw Unavailable() }
        guard let known = keys[address] else {
            keys[address] = identityKey
            return .firstUse
        }
        guard known != identityKey else { return .unchanged }
        keys[address] = identityKey
        awaitingAcceptance.insert(address)
        return .changed(previous: known)
    }

    func acceptIdentity(_ identityKey: Ed25519.PublicKey, forUser userID: String) {
        for (address, key) in keys where address.userID.utf8.elementsEqual(userID.utf8) && key == identityKey {
            awaitingAcceptance.remove(address)
        }
    }

    func trustedIdentityKey(forUser userID: String) -> Ed25519.PublicKey? {
        keys.first { $0.key.userID.utf8.elementsEqual(userID.utf8) }?.value
    }

    func accept(_ address: ProtocolAddress) { awaitingAcceptance.remove(address) }
    func key(for address: ProtocolAddress) -> Ed25519.PublicKey? { keys[address] }
    func setFailing(_ failing: Bool) { isFailing = failing }
}

/// A pretend server: holds each device's published prekeys and hands out bundles, each
/// one-time prekey and one-time KEM prekey at most once (unless told to misbehave), and the
/// last-resort KEM prekey once no one-time KEM prekey is left.
actor FakeServer {
    private var identities: [ProtocolAddress: Ed25519.PublicKey] = [:]
    private var signed: [ProtocolAddress: PreKeyUpload.SignedKey] = [:]
    private var lastResort: [ProtocolAddress: PreKeyBundle.KEMKey] = [:]
    private var oneTime: [ProtocolAddress: [PreKeyBundle.OneTimeKey]] = [:]
    private var oneTimeKEM: [ProtocolAddress: [PreKeyBundle.KEMKey]] = [:]
    private var registrationIDs: [ProtocolAddress: RegistrationID] = [:]

    /// Adds `upload`'s keys; a new identity or registration id (a re-registration) replaces
    /// everything.
    func publish(_ upload: PreKeyUpload, for address: ProtocolAddress) {
        if identities[address] != upload.identityKey || (upload.registrationID != nil && registrationIDs[address] != upload.registrationID) {
            oneTime[address] = []
            oneTimeKEM[address] = []
            lastResort[address] = nil
        }
        identities[address] = upload.identityKey
        if let id = upload.registrationID { registrationIDs[address] = id }
        if let key = upload.signedPreKey {
            signed[address] = key
            lastResort[address] = upload.lastResortKEMPreKey
        }
        oneTime[address, default: []].append(contentsOf: upload.oneTimePreKeys)
        oneTimeKEM[address, default: []].append(contentsOf: upload.oneTimeKEMPreKeys)
    }

    /// A bundle with the next one-time prekey (removed from the server), or none left, and,
    /// for a signed prekey signed with `kem` = 1, the next one-time KEM prekey or else the
    /// last-resort one.
    func bundle(for address: ProtocolAddress, consumingOneTimePreKey: Bool = true) -> PreKeyBundle? {
        guard let identity = identities[address], let signedKey = signed[address] else { return nil }
        var oneTimeKey: PreKeyBundle.OneTimeKey?
        if var keys = oneTime[address], !keys.isEmpty {
            oneTimeKey = consumingOneTimePreKey ? keys.removeFirst() : keys.first
            oneTime[address] = keys
        }
        var kemKey: PreKeyBundle.KEMKey?
        if signedKey.signsKEMPreKeys {
            if var keys = oneTimeKEM[address], !keys.isEmpty {
                kemKey = consumingOneTimePreKey ? keys.removeFirst() : keys.first
                oneTimeKEM[address] = keys
            } else {
                kemKey = lastResort[address]
            }
        }
        return try? PreKeyBundle(
            identityKey: identity, signedPreKeyID: signedKey.id, signedPreKey: signedKey.publicKey,
            signedPreKeySignature: signedKey.signature, oneTimePreKey: oneTimeKey, kemPreKey: kemKey,
            registrationID: registrationIDs[address])
    }

    /// The registration id the device published last.
    func registrationID(for address: ProtocolAddress) -> RegistrationID? { registrationIDs[address] }

    func oneTimePreKeyCount(for address: ProtocolAddress) -> Int { oneTime[address]?.count ?? 0 }
    func oneTimeKEMPreKeyCount(for address: ProtocolAddress) -> Int { oneTimeKEM[address]?.count ?? 0 }
}

/// A store that forwards to an `InMemoryProtocolStore` and can fail writes, yield on every
/// call (to provoke interleavings).
actor InstrumentedStore: ForwardingProtocolStore {
    nonisolated let base: InMemoryProtocolStore
    private var failWrites = false
    private var yields = false
    private(set) var writeAttempts = 0

    init(base: InMemoryProtocolStore) { self.base = base }

    func setFailWrites(_ fail: Bool) { failWrites = fail }
    /// Makes every load of a stored state fail as a store fails to decode a damaged blob.
    func setUndecodable(_ undecodable: Bool) { self.undecodable = undecodable }
    private var undecodable = false
    private func decode() throws(SessionError) { if undecodable { throw .invalidPayload } }
    func setYields(_ yield: Bool) { yields = yield }

    private func pause() async {
        if yields { for _ in 0 ..< 3 { await Task.yield() } }
    }

    private func write() throws(SessionError) {
        writeAttempts += 1
        if failWrites { throw .storage("injected write failure") }
    }

    func loadSession(for address: ProtocolAddress) async throws(SessionError) -> SessionRecord? {
        await pause()
        try decode()
        return await base.loadSession(for: address)
    }

    func deleteSession(for address: ProtocolAddress) async throws(SessionError) {
        try write()
        await base.deleteSession(for: address)
    }

    func preKeys(for prefix: PreKeyMessage.Prefix) async throws(SessionError) -> PreKeySet {
        await pause()
        return try await base.preKeys(for: prefix)
    }

    func loadPreKeys() async throws(SessionError) -> LocalPreKeys? {
        try decode()
        return await base.loadPreKeys()
    }

    func updatePreKeys<Result: Sendable>(
        _ update: @Sendable (inout LocalPreKeys?) throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        try write()
        return try await base.updatePreKeys(update)
    }

    func commit(_ commit: StoreCommit) async throws(SessionError) {
        await pause()
        try write()
        try await base.commit(commit)
    }

    func loadSendingChain(for group: GroupID) async throws(SessionError) -> SenderKeySendingChain? {
        try decode()
        return await base.loadSendingChain(for: group)
    }

    func loadReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) -> SenderKeyReceiverState? {
        try decode()
        return await base.loadReceiverState(for: group, sender: sender)
    }

    func removeReceiverState(for group: GroupID, sender: ProtocolAddress) async throws(SessionError) {
        try write()
        await base.removeReceiverState(for: group, sender: sender)
    }
}

/// One device: identity, store, trust evaluator and manager, with its prekeys published.
struct TestDevice {
    let address: ProtocolAddress
    let identity: IdentityKeyPair
    let base: InMemoryProtocolStore
    let store: InstrumentedStore
    let trust: TestTrustEvaluator
    let manager: SessionManager
    let random: SeededRandomSource

    init(
        _ userID: String, _ deviceID: UInt32, seed: UInt64, server: FakeServer, clock: FakeClock = FakeClock(),
        policy: PreKeyPolicy = .default, identity: IdentityKeyPair? = nil, kem: (any KeyEncapsulationMechanism)? = nil,
        configuration: SessionConfiguration = .default, preKeys: LocalPreKeys? = nil, publish: Bool = true
    ) async throws {
        address = TestSupport.address(userID, deviceID)
        random = SeededRandomSource(seed: seed)
        self.identity = try identity ?? IdentityKeyPair(using: random)
        // The registration id from a source of its own, so that the device's other draws are
        // what they were before registration ids.
        base = InMemoryProtocolStore(
            identity: self.identity, preKeys: preKeys, registrationID: .random(using: SeededRandomSource(seed: seed &+ 0x5EED)))
        store = InstrumentedStore(base: base)
        trust = TestTrustEvaluator()
        manager = SessionManager(
            store: store, trust: trust, localAddress: address, kem: kem, configuration: configuration, preKeyPolicy: policy,
            clock: clock, random: random)
        if publish { await server.publish(try await manager.maintainPreKeys(), for: address) }
    }

    /// Starts a session to `peer` from a bundle the server hands out.
    func startSession(with peer: ProtocolAddress, server: FakeServer) async throws {
        let published = await server.bundle(for: peer)
        let bundle = try XCTUnwrap(published)
        try await manager.processBundle(bundle, for: peer)
    }

    /// Every persisted byte of this device: records, prekeys, sender keys of `groups`.
    func snapshot(groups: [GroupID] = [], senders: [ProtocolAddress] = []) async -> StoreSnapshot {
        var records: [String: [UInt8]] = [:]
        for address in await base.addresses() {
            records[address.description] = await base.loadSession(for: address)?.serialized()
        }
        var senderKeys: [String: [UInt8]] = [:]
        for group in groups {
            senderKeys["\(group)"] = await base.loadSendingChain(for: group)?.serialized()
            for sender in senders {
                senderKeys["\(group)/\(sender)"] = await base.loadReceiverState(for: group, sender: sender)?.serialized()
            }
        }
        return StoreSnapshot(records: records, preKeys: await base.loadPreKeys()?.serialized(), senderKeys: senderKeys)
    }
}

struct StoreSnapshot: Equatable {
    let records: [String: [UInt8]]
    let preKeys: [UInt8]?
    let senderKeys: [String: [UInt8]]
}

/// Asserts that `body` throws the `SessionError` `expected`.
func assertThrowsAsync<T>(
    _ expected: SessionError, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> T
) async {
    do {
        _ = try await body()
        XCTFail("expected \(expected), but the call succeeded", file: file, line: line)
    } catch let error as SessionError {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("unexpected error \(error)", file: file, line: line)
    }
}

/// The outcome of `body` as a `Result`.
func capture<T>(_ body: () async throws(SessionError) -> T) async -> Result<T, SessionError> {
    do throws(SessionError) {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}

/// `Array("text".utf8)`.
func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

extension TestDevice {
    /// The prekeys in this device's store (failing the test when there are none).
    func storedPreKeys(file: StaticString = #filePath, line: UInt = #line) async throws -> LocalPreKeys {
        let keys = await base.loadPreKeys()
        return try XCTUnwrap(keys, "no prekeys stored", file: file, line: line)
    }
}

extension FakeServer {
    /// A bundle for `address` (failing the test when none is published).
    func requireBundle(for address: ProtocolAddress, file: StaticString = #filePath, line: UInt = #line) throws -> PreKeyBundle {
        try XCTUnwrap(bundle(for: address), "no bundle published", file: file, line: line)
    }
}

/// Makes `devices` the members of `group` on each of them (each lists all the others), as an
/// app does from its server's roster.
func makeGroup(_ group: GroupID, of devices: [TestDevice]) async throws {
    for device in devices {
        try await device.manager.setGroupMembers(devices.map(\.address).filter { $0 != device.address }, for: group)
    }
}

/// A device whose manager keeps its send log in its own store (the same commits).
struct LoggingTestDevice {
    let address: ProtocolAddress
    let identity: IdentityKeyPair
    let store: InMemoryProtocolStore
    let trust = TestTrustEvaluator()
    let manager: SessionManager

    init(
        _ userID: String, _ deviceID: UInt32, seed: UInt64, server: FakeServer, clock: FakeClock, logging: Bool = true,
        policy: SendLogPolicy = .default, identity: IdentityKeyPair? = nil
    ) async throws {
        address = TestSupport.address(userID, deviceID)
        let random = SeededRandomSource(seed: seed)
        self.identity = try identity ?? IdentityKeyPair(using: random)
        store = InMemoryProtocolStore(identity: self.identity)
        manager = SessionManager(
            store: store, trust: trust, localAddress: address, clock: clock, random: random, sendLog: logging ? store : nil,
            sendLogPolicy: policy)
        await server.publish(try await manager.maintainPreKeys(), for: address)
    }

    func startSession(with peer: ProtocolAddress, server: FakeServer) async throws {
        try await manager.processBundle(try await server.requireBundle(for: peer), for: peer)
    }

    /// The pairwise chain this device sends on to `peer` now.
    func currentChain(to peer: ProtocolAddress) async throws -> SendLogChain {
        let record = await store.loadSession(for: peer)
        let session = try XCTUnwrap(record?.currentSession)
        return .pairwise(recipient: peer, ratchetKey: session.ratchet.sendingRatchetKey.publicKey.rawRepresentation)
    }
}

/// The retry-notice outcome `received` must be.
func expectRetryOutcome(_ received: ReceivedMessage, file: StaticString = #filePath, line: UInt = #line) throws -> RetryNoticeOutcome {
    guard case let .retryNotice(outcome) = received else {
        XCTFail("expected a retry-notice outcome, got \(received)", file: file, line: line)
        throw XCTSkip("no outcome")
    }
    return outcome
}

/// The notice of the undecryptable message `received` must be.
func expectRetryNotice(_ received: ReceivedMessage, file: StaticString = #filePath, line: UInt = #line) throws -> MessageEnvelope {
    guard case let .undecryptable(failure) = received, let notice = failure.retryNotice else {
        XCTFail("expected an undecryptable message with a notice, got \(received)", file: file, line: line)
        throw XCTSkip("no notice")
    }
    return notice
}
