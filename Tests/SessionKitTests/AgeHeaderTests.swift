import Foundation
import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// The header's ABNF (age.md), strictly: every deviation is a header failure, and the MAC
/// covers the header exactly.
final class AgeHeaderTests: XCTestCase {
    private let identity = try! AgeX25519Identity(using: FixedRandom(byte: 0x42))   // age.md's example identity

    /// `header` (a string, LF line ends, without the MAC line) with its MAC line for
    /// `fileKey`, followed by a valid nonce and payload for that key.
    private func file(header: String, fileKey: AgeFileKey) throws -> Data {
        var bytes = Array(header.utf8)
        bytes += " ".utf8
        bytes += AgeBase64.encodeUnpadded(try AgeKeyWrap.headerMAC(fileKey, over: bytes.dropLast().map { $0 })).utf8
        bytes += "\n".utf8
        let stream = try AgeEncryptor(recipients: [identity.recipient]).makeStream(fileKey: fileKey, nonce: [UInt8](repeating: 3, count: 16))
        let encrypted = try stream.finish()
        let payloadStart = try XCTUnwrap(encrypted.range(of: Data("\n--- ".utf8))).upperBound + 44
        return Data(bytes) + encrypted[payloadStart...]
    }

    private func stanza(_ fileKey: AgeFileKey) throws -> String {
        let stanza = try XCTUnwrap(try identity.recipient.wrap(fileKey).first)
        return "-> " + stanza.arguments.joined(separator: " ") + "\n" + AgeBase64.encodeUnpadded(stanza.body) + "\n"
    }

    private func decrypt(_ file: Data) throws -> Data {
        try AgeDecryptor(identities: [identity], format: .binary).decrypt(file)
    }

    private func assertHeaderFailure(_ file: Data, _ message: String, line: UInt = #line) {
        XCTAssertThrowsError(try decrypt(file), message, line: line) { error in
            guard case .header = error as? AgeError else { return XCTFail("\(message): \(error)", line: line) }
        }
    }

    func testAWellFormedHeaderDecrypts() throws {
        let key = AgeFileKey()
        XCTAssertEqual(try decrypt(try file(header: "age-encryption.org/v1\n" + stanza(key) + "---", fileKey: key)), Data())
        // Other stanzas are ignored, whatever their type, arguments and body (grease).
        let grease = "-> grease-x !#$%&'()*+,-./ z\n" + String(repeating: "A", count: 64) + "\nAAAA\n-> empty\n\n"
        XCTAssertEqual(try decrypt(try file(header: "age-encryption.org/v1\n" + grease + stanza(key) + "---", fileKey: key)), Data())
    }

    func testEveryDeviationFromTheABNFIsAHeaderFailure() throws {
        let key = AgeFileKey()
        let good = try stanza(key)
        let version = "age-encryption.org/v1\n"
        let cases: [(String, String)] = [
            ("no stanza (ABNF: 1*stanza)", version + "---"),
            ("another version", "age-encryption.org/v2\n" + good + "---"),
            ("a version line with CR", "age-encryption.org/v1\r\n" + good + "---"),
            ("no space after ->", version + "->X25519 abc\n\n" + good + "---"),
            ("an empty argument", version + "-> a  b\n\n" + good + "---"),
            ("a trailing space in the arguments", version + "-> a b \n\n" + good + "---"),
            ("no arguments", version + "->\n\n" + good + "---"),
            ("a tab in an argument", version + "-> a\tb\n\n" + good + "---"),
            ("a non-ASCII argument", version + "-> é\n\n" + good + "---"),
            ("a body line of 65 columns", version + "-> a\n" + String(repeating: "A", count: 65) + "\n" + good + "---"),
            ("a stanza without its short line", version + "-> a\n" + String(repeating: "A", count: 64) + "\n" + good + "---"),
            ("two short lines", version + "-> a\nAAAA\nAAAA\n" + good + "---"),
            ("padding in a body", version + "-> a\nAA==\n" + good + "---"),
            ("non-canonical body", version + "-> a\nAB\n" + good + "---"),
            ("a body line of length 1 mod 4", version + "-> a\nAAAAA\n" + good + "---"),
            ("a line that starts neither stanza nor MAC", version + good + "-- \n" + "---"),
        ]
        for (name, header) in cases {
            assertHeaderFailure(try file(header: header, fileKey: key), name)
        }
    }

