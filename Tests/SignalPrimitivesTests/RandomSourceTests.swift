import SignalPrimitives
import XCTest

final class RandomSourceTests: XCTestCase {
    func testSystemRandomFillsTheWholeBufferWithFreshBytes() {
        let a = SecureRandom.bytes(64)
        let b = SecureRandom.bytes(64)
        XCTAssertEqual(a.count, 64)
        XCTAssertNotEqual(a, b)
        XCTAssertNotEqual(a, [UInt8](repeating: 0, count: 64))
        XCTAssertEqual(SecureRandom.bytes(0), [])
        XCTAssertEqual(SystemRandomSource().bytes(-1), [])
    }

    func testKeysCanBeDrawnFromAnotherSource() throws {
        struct Fixed: RandomSource {
            func fill(_ buffer: UnsafeMutableRawBufferPointer) {
                for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index) }
            }
        }
        XCTAssertEqual(try X25519.PrivateKey(using: Fixed()).rawRepresentation, counting(32))
        XCTAssertEqual(try Ed25519.PrivateKey(using: Fixed()).seedRepresentation, counting(32))
        XCTAssertEqual(SymmetricKey(byteCount: 16, using: Fixed()), SymmetricKey(data: counting(16)))
    }

    func testLibsodiumIsInitialised() throws {
        try Sodium.ensureInitialized()
        XCTAssertTrue(Sodium.isInitialized)
        XCTAssertFalse(Sodium.libraryVersion.isEmpty)
    }
}
