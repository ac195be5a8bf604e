import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
@_spi(Testing) import Verification
import XCTest

/// Writes `Fixtures/schema4.sqlite` (only schema 4 can: this test goes with schema 5).
final class Schema4FixtureWriter: XCTestCase {
    func testWriteTheSchema4Fixture() async throws {
        guard let target = ProcessInfo.processInfo.environment["SESSIONKIT_SQLITE_WRITE_FIXTURE"] else {
            throw XCTSkip("set SESSIONKIT_SQLITE_WRITE_FIXTURE to the fixture's path")
        }
        XCTAssertEqual(SQLiteProtocolStore.currentSchemaVersion, 4)
        try? FileManager.default.removeItem(atPath: target)
        let bobAddress = address("fixture-bob", 7)
        let identity = try IdentityKeyPair(seed: [UInt8](repeating: 0x44, count: 32))
        let store = try SQLiteProtocolStore(path: target, storageKey: try fixtureStorageKey(), identity: identity)
        let bob = SessionManager(store: store, trust: store, localAddress: bobAddress)
        let upload = try await bob.maintainPreKeys()

        // Alice 1: a session from signed prekey 1 and its first one-time prekey.
        let alice1 = address("fixture-alice", 1)
        let a1 = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: alice1)
        let bundle1 = try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first))
        try await a1.processBundle(bundle1, for: bobAddress)
        let first = try await a1.encrypt(Array("first prekey message".utf8), to: bobAddress)
        _ = try await bob.decrypt(first, from: alice1)
        try await store.appendArchivedMessage(first, messageID: "spk1-prekey-message", conversationID: "fixture-replays", timestamp: 1)

        // Signed prekey 2 replaces 1 (kept for its grace period with its record).
        _ = try await store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in
            guard var held = keys else { throw .invalidPayload }
            try held.rotateSignedPreKey(identity: identity, now: held.currentSignedPreKey.createdAt)
            keys = held
        }
        let rotated = try await store.loadPreKeys()
        let bundle2 = try XCTUnwrap(rotated?.bundle(identityKey: identity.publicKey, oneTimePreKeyID: nil))
        XCTAssertEqual(bundle2.signedPreKeyID, 2)

        // Alice 2: a session from signed prekey 2, no one-time prekey.
        let alice2 = address("fixture-alice", 2)
        let a2 = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: alice2)
        try await a2.processBundle(bundle2, for: bobAddress)
        let second = try await a2.encrypt(Array("second prekey message".utf8), to: bobAddress)
        _ = try await bob.decrypt(second, from: alice2)
        try await store.appendArchivedMessage(second, messageID: "spk2-prekey-message", conversationID: "fixture-replays", timestamp: 2)

        // Three more records under signed prekey 2: EK_A = the public keys of the private keys
        // 32 × 0x51, 0x52, 0x53.
        let extra = try (UInt8(0x51) ... 0x53).map { try X25519.PrivateKey(rawRepresentation: [UInt8](repeating: $0, count: 32)).publicKey }
        _ = try await store.updatePreKeys { (keys: inout LocalPreKeys?) throws(SessionError) in
            guard var held = keys else { throw .invalidPayload }
            for ek in extra {
                try held.apply(PreKeyConsumption(signedPreKeyID: 2, baseKey: ek, oneTimePreKeyID: nil, oneTimeKEMPreKeyID: nil))
            }
            keys = held
        }
        // Alice 1's session is deleted: her prekey message is then recognised by its record only.
        try await store.deleteSession(for: alice1)
        let loaded = try await store.loadPreKeys()
        let final = try XCTUnwrap(loaded)
        XCTAssertEqual(final.signedPreKeyEntries.map(\.key.id), [2, 1])
        XCTAssertEqual(final.signedPreKeyEntries.map(\.recordedBaseKeys.count), [4, 1])
        try store.close()
        try withRawDatabase(target) { try $0.execute(sql: "VACUUM") }
    }
}
