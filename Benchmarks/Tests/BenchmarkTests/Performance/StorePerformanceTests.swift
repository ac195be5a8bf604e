import BenchmarkHarness
import XCTest

/// XCTest `measure` blocks for the SQLite store cases (`store.sqlite.*`): each measured
/// iteration is a batch of messages persisted to a file in a temporary folder, on the wall
/// clock (the bytes rows' batches are calibrated in bytes written, about 1 MiB; XCTest reports
/// their time). The bytes per message themselves are measured by `bench`.
/// Run in release: `swift test -c release -Xswiftc -enable-testing --filter StorePerformanceTests`.
final class StorePerformanceTests: XCTestCase {
    func testStoreSQLiteEncryptLibrary() throws { try measureCase("store.sqlite.encrypt", .library) }
    func testStoreSQLiteEncryptFloor() throws { try measureCase("store.sqlite.encrypt", .floor) }

    func testStoreSQLiteDecryptLibrary() throws { try measureCase("store.sqlite.decrypt", .library) }
    func testStoreSQLiteDecryptFloor() throws { try measureCase("store.sqlite.decrypt", .floor) }

    func testStoreSQLiteBytesFreshLibrary() throws { try measureCase("store.sqlite.bytes-per-message.fresh", .library) }
    func testStoreSQLiteBytesFreshFloor() throws { try measureCase("store.sqlite.bytes-per-message.fresh", .floor) }

    func testStoreSQLiteBytesHeavyLibrary() throws { try measureCase("store.sqlite.bytes-per-message.heavy", .library) }
    func testStoreSQLiteBytesHeavyFloor() throws { try measureCase("store.sqlite.bytes-per-message.heavy", .floor) }

    func testStoreSQLitePreKeyMessageFewRecordsLibrary() throws { try measureCase("store.sqlite.prekey-message.10-records", .library) }
    func testStoreSQLitePreKeyMessageFewRecordsFloor() throws { try measureCase("store.sqlite.prekey-message.10-records", .floor) }

    func testStoreSQLitePreKeyMessageManyRecordsLibrary() throws { try measureCase("store.sqlite.prekey-message.100000-records", .library) }
    func testStoreSQLitePreKeyMessageManyRecordsFloor() throws { try measureCase("store.sqlite.prekey-message.100000-records", .floor) }

    func testStoreSQLiteBytesPreKeyFewRecordsLibrary() throws { try measureCase("store.sqlite.bytes-per-prekey-message.10-records", .library) }
    func testStoreSQLiteBytesPreKeyFewRecordsFloor() throws { try measureCase("store.sqlite.bytes-per-prekey-message.10-records", .floor) }

    func testStoreSQLiteBytesPreKeyManyRecordsLibrary() throws {
        try measureCase("store.sqlite.bytes-per-prekey-message.100000-records", .library)
    }
    func testStoreSQLiteBytesPreKeyManyRecordsFloor() throws {
        try measureCase("store.sqlite.bytes-per-prekey-message.100000-records", .floor)
    }

    func testStoreSQLiteEncryptFullLibrary() throws { try measureCase("store.sqlite.encrypt.synchronous-full", .library) }
    func testStoreSQLiteEncryptFullFloor() throws { try measureCase("store.sqlite.encrypt.synchronous-full", .floor) }

    func testStoreSQLiteDecryptFullLibrary() throws { try measureCase("store.sqlite.decrypt.synchronous-full", .library) }
    func testStoreSQLiteDecryptFullFloor() throws { try measureCase("store.sqlite.decrypt.synchronous-full", .floor) }

    func testStoreSQLiteDecryptHistoryLibrary() throws {
        try measureCase("store.sqlite.decrypt.history-40-sessions-2000-skipped", .library)
    }
    func testStoreSQLiteDecryptHistoryFloor() throws {
        try measureCase("store.sqlite.decrypt.history-40-sessions-2000-skipped", .floor)
    }

    func testStoreSQLiteDecryptLargestLibrary() throws {
        try measureCase("store.sqlite.decrypt.history-41-sessions-2000-skipped-each", .library)
    }
    func testStoreSQLiteDecryptLargestFloor() throws {
        try measureCase("store.sqlite.decrypt.history-41-sessions-2000-skipped-each", .floor)
    }

    func testStoreSQLiteFirstMessageAfterOpenLibrary() throws {
        try measureCase("store.sqlite.first-message-after-open.history-41-sessions-2000-skipped-each", .library)
    }
    func testStoreSQLiteFirstMessageAfterOpenFloor() throws {
        try measureCase("store.sqlite.first-message-after-open.history-41-sessions-2000-skipped-each", .floor)
    }

    func testPublishedPreKeysMergeLibrary() throws { try measureCase("prekeys.published.merge.100000", .library) }
    func testPublishedPreKeysMergeFloor() throws { try measureCase("prekeys.published.merge.100000", .floor) }
}
