import Foundation
import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// age's text encodings: Bech32 keys (BIP 173, age.md's examples), canonical base64, and
/// the identity and recipient strings.
final class AgeEncodingTests: XCTestCase {
    /// BIP 173's valid test strings decode, with the data computed independently (Python).
    func testBIP173ValidStringsDecode() throws {
        let cases: [(String, String, String)] = [
            ("A12UEL5L", "A", ""),
            ("a12uel5l", "a", ""),
            ("an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
             "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio", ""),
            ("abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw", "abcdef", "00443214c74254b635cf84653a56d7c675be77df"),
            ("split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w", "split", "c5f38b70305f519bf66d85fb6cf03058f3dde463ecd7918f2dc743918f2d"),
            ("?1ezyfcl", "?", ""),
        ]
        for (text, hrp, data) in cases {
            let decoded = try XCTUnwrap(Bech32.decode(text), text)
            XCTAssertEqual(decoded.hrp, hrp)
            XCTAssertEqual(decoded.data.bytes, try XCTUnwrap(Hex.decode(data)), text)
        }
    }

    /// BIP 173's invalid test strings (and mixed case, a bad checksum) do not decode.
    func testBIP173InvalidStringsAreRefused() {
        for text in ["\u{20}1nwldj5", "\u{7F}1axkwrx", "pzry9x0s0muk", "1pzry9x0s0muk", "x1b4n0q5v", "li1dgmt3",
                     "de1lg7wt\u{FF}", "A1G7SGD8", "10a06t8", "1qzzfhee", "A12uEL5L", "a12uel5m", "a1", ""] {
            XCTAssertNil(Bech32.decode(text), text.debugDescription)
        }
    }

    /// age.md's example identity (32 bytes of 0x42) and its recipient, X25519(identity, 9) as
    /// computed by PyPI `cryptography`.
    func testAgeSpecificationExampleIdentityAndRecipient() throws {
        let identity = try AgeX25519Identity("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
        XCTAssertEqual(identity.privateKey.rawRepresentation, [UInt8](repeating: 0x42, count: 32))
        XCTAssertEqual(identity.recipient.string, "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
        XCTAssertEqual(identity.recipient.publicKey.rawRepresentation,
                       try XCTUnwrap(Hex.decode("132c442be010fbd57e72603328aa76e71fccc1503aae219327d14d9c9993f472")))
        XCTAssertEqual(identity.secretKeyString, "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
        let recipient = try AgeX25519Recipient("age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
        XCTAssertEqual(recipient, identity.recipient)
    }

    func testIdentityAndRecipientStringsOfTheWrongCaseOrTypeAreRefused() {
        let identity = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
        let recipient = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"
        for text in [identity.lowercased(), recipient, String(identity.dropLast()) + "Y", "AGE-SECRET-KEY-PQ-1XX76JRALNLXDMEW0CRK45QMCCH4X06SE84UN3VPM33W6HWDX0H3SK3ZQFR"] {
            XCTAssertThrowsError(try AgeX25519Identity(text)) { error in
                guard case .invalidIdentity = error as? AgeError else { return XCTFail("\(error)") }
            }
        }
        // 16 bytes of data under the right human-readable part.
        XCTAssertThrowsError(try AgeX25519Identity(Bech32.encode(hrp: "AGE-SECRET-KEY-", data: [UInt8](repeating: 1, count: 16))))
        for text in [recipient.uppercased(), identity, "age1" + String(recipient.dropFirst(4).dropLast()) + "q",
                     Bech32.encode(hrp: "age", data: [UInt8](repeating: 1, count: 33))] {
            XCTAssertThrowsError(try AgeX25519Recipient(text)) { error in
                guard case .invalidRecipient = error as? AgeError else { return XCTFail("\(error)") }
            }
        }
    }

    func testIdentitiesNeverShowTheirSecret() throws {
        let identity = try AgeX25519Identity()
        let secret = identity.secretKeyString
        XCTAssertTrue(secret.hasPrefix("AGE-SECRET-KEY-1"))
        XCTAssertEqual(try AgeX25519Identity(secret).recipient, identity.recipient)
        let body = String(secret.dropFirst("AGE-SECRET-KEY-1".count).prefix(20))
        for text in [identity.description, identity.debugDescription, "\(identity)", String(reflecting: identity)] {
            XCTAssertFalse(text.uppercased().contains(body), text)
            XCTAssertTrue(text.contains(identity.recipient.string))
        }
        let passphrase = try AgeScryptIdentity(passphrase: "correct horse battery staple")
        XCTAssertFalse("\(passphrase)".contains("horse"))
        XCTAssertFalse("\(try AgeScryptRecipient(passphrase: "correct horse battery staple"))".contains("horse"))
        XCTAssertFalse("\(AgeFileKey())".contains("0x"))
    }

    /// Canonical unpadded base64 (RFC 4648 §3.5): the unused bits must be zero, no padding,
    /// no whitespace, no length that cannot occur.
    func testUnpaddedBase64IsCanonical() {
        XCTAssertEqual(AgeBase64.decodeUnpadded("Zm9vYg"), Array("foob".utf8))
        XCTAssertEqual(AgeBase64.decodeUnpadded("Zm9vYmE"), Array("fooba".utf8))
        XCTAssertEqual(AgeBase64.decodeUnpadded(""), [])
        for text in ["Zm9vYh", "Zm9vYmF", "Zm9vYg==", "Zm9vYg=", "Zm9v\nYg", "Zm9v Yg", "Z", "Zm9vY", "Zm9-Yg", "Zm9_Yg"] {
            XCTAssertNil(AgeBase64.decodeUnpadded(text), text.debugDescription)
        }
        XCTAssertEqual(AgeBase64.encodeUnpadded(Array("fooba".utf8)), "Zm9vYmE")
        XCTAssertEqual(AgeBase64.decodePadded(Array("Zm9vYmE=".utf8)), Array("fooba".utf8))
        XCTAssertEqual(AgeBase64.decodePadded(Array("Zm9vYg==".utf8)), Array("foob".utf8))
        for text in ["Zm9vYmE", "Zm9vYmF=", "Zm9vYh==", "Zm9vY===", "Zm9=YmE=", "====", "Zm9vYg="] {
            XCTAssertNil(AgeBase64.decodePadded(Array(text.utf8)), text)
        }
    }
}
