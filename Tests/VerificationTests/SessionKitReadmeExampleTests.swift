import Foundation
import SessionKit
import Verification
import XCTest

/// The example of README.md ("A first session"), compiled and run here between the markers; a
/// second test checks that the README shows exactly these lines.
final class SessionKitReadmeExampleTests: XCTestCase {
    func testTheReadmeExampleRuns() async throws {
        var printed: [String] = []
        func print(_ line: String) { printed.append(line) }

        // README example begins
        let bobAddress = try ProtocolAddress(userID: "bob", deviceID: 1)
        let alice = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()),
                                   trust: InMemoryTrustStore(), localAddress: try ProtocolAddress(userID: "alice", deviceID: 1))
        let bob = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()),
                                 trust: InMemoryTrustStore(), localAddress: bobAddress)

        // Bob uploads his prekeys; your server hands out one bundle per new session.
        let upload = try await bob.maintainPreKeys()
        guard let bundle = upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first) else { return }
        try await alice.processBundle(bundle, for: bobAddress)

        // Alice sends text any chat SDK can carry; Bob hands whatever arrives to `receive`.
        let text = try await alice.encryptEnvelope(Array("Hi Bob".utf8), to: bobAddress).encodedText()
        let received = try await bob.receive(try MessageEnvelope(text: text))
        print(String(decoding: received.plaintext ?? [], as: UTF8.self))  // Hi Bob
        // README example ends

        XCTAssertEqual(printed, ["Hi Bob"])
        XCTAssertTrue(text.hasPrefix("{") && text.contains(#""kind":"message""#))
        XCTAssertEqual(received.sender, alice.localAddress)
    }

    func testTheReadmeShowsExactlyTheLinesThatRunHere() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)

        let section = try XCTUnwrap(readme.range(of: "## A first session"))
        let afterSection = readme[section.upperBound...]
        let open = try XCTUnwrap(afterSection.range(of: "```swift\n"))
        let close = try XCTUnwrap(afterSection[open.upperBound...].range(of: "```"))
        let shown = afterSection[open.upperBound ..< close.lowerBound]
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .filter { !$0.hasPrefix("import ") }
        let begin = try XCTUnwrap(source.range(of: "// README example begins\n"))
        let end = try XCTUnwrap(source.range(of: "        // README example ends"))
        let run = source[begin.upperBound ..< end.lowerBound]
            .split(separator: "\n", omittingEmptySubsequences: false).map { String($0.dropFirst(8)) }
        XCTAssertEqual(shown.drop { $0.isEmpty }.map { $0 }, run.map { $0 })
    }
}
