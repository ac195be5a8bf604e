import Foundation
import GRDB
@_spi(Testing) import SessionKit
@testable import SessionKitSQLite
import SignalPrimitives
import XCTest

/// What a committed transaction survives (`SQLiteStoreOptions.durability`), what `close()`
/// leaves on disk, and what a refused open leaves untouched.
final class DurabilityTests: XCTestCase {
    /// `PRAGMA synchronous` of the writer and of a reader of `store`.
    private func synchronousSettings(_ store: SQLiteProtocolStore) throws -> (writer: Int?, reader: Int?) {
        let writer = try store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        let reader = try store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        return (writer, reader)
    }

    func testEveryConnectionRunsTheSynchronousSettingOfTheOptions() throws {
        // FULL is 2, NORMAL is 1 (GRDB sets NORMAL on the writer when it turns WAL on).
        for (durability, expected) in [(SQLiteStoreOptions.Durability.powerLoss, 2), (.processCrash, 1)] {
            let path = try temporaryStorePath()
            let store = try SQLiteProtocolStore(
                path: path, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(durability: durability))
            let settings = try synchronousSettings(store)
            XCTAssertEqual(settings.writer, expected, "\(durability): the writer")
            XCTAssertEqual(settings.reader, expected, "\(durability): a reader")
            try store.close()
            // Again on an existing file.
            let reopened = try SQLiteProtocolStore(
                path: path, storageKey: try fixtureStorageKey(), options: SQLiteStoreOptions(durability: durability))
            XCTAssertEqual(try synchronousSettings(reopened).writer, expected, "\(durability): the writer after reopening")
            try reopened.close()
        }
    }
}
