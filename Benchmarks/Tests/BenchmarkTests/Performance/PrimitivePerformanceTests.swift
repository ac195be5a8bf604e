import BenchmarkHarness
import XCTest

/// XCTest `measure` blocks for every primitive case and contender of the catalog.
/// Run in release: `swift test -c release -Xswiftc -enable-testing --filter PrimitivePerformanceTests`.
final class PrimitivePerformanceTests: XCTestCase {
    func testX25519KeygenLibrary() throws { try measureCase("x25519.keygen", .library) }
    func testX25519KeygenFloor() throws { try measureCase("x25519.keygen", .floor) }
    func testX25519KeygenSwiftCrypto() throws { try measureCase("x25519.keygen", .swiftCrypto) }

    func testX25519DhLibrary() throws { try measureCase("x25519.dh", .library) }
    func testX25519DhFloor() throws { try measureCase("x25519.dh", .floor) }
    func testX25519DhSwiftCrypto() throws { try measureCase("x25519.dh", .swiftCrypto) }

    func testX25519DhBufferLibrary() throws { try measureCase("x25519.dh.buffer", .library) }
    func testX25519DhBufferFloor() throws { try measureCase("x25519.dh.buffer", .floor) }
    func testX25519DhBufferSwiftCrypto() throws { try measureCase("x25519.dh.buffer", .swiftCrypto) }

    func testEd25519Sign64BLibrary() throws { try measureCase("ed25519.sign.64B", .library) }
    func testEd25519Sign64BFloor() throws { try measureCase("ed25519.sign.64B", .floor) }
    func testEd25519Sign64BSwiftCrypto() throws { try measureCase("ed25519.sign.64B", .swiftCrypto) }

    func testEd25519Verify64BLibrary() throws { try measureCase("ed25519.verify.64B", .library) }
    func testEd25519Verify64BFloor() throws { try measureCase("ed25519.verify.64B", .floor) }
    func testEd25519Verify64BSwiftCrypto() throws { try measureCase("ed25519.verify.64B", .swiftCrypto) }

    func testEd25519ToX25519PublicLibrary() throws { try measureCase("ed25519-to-x25519.public", .library) }
    func testEd25519ToX25519PublicFloor() throws { try measureCase("ed25519-to-x25519.public", .floor) }

    func testHmacSha25664BLibrary() throws { try measureCase("hmac-sha256.64B", .library) }
    func testHmacSha25664BFloor() throws { try measureCase("hmac-sha256.64B", .floor) }
    func testHmacSha25664BSwiftCrypto() throws { try measureCase("hmac-sha256.64B", .swiftCrypto) }

    func testHkdfSha25664BLibrary() throws { try measureCase("hkdf-sha256.64B", .library) }
    func testHkdfSha25664BFloor() throws { try measureCase("hkdf-sha256.64B", .floor) }
    func testHkdfSha25664BSwiftCrypto() throws { try measureCase("hkdf-sha256.64B", .swiftCrypto) }

    func testSha51264BLibrary() throws { try measureCase("sha512.64B", .library) }
    func testSha51264BFloor() throws { try measureCase("sha512.64B", .floor) }
    func testSha51264BSwiftCrypto() throws { try measureCase("sha512.64B", .swiftCrypto) }

    func testSha51264BBufferLibrary() throws { try measureCase("sha512.64B.buffer", .library) }
    func testSha51264BBufferFloor() throws { try measureCase("sha512.64B.buffer", .floor) }
    func testSha51264BBufferSwiftCrypto() throws { try measureCase("sha512.64B.buffer", .swiftCrypto) }

    func testSha5121KiBLibrary() throws { try measureCase("sha512.1KiB", .library) }
    func testSha5121KiBFloor() throws { try measureCase("sha512.1KiB", .floor) }
    func testSha5121KiBSwiftCrypto() throws { try measureCase("sha512.1KiB", .swiftCrypto) }

    func testSha5121KiBBufferLibrary() throws { try measureCase("sha512.1KiB.buffer", .library) }
    func testSha5121KiBBufferFloor() throws { try measureCase("sha512.1KiB.buffer", .floor) }
    func testSha5121KiBBufferSwiftCrypto() throws { try measureCase("sha512.1KiB.buffer", .swiftCrypto) }

    func testAes256gcmSeal64BLibrary() throws { try measureCase("aes256gcm.seal.64B", .library) }
    func testAes256gcmSeal64BFloor() throws { try measureCase("aes256gcm.seal.64B", .floor) }
    func testAes256gcmSeal64BSwiftCrypto() throws { try measureCase("aes256gcm.seal.64B", .swiftCrypto) }