    func testTheMACLineIsStrict() throws {
        let key = AgeFileKey()
        let valid = try file(header: "age-encryption.org/v1\n" + stanza(key) + "---", fileKey: key)
        XCTAssertEqual(try decrypt(valid), Data())
        let text = [UInt8](valid)
        let macLine = try XCTUnwrap(valid.range(of: Data("\n--- ".utf8))).upperBound
        let mac = Array(text[macLine ..< macLine + 43])
        let prefix = Array(text[..<(macLine - 1)])   // up to and including "---"
        let rest = Array(text[(macLine + 44)...])
        let variants: [(String, [UInt8])] = [
            ("no space", prefix + mac + [0x0A] + rest),
            ("two spaces", prefix + [0x20, 0x20] + mac + [0x0A] + rest),
            ("a trailing space", prefix + [0x20] + mac + [0x20, 0x0A] + rest),
            ("a CR", prefix + [0x20] + mac + [0x0D, 0x0A] + rest),
            ("truncated", prefix + [0x20] + mac.dropLast() + [0x0A] + rest),
            ("padded", prefix + [0x20] + mac + Array("=\n".utf8) + rest),
        ]
        for (name, bytes) in variants { assertHeaderFailure(Data(bytes), name) }
        // The last character of a 32-byte MAC carries 4 unused bits: setting one is a
        // non-canonical encoding, a header failure (not an HMAC failure).
        var nonCanonical = mac
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let value = try XCTUnwrap(alphabet.firstIndex(of: nonCanonical[42]))
        nonCanonical[42] = alphabet[value ^ 1]
        assertHeaderFailure(Data(prefix + [0x20] + nonCanonical + [0x0A] + rest), "non-canonical MAC")
        // A canonical MAC that does not match is an HMAC failure.
        var wrong = mac
        wrong[0] = wrong[0] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        XCTAssertThrowsError(try decrypt(Data(prefix + [0x20] + wrong + [0x0A] + rest))) {
            XCTAssertEqual($0 as? AgeError, .headerMAC)
        }
        // Any change to the authenticated header is an HMAC failure: here a grease stanza added.
        let changed = try file(header: "age-encryption.org/v1\n" + stanza(key) + "---", fileKey: key)
        var withGrease = [UInt8](changed)
        let insert = try XCTUnwrap(changed.range(of: Data("\n---".utf8))).lowerBound + 1
        withGrease.insert(contentsOf: Array("-> grease\n\n".utf8), at: insert)
        XCTAssertThrowsError(try decrypt(Data(withGrease))) { XCTAssertEqual($0 as? AgeError, .headerMAC) }
    }

    func testMalformedX25519StanzasAreHeaderFailuresAndOthersAreIgnored() throws {
        let key = AgeFileKey()
        let stanza = try XCTUnwrap(try identity.recipient.wrap(key).first)
        let share = stanza.arguments[1]
        let body = AgeBase64.encodeUnpadded(stanza.body)
        let version = "age-encryption.org/v1\n"
        let cases: [(String, String)] = [
            ("an extra argument", "-> X25519 \(share) extra\n\(body)\n"),
            ("no share", "-> X25519\n\(body)\n"),
            ("a 31-byte share", "-> X25519 \(AgeBase64.encodeUnpadded([UInt8](repeating: 9, count: 31)))\n\(body)\n"),
            ("a 33-byte share", "-> X25519 \(AgeBase64.encodeUnpadded([UInt8](repeating: 9, count: 33)))\n\(body)\n"),
            ("a low-order share (all-zero secret)", "-> X25519 \(AgeBase64.encodeUnpadded([UInt8](repeating: 0, count: 32)))\n\(body)\n"),
            ("a 48-byte body", "-> X25519 \(share)\n\(AgeBase64.encodeUnpadded(stanza.body + [UInt8](repeating: 0, count: 16)))\n"),
        ]
        for (name, text) in cases {
            assertHeaderFailure(try file(header: version + text + "---", fileKey: key), name)
        }
        // A lowercase type is another recipient type: ignored, so no identity matches.
        XCTAssertThrowsError(try decrypt(try file(header: version + "-> x25519 \(share)\n\(body)\n---", fileKey: key))) {
            XCTAssertEqual($0 as? AgeError, .noMatch)
        }
    }

    func testTheEncoderWrapsBodiesAt64ColumnsWithAShortLastLine() throws {
        for count in [0, 1, 47, 48, 49, 96] {
            let stanza = try AgeStanza(arguments: ["t"], body: [UInt8](repeating: 0xAB, count: count))
            let text = String(decoding: AgeHeader.encodeWithoutMAC([stanza]), as: UTF8.self)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertEqual(lines.first, "age-encryption.org/v1")
            XCTAssertEqual(lines[1], "-> t")
            let body = lines[2 ..< lines.count - 1]
            XCTAssertEqual(body.dropLast().map(\.count), Array(repeating: 64, count: count / 48), "\(count) bytes")
            XCTAssertLessThan(try XCTUnwrap(body.last).count, 64)
            XCTAssertEqual(lines.last, "---")
        }
        XCTAssertThrowsError(try AgeStanza(arguments: [], body: []))
        XCTAssertThrowsError(try AgeStanza(arguments: ["a b"], body: []))
        XCTAssertThrowsError(try AgeStanza(arguments: [""], body: []))
    }

    func testAHeaderLongerThanTheLimitIsAHeaderFailure() throws {
        let key = AgeFileKey()
        let line = String(repeating: "A", count: 64) + "\n"
        let long = "age-encryption.org/v1\n-> big\n" + String(repeating: line, count: AgeHeaderParser.maximumByteCount / 65 + 1) + "\n"
        assertHeaderFailure(try file(header: long + stanza(key) + "---", fileKey: key), "header over the limit")
    }
}
