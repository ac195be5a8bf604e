import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import TestSupport
import Verification
import XCTest

/// The skipped keys' times are kept in the SQLite store's rows, so that their age
/// (`SessionConfiguration.skippedKeyMaxAge`) counts from when they were stored across reopens.
final class SkippedKeyAgeStorageTests: XCTestCase {
    private let alice = address("alice", 1)
    private let bob = address("bob", 7)

    func testTheTimesSurviveAReopenAndAgedKeysGoWithTheNextMessage() async throws {
        let folder = try temporaryFolder()
        let path = folder.appendingPathComponent("bob.sqlite").path
        let clock = FakeClock(Timestamp(secondsSince1970: 1_700_000_000))
        func open() throws -> (SQLiteProtocolStore, SessionManager) {
            let store = try SQLiteProtocolStore(path: path, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(durability: .processCrash))
            return (store, SessionManager(store: store, trust: store, localAddress: bob, clock: clock))
        }
        var (store, manager) = try open()
        let a = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(), localAddress: alice)
        let upload = try await manager.maintainPreKeys()
        try await a.processBundle(try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first)), for: bob)
        var sent: [[UInt8]] = []
        for index in 0 ..< 3 { sent.append(try await a.encrypt(Array("message \(index)".utf8), to: bob)) }
        _ = try await manager.decrypt(sent[2], from: alice)
        let rows = { () throws -> Int in try self.withRawDatabase(path) { try Int.fetchOne($0, sql: "SELECT count(*) FROM skipped_keys") ?? -1 } }
        XCTAssertEqual(try rows(), 2)

        // Reopened 29 days later: the keys keep the time they were stored (a store that lost it
        // would count again from now, and the late message below would decrypt).
        clock.advance(bySeconds: 29 * 86_400)
        try store.close()
        (store, manager) = try open()
        clock.advance(bySeconds: 2 * 86_400)
        do {
            _ = try await manager.decrypt(sent[0], from: alice)
            XCTFail("a key stored 31 days ago decrypted")
        } catch {}
        XCTAssertEqual(try rows(), 2, "a failed message deletes nothing")
        _ = try await manager.decrypt(try await a.encrypt(Array("next".utf8), to: bob), from: alice)
        XCTAssertEqual(try rows(), 0, "the next message deleted the aged keys")
        try store.close()
    }
}
