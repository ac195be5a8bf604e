import Foundation
import SessionKit
import TestSupport
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
        guard let bundle = upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first) else { fatalError("no prekey") }
        try await alice.processBundle(bundle, for: bobAddress)

        // Alice sends text any chat SDK can carry; Bob hands whatever arrives to `receive`.
        let text = try await alice.encryptEnvelope(Array("Hi Bob".utf8), to: bobAddress).encodedText()
        let received = try await bob.receive(try MessageEnvelope(text: text))
        if case let .message(message) = received {
            // Never drop what the trust store saw: a key change is the one thing to show the user.
            switch message.identityObservation {
            case .firstUse: print("New contact \(message.sender.userID): offer to compare safety numbers")
            case .newDevice: print("\(message.sender.userID) added a device")
            case .changed: print("\(message.sender.userID)'s safety number changed: confirm before replying")
            case .unknownDeviceWithOtherKey: print("A new device with another safety number claims to be \(message.sender.userID)")
            case .unchanged: break
            }
            print(message.isQuarantined ? "[unverified key] …" : String(decoding: message.plaintext, as: UTF8.self))  // Hi Bob
        }
        // README example ends

        XCTAssertEqual(printed, ["New contact alice: offer to compare safety numbers", "Hi Bob"])
        XCTAssertTrue(text.hasPrefix("{") && text.contains(#""kind":"message""#))
        XCTAssertEqual(received.sender, alice.localAddress)
    }

    func testTheReadmeShowsExactlyTheLinesThatRunHere() throws {
        let shown = try PackageDocuments.firstSwiftBlock(
            in: try PackageDocuments.text("README.md"), after: "## A first session", keepingEmptyLines: true)
        let run = try PackageDocuments.lines(
            of: try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8),
            between: "// README example begins", and: "// README example ends", indentation: 8, keepingEmptyLines: true)
        XCTAssertEqual(Array(shown.drop { $0.isEmpty }), run)
    }

    /// The README's block, as a user pastes it into a `main.swift`, compiles as top-level code
    /// (type-checked by `swiftc` against the modules this test run was built with).
    func testTheReadmeExampleCompilesAsTopLevelCode() throws {
        let root = PackageDocuments.root
        let readme = try PackageDocuments.text("README.md")
        let section = try XCTUnwrap(readme.range(of: "## A first session"))
        let open = try XCTUnwrap(readme[section.upperBound...].range(of: "```swift\n"))
        let close = try XCTUnwrap(readme[open.upperBound...].range(of: "```"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let main = folder.appendingPathComponent("main.swift")
        try String(readme[open.upperBound ..< close.lowerBound]).write(to: main, atomically: true, encoding: .utf8)

        // The test binary sits in the build's bin folder, next to `Modules/`.
        let binFolder = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
        let modules = binFolder.appendingPathComponent("Modules")
        XCTAssertTrue(FileManager.default.fileExists(atPath: modules.appendingPathComponent("SessionKit.swiftmodule").path),
                      "no modules at \(modules.path)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "swiftc", "-typecheck", "-swift-version", "6", main.path, "-I", modules.path,
            "-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/CSodium/module.modulemap").path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "the README example does not compile as top-level code:\n\(printed)")
    }
}
