import Foundation
import SessionKit
import SessionKitMLKEM
import TestSupport
import XCTest

/// `mlkem768x25519` age files cross SessionKitMLKEM and an independent implementation: the
/// generator's `TestVectors/generator/ref_age_pq.py` (X-Wing from its written-out FIPS 203
/// ML-KEM-768, HPKE's key schedule written out, PyPI `cryptography`'s X25519 and
/// ChaCha20-Poly1305; no code shared with the Swift library). Its self-check ties it to the Go
/// reference (the age.md example key pair and the CCTV hybrid vectors); here the two
/// implementations derive the same recipient from the same identity and decrypt each other's
/// files. No real age peer can do this yet: Debian's `age` 1.1.1 predates the post-quantum
/// recipient (age 1.3), and PyPI `pyrage` 1.4.0 offers only the hardware `tag`/`tagpq` types.
///
/// Needs python3 with `cryptography` (the generator's requirement); without it the tests skip
/// with a message, unless CI is set: then they fail.
final class AgeHybridInteropTests: XCTestCase {
    private static let skipMessage = "swift-crypto's X-Wing needs macOS/iOS/tvOS/watchOS/visionOS 26"
    private static let script = PackageDocuments.root.appendingPathComponent("TestVectors/generator/ref_age_pq.py").path

    private func requirePython() throws {
        try ExternalTool.require([["python3", "-c", "import cryptography"]],
                                 otherwise: "python3 with PyPI cryptography is not installed (pip install cryptography)")
    }

    private func python(_ arguments: [String], input: Data? = nil) throws -> ExternalTool.Output {
        try ExternalTool.run(["python3", Self.script] + arguments, input: input)
    }

    private func content(_ count: Int) -> Data {
        var state = UInt64(count) &* 0x9E37_79B9_7F4A_7C15 | 1
        return Data((0 ..< count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        })
    }

    func testTheIndependentReferencePassesItsSelfCheckAgainstTheGoReferenceVectors() throws {
        try requirePython()
        let result = try python(["self-check"])
        XCTAssertEqual(result.status, 0, result.stderr)
        // 17 binary CCTV files with one post-quantum identity: 4 success, 5 no match, 8 header.
        XCTAssertEqual(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
                       "{'success': 4, 'no match': 5, 'header failure': 8}")
    }

    func testBothDeriveTheSameRecipientAndDecryptEachOthersFiles() throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip(Self.skipMessage) }
        try requirePython()
        // An identity drawn by Python: the same recipient here.
        let keys = try python(["keygen"])
        XCTAssertEqual(keys.status, 0, keys.stderr)
        let lines = String(decoding: keys.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2)
        let theirIdentity = try AgeHybridIdentity(try XCTUnwrap(lines.first))
        XCTAssertEqual(theirIdentity.recipient.string, lines.last)

        let ours = try AgeHybridIdentity()
        for size in [0, 1, 65536, 65537, 300_000] {
            let plaintext = content(size)
            // Ours → theirs.
            let file = try AgeEncryptor(recipients: [try AgeHybridRecipient(lines[1])]).encrypt(plaintext)
            let decrypted = try python(["decrypt", lines[0]], input: file)
            XCTAssertEqual(decrypted.status, 0, "size \(size): \(decrypted.stderr)")
            XCTAssertEqual(decrypted.stdout, plaintext, "size \(size)")
            // Theirs → ours.
            let theirs = try python(["encrypt", ours.recipient.string], input: plaintext)
            XCTAssertEqual(theirs.status, 0, "size \(size): \(theirs.stderr)")
            XCTAssertTrue(theirs.stdout.starts(with: Data("age-encryption.org/v1\n-> mlkem768x25519 ".utf8)))
            XCTAssertEqual(try AgeDecryptor(identities: [ours]).decrypt(theirs.stdout), plaintext, "size \(size)")
        }
        // Each side refuses the other's file for another key.
        let forOurs = try AgeEncryptor(recipients: [ours.recipient]).encrypt(content(10))
        let refused = try python(["decrypt", lines[0]], input: forOurs)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("no match"), refused.stderr)
        let forTheirs = try python(["encrypt", lines[1]], input: content(10))
        XCTAssertThrowsError(try AgeDecryptor(identities: [ours]).decrypt(forTheirs.stdout)) { error in
            XCTAssertEqual(error as? AgeError, .noMatch)
        }
    }
}
