import CSodium
import Foundation
import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit

/// The persisted-state envelope writes the documented format while wiping every allocation
/// it lets go of, and reads without copying the blob.
///
/// The reference encoding below is written independently from the documented layout
/// (`"SKST" || kind || version || body || first 16 bytes of SHA-256`, integers big-endian,
/// variable fields `u32(length) || bytes`), with libsodium's `crypto_hash_sha256` called
/// directly for the checksum.
final class StateCodingHygieneTests: XCTestCase {
    /// One field of a test blob.
    enum Field: Equatable {
        case byte(UInt8)
        case bool(Bool)
        case u32(UInt32)
        case u64(UInt64)
        case fixed([UInt8])
        case secret([UInt8])
        case variable([UInt8])
    }

    /// What a release hook saw: the size of each released allocation and whether it was all zero.
    final class ReleaseRecord {
        private(set) var releases: [(size: Int, wiped: Bool)] = []

        var observer: (UnsafeRawBufferPointer) -> Void {
            { [self] buffer in releases.append((buffer.count, buffer.allSatisfy { $0 == 0 })) }
        }
    }

    /// Several hundred fields of every kind, about 3 KB with varied lengths, from a seed.
    static func fields(seed: UInt64) -> [Field] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 11
        }
        func bytes(_ count: Int) -> [UInt8] { (0 ..< count).map { _ in UInt8(truncatingIfNeeded: next()) } }
        return (0 ..< 300).map { index in
            switch index % 7 {
            case 0: return .byte(UInt8(truncatingIfNeeded: next()))
            case 1: return .bool(next() & 1 == 1)
            case 2: return .u32(UInt32(truncatingIfNeeded: next()))
            case 3: return .u64(next() &* 2047)
            case 4: return .fixed(bytes(Int(next() % 40)))
            case 5: return .secret(bytes(32))
            default: return .variable(bytes(Int(next() % 24)))
            }
        }
    }

    static func write(_ fields: [Field], into writer: inout StateWriter) {
        for field in fields {
            switch field {
            case .byte(let value): writer.write(value)
            case .bool(let value): writer.write(value)
            case .u32(let value): writer.write(value)
            case .u64(let value): writer.write(value)
            case .fixed(let value): writer.writeFixed(value)
            case .secret(let value): writer.writeFixed(SecureBytes(copying: value))
            case .variable(let value): writer.writeVariable(value)
            }
        }
    }

    static func read(like fields: [Field], from reader: inout StateReader) throws -> [Field] {
        try fields.map { field in
            switch field {
            case .byte: return .byte(try reader.readByte())
            case .bool: return .bool(try reader.readBool())
            case .u32: return .u32(try reader.readUInt32())
            case .u64: return .u64(try reader.readUInt64())
            case .fixed(let value): return .fixed(try reader.readFixed(value.count))
            case .secret(let value): return .secret(try reader.readSecret(value.count).bytes)
            case .variable: return .variable(try reader.readVariable())
            }
        }
    }

    /// The documented encoding, written without `StateWriter`.
    static func referenceBlob(kind: StateKind, version: UInt8, _ fields: [Field]) -> [UInt8] {
        func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
            (0 ..< T.bitWidth / 8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        var blob: [UInt8] = [0x53, 0x4B, 0x53, 0x54, kind.rawValue, version]
        for field in fields {
            switch field {
            case .byte(let value): blob.append(value)
            case .bool(let value): blob.append(value ? 0x01 : 0x00)
            case .u32(let value): blob += bigEndian(value)
            case .u64(let value): blob += bigEndian(value)
            case .fixed(let value), .secret(let value): blob += value
            case .variable(let value): blob += bigEndian(UInt32(value.count)) + value
            }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        XCTAssertEqual(sodium_init() >= 0, true)
        _ = crypto_hash_sha256(&digest, blob, UInt64(blob.count))
        return blob + digest.prefix(16)
    }

    func testAGrowingWriterProducesTheDocumentedEncodingAndReadsBackTheSameFields() throws {
        for (seed, capacity) in [(UInt64(1), 0), (2, 22), (3, 100), (4, StateWriter.defaultCapacity), (5, 1 << 16)] {
            let fields = Self.fields(seed: seed)
            var writer = StateWriter(kind: .senderKeyReceiver, version: 3, capacity: capacity)
            Self.write(fields, into: &writer)
            let blob = writer.finish()
            XCTAssertEqual(blob, Self.referenceBlob(kind: .senderKeyReceiver, version: 3, fields), "seed \(seed)")

            var reader = try StateReader(blob, kind: .senderKeyReceiver, supportedVersions: 1 ... 3)
            XCTAssertEqual(reader.version, 3)
            XCTAssertEqual(try Self.read(like: fields, from: &reader), fields, "seed \(seed)")
            XCTAssertNoThrow(try reader.finish())
        }
    }

    func testACopiedWriterWritesIndependentlyOfTheOriginal() throws {
        let first = Self.fields(seed: 10), second = Self.fields(seed: 11)
        var original = StateWriter(kind: .trust, version: 1, capacity: 0)
        Self.write(Array(first.prefix(50)), into: &original)
        var copy = original
        Self.write(Array(first.dropFirst(50)), into: &original)
        Self.write(second, into: &copy)
        XCTAssertEqual(original.finish(), Self.referenceBlob(kind: .trust, version: 1, first))
        XCTAssertEqual(copy.finish(), Self.referenceBlob(kind: .trust, version: 1, Array(first.prefix(50)) + second))
    }

    func testEveryAllocationAWriterLetsGoOfIsWipedFirst() {
        let record = ReleaseRecord()
        let fields = Self.fields(seed: 20)
        let expected = Self.referenceBlob(kind: .session, version: 1, fields)
        var writer = StateWriter(kind: .session, version: 1, capacity: 32, releaseObserver: record.observer)
        Self.write(fields, into: &writer)
        // 32 bytes growing at least twofold to hold about 3 KB: at least 6 allocations were left behind.
        let releasedWhileWriting = record.releases.count
        XCTAssertGreaterThanOrEqual(releasedWhileWriting, 6)
        XCTAssertEqual(record.releases.first?.size, 32)
        for (earlier, later) in zip(record.releases, record.releases.dropFirst()) {
            XCTAssertGreaterThanOrEqual(later.size, 2 * earlier.size, "growth is at least twofold")
        }
        XCTAssertEqual(writer.finish(), expected)
        XCTAssertEqual(record.releases.count, releasedWhileWriting + 1, "the last allocation is released once finish() is done")
        XCTAssertGreaterThanOrEqual(record.releases.last?.size ?? 0, expected.count)
        XCTAssertTrue(record.releases.allSatisfy(\.wiped), "an allocation holding written bytes was freed unwiped")
    }

    func testAnAbandonedWriterWipesItsStorage() {
        let record = ReleaseRecord()
        do {
            var writer = StateWriter(kind: .identity, version: 1, capacity: 64, releaseObserver: record.observer)
            writer.writeFixed(SecureBytes(copying: [UInt8](repeating: 0xA5, count: 48)))
            XCTAssertEqual(record.releases.count, 0, "nothing released while the writer is in use")
            _ = writer
        }
        XCTAssertEqual(record.releases.map(\.size), [64])
        XCTAssertTrue(record.releases.allSatisfy(\.wiped))
    }

    func testAFieldReachingIntoTheChecksumIsInvalidPayload() throws {
        // The reader shares the caller's whole blob; the body still ends where the checksum starts.
        var writer = StateWriter(kind: .trust, version: 1)
        writer.write(UInt32(16))   // a variable field claiming the 16 checksum bytes as its contents
        let blob = writer.finish()
        var reader = try StateReader(blob, kind: .trust, supportedVersions: 1 ... 1)
        XCTAssertThrowsError(try reader.readVariable()) { XCTAssertEqual($0 as? SessionError, .invalidPayload) }
        var fixedReader = try StateReader(blob, kind: .trust, supportedVersions: 1 ... 1)
        _ = try fixedReader.readUInt32()
        XCTAssertThrowsError(try fixedReader.readSecret(1)) { XCTAssertEqual($0 as? SessionError, .invalidPayload) }
    }
}
