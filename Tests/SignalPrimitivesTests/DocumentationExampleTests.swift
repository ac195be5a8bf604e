import Foundation
import SignalPrimitives
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
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(
            contentsOf: root.appendingPathComponent("Sources/SignalPrimitives/SignalPrimitives.docc/SignalPrimitives.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let open = try XCTUnwrap(page.range(of: "```swift\n"))
        let close = try XCTUnwrap(page[open.upperBound...].range(of: "```"))
        let shown = page[open.upperBound ..< close.lowerBound].split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix("import ") }
        let begin = try XCTUnwrap(source.range(of: "// example begins\n"))
        let end = try XCTUnwrap(source.range(of: "        // example ends"))
        let run = source[begin.upperBound ..< end.lowerBound].split(separator: "\n").map { String($0.dropFirst(8)) }
        XCTAssertEqual(shown, run)
    }
}
