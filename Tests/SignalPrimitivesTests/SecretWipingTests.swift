import Foundation
import XCTest
@testable import SignalPrimitives

/// Secret storage is wiped when released. The check uses `SecureBytes`' internal release hook,
/// which `deinit` calls with the allocation after `sodium_memzero` and before freeing it: the
/// test sees the memory while it is still allocated, so nothing reads freed memory.
final class SecretWipingTests: XCTestCase {
    /// What a release hook saw: whether it ran, and whether every byte was zero.
    final class ReleaseRecord: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [Bool] = []
        private var sizes: [Int] = []

        var observer: @Sendable (UnsafeRawBufferPointer) -> Void {
            { [self] buffer in
                let zero = buffer.allSatisfy { $0 == 0 }
                lock.lock()
                seen.append(zero)
                sizes.append(buffer.count)
                lock.unlock()
            }
        }

        /// The results of the releases seen so far: `true` for a wiped allocation.
        var releases: [Bool] {
            lock.lock()
            defer { lock.unlock() }
            return seen
        }

        /// The sizes of the allocations seen.
        var releasedSizes: [Int] {
            lock.lock()
            defer { lock.unlock() }
            return sizes
        }
    }

    /// 0xA5 bytes (and a final 0x5A), never zero, so a missing wipe is visible.
    static func pattern(_ count: Int) -> [UInt8] {
        (0 ..< count).map { $0 == count - 1 ? 0x5A : 0xA5 }
    }

    /// Secure storage of `count` pattern bytes whose release `record` observes.
    static func observedStorage(_ count: Int, _ record: ReleaseRecord) -> SecureBytes {
        SecureBytes(count: count, releaseObserver: record.observer) { (buffer: UnsafeMutableRawBufferPointer) in
            buffer.copyBytes(from: pattern(count))
        }
    }

    func testSecureBytesAreZeroedWhenTheLastReferenceGoes() {
        let record = ReleaseRecord()
        var storage: SecureBytes? = Self.observedStorage(48, record)
        XCTAssertEqual(storage?.bytes, Self.pattern(48))
        XCTAssertEqual(record.releases, [], "wiped while still referenced")
        storage = nil
        XCTAssertEqual(record.releases, [true])
        XCTAssertEqual(record.releasedSizes, [48])
    }

    func testSharedSecureBytesAreWipedOnlyAfterTheLastCopyIsReleased() {
        let record = ReleaseRecord()
        var first: SecureBytes? = Self.observedStorage(32, record)
        var second = first
        first = nil
        XCTAssertEqual(record.releases, [])
        XCTAssertEqual(second?.bytes, Self.pattern(32), "a released reference wiped storage still in use")
        second = nil
        XCTAssertEqual(record.releases, [true])
    }

    func testAnEmptySecureBytesReleasesItsPlaceholderByteWiped() {
        let record = ReleaseRecord()
        var storage: SecureBytes? = SecureBytes(count: 0, releaseObserver: record.observer) { (_: UnsafeMutableRawBufferPointer) in }
        XCTAssertEqual(storage?.count, 0)
        storage = nil
        XCTAssertEqual(record.releases, [true])
    }

    func testStorageIsWipedWhenTheInitializerThrows() {
        struct Refused: Error {}
        let record = ReleaseRecord()
        XCTAssertThrowsError(try SecureBytes(count: 16, releaseObserver: record.observer) { (buffer: UnsafeMutableRawBufferPointer) throws(Refused) in
            buffer.copyBytes(from: Self.pattern(16))
            throw Refused()
        })
        XCTAssertEqual(record.releases, [true])
    }

    func testSymmetricKeyStorageIsWipedWhenTheKeyIsReleased() {
        let record = ReleaseRecord()
        var key: SymmetricKey? = SymmetricKey(storage: Self.observedStorage(32, record))
        var copy = key
        XCTAssertEqual(key?.byteCount, 32)
        key = nil
        XCTAssertEqual(record.releases, [], "a copy of the key still uses the storage")
        XCTAssertEqual(copy?.withUnsafeBytes { Array($0) }, Self.pattern(32))
        copy = nil
        XCTAssertEqual(record.releases, [true])
    }

    func testX25519PrivateKeyStorageIsWipedWhenTheKeyIsReleased() throws {
        let record = ReleaseRecord()
        var key: X25519.PrivateKey? = try X25519.PrivateKey(bytes: Self.observedStorage(32, record))
        let peer = try X25519.PrivateKey()
        XCTAssertEqual(try key?.sharedSecret(with: peer.publicKey), try peer.sharedSecret(with: XCTUnwrap(key?.publicKey)))
        XCTAssertEqual(record.releases, [])
        key = nil
        XCTAssertEqual(record.releases, [true])
    }

    func testEd25519SeedStorageIsWipedWhenTheKeyIsReleased() throws {
        let record = ReleaseRecord()
        var key: Ed25519.PrivateKey? = try Ed25519.PrivateKey(seedStorage: Self.observedStorage(32, record))
        let message = Array("signed".utf8)
        let signature = try XCTUnwrap(key?.signature(for: message))
        XCTAssertTrue(try XCTUnwrap(key?.publicKey).isValidSignature(signature, for: message))
        XCTAssertEqual(record.releases, [])
        key = nil
        XCTAssertEqual(record.releases, [true])
    }

    func testAKeyRejectedForItsLengthStillWipesTheStorageItWasGiven() {
        let record = ReleaseRecord()
        XCTAssertThrowsError(try X25519.PrivateKey(bytes: Self.observedStorage(31, record)))
        XCTAssertThrowsError(try Ed25519.PrivateKey(seedStorage: Self.observedStorage(33, record)))
        XCTAssertEqual(record.releases, [true, true])
    }

    func testSecureMemoryZeroWipesArraysAndBuffersInPlace() {
        var array = Self.pattern(40)
        SecureMemory.zero(&array)
        XCTAssertEqual(array, [UInt8](repeating: 0, count: 40))

        var buffer = Self.pattern(24)
        buffer.withUnsafeMutableBytes { SecureMemory.zero($0) }
        XCTAssertEqual(buffer, [UInt8](repeating: 0, count: 24))

        var empty: [UInt8] = []
        SecureMemory.zero(&empty)
        XCTAssertEqual(empty, [])
    }

    func testFinalizingAnHMACWipesItsKeyedState() throws {
        let key = Self.pattern(32)
        for useBuffer in [false, true] {
            var mac = HMACSHA256(key: key)
            mac.update(Array("message".utf8))
            let keyed = withUnsafeBytes(of: mac.state) { Array($0) }
            XCTAssertTrue(keyed.contains { $0 != 0 }, "a keyed HMAC state cannot be all zero")
            var tag = [UInt8](repeating: 0, count: 32)
            if useBuffer {
                try tag.withUnsafeMutableBytes { try mac.finalize(into: $0) }
            } else {
                tag = mac.finalize()
            }
            XCTAssertEqual(tag, HMACSHA256.authenticationCode(for: Array("message".utf8), using: key))
            XCTAssertTrue(withUnsafeBytes(of: mac.state) { $0.allSatisfy { $0 == 0 } }, "state not wiped after finalize")
        }
    }
}
