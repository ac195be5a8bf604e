import Foundation
import SignalPrimitives
import TestSupport
import XCTest

/// The example of SignalPrimitives' documentation landing page
/// (Sources/SignalPrimitives/SignalPrimitives.docc/SignalPrimitives.md), run here between the
/// markers; a second test checks that the page shows exactly these lines.
final class DocumentationExampleTests: XCTestCase {
    func testTheLandingPageExampleRuns() throws {
        // example begins
        let alice = try X25519.PrivateKey()
        let bob = try X25519.PrivateKey()
        let secret = try alice.sharedSecret(with: bob.publicKey)
        let key = try HKDF.deriveKey(inputKeyMaterial: secret, salt: [],
                                     info: Array("example v1".utf8), outputByteCount: 32)
        let nonce = SecureRandom.bytes(XChaCha20Poly1305.nonceByteCount)
        let sealed = try XChaCha20Poly1305.seal(Array("hello".utf8), using: key, nonce: nonce)
        // example ends

        XCTAssertEqual(secret, try bob.sharedSecret(with: alice.publicKey))
        XCTAssertEqual(key.byteCount, 32)
        XCTAssertEqual(sealed.count, 5 + XChaCha20Poly1305.tagByteCount)
        XCTAssertEqual(try XChaCha20Poly1305.open(sealed, using: key, nonce: nonce), Array("hello".utf8))
    }

    func testTheLandingPageShowsExactlyTheLinesThatRunHere() throws {
        let page = try PackageDocuments.text("Sources/SignalPrimitives/SignalPrimitives.docc/SignalPrimitives.md")
        let shown = try PackageDocuments.firstSwiftBlock(in: page)
        let run = try PackageDocuments.lines(
            of: try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8),
            between: "// example begins", and: "// example ends", indentation: 8)
        XCTAssertEqual(shown, run)
    }
}