    func testAes256gcmSeal64BBufferLibrary() throws { try measureCase("aes256gcm.seal.64B.buffer", .library) }
    func testAes256gcmSeal64BBufferFloor() throws { try measureCase("aes256gcm.seal.64B.buffer", .floor) }
    func testAes256gcmSeal64BBufferSwiftCrypto() throws { try measureCase("aes256gcm.seal.64B.buffer", .swiftCrypto) }

    func testAes256gcmOpen64BLibrary() throws { try measureCase("aes256gcm.open.64B", .library) }
    func testAes256gcmOpen64BFloor() throws { try measureCase("aes256gcm.open.64B", .floor) }
    func testAes256gcmOpen64BSwiftCrypto() throws { try measureCase("aes256gcm.open.64B", .swiftCrypto) }

    func testAes256gcmOpen64BBufferLibrary() throws { try measureCase("aes256gcm.open.64B.buffer", .library) }
    func testAes256gcmOpen64BBufferFloor() throws { try measureCase("aes256gcm.open.64B.buffer", .floor) }
    func testAes256gcmOpen64BBufferSwiftCrypto() throws { try measureCase("aes256gcm.open.64B.buffer", .swiftCrypto) }

    func testAes256gcmSeal1KiBLibrary() throws { try measureCase("aes256gcm.seal.1KiB", .library) }
    func testAes256gcmSeal1KiBFloor() throws { try measureCase("aes256gcm.seal.1KiB", .floor) }
    func testAes256gcmSeal1KiBSwiftCrypto() throws { try measureCase("aes256gcm.seal.1KiB", .swiftCrypto) }

    func testAes256gcmSeal1KiBBufferLibrary() throws { try measureCase("aes256gcm.seal.1KiB.buffer", .library) }
    func testAes256gcmSeal1KiBBufferFloor() throws { try measureCase("aes256gcm.seal.1KiB.buffer", .floor) }
    func testAes256gcmSeal1KiBBufferSwiftCrypto() throws { try measureCase("aes256gcm.seal.1KiB.buffer", .swiftCrypto) }

    func testAes256gcmOpen1KiBLibrary() throws { try measureCase("aes256gcm.open.1KiB", .library) }
    func testAes256gcmOpen1KiBFloor() throws { try measureCase("aes256gcm.open.1KiB", .floor) }
    func testAes256gcmOpen1KiBSwiftCrypto() throws { try measureCase("aes256gcm.open.1KiB", .swiftCrypto) }

    func testAes256gcmOpen1KiBBufferLibrary() throws { try measureCase("aes256gcm.open.1KiB.buffer", .library) }
    func testAes256gcmOpen1KiBBufferFloor() throws { try measureCase("aes256gcm.open.1KiB.buffer", .floor) }
    func testAes256gcmOpen1KiBBufferSwiftCrypto() throws { try measureCase("aes256gcm.open.1KiB.buffer", .swiftCrypto) }

    func testAes256gcmSeal64KiBLibrary() throws { try measureCase("aes256gcm.seal.64KiB", .library) }
    func testAes256gcmSeal64KiBFloor() throws { try measureCase("aes256gcm.seal.64KiB", .floor) }
    func testAes256gcmSeal64KiBSwiftCrypto() throws { try measureCase("aes256gcm.seal.64KiB", .swiftCrypto) }

    func testAes256gcmSeal64KiBBufferLibrary() throws { try measureCase("aes256gcm.seal.64KiB.buffer", .library) }
    func testAes256gcmSeal64KiBBufferFloor() throws { try measureCase("aes256gcm.seal.64KiB.buffer", .floor) }
    func testAes256gcmSeal64KiBBufferSwiftCrypto() throws { try measureCase("aes256gcm.seal.64KiB.buffer", .swiftCrypto) }

    func testAes256gcmOpen64KiBLibrary() throws { try measureCase("aes256gcm.open.64KiB", .library) }
    func testAes256gcmOpen64KiBFloor() throws { try measureCase("aes256gcm.open.64KiB", .floor) }
    func testAes256gcmOpen64KiBSwiftCrypto() throws { try measureCase("aes256gcm.open.64KiB", .swiftCrypto) }

    func testAes256gcmOpen64KiBBufferLibrary() throws { try measureCase("aes256gcm.open.64KiB.buffer", .library) }
    func testAes256gcmOpen64KiBBufferFloor() throws { try measureCase("aes256gcm.open.64KiB.buffer", .floor) }
    func testAes256gcmOpen64KiBBufferSwiftCrypto() throws { try measureCase("aes256gcm.open.64KiB.buffer", .swiftCrypto) }
}
