import Foundation
import TestSupport
import XCTest
@testable import SessionKit

/// The text envelope: its JSON form (written out by hand from its documented table), and
/// strict decoding with typed errors.
final class MessageEnvelopeTests: XCTestCase {
    private let alice = address("alice", 1)
    private let bob = address("bob", 2)

    func testAPairwiseEnvelopeHasTheDocumentedTextAndDecodesBack() throws {
        let envelope = try MessageEnvelope(sender: alice, recipient: bob, kind: .message, body: [0x33, 0x08, 0xCB, 0xFF])
        XCTAssertEqual(
            envelope.encodedText(),
            #"{"body":"MwjL/w==","kind":"message","recipient":{"device":2,"user":"bob"},"sender":{"device":1,"user":"alice"},"v":1}"#)
        XCTAssertEqual(try MessageEnvelope(text: envelope.encodedText()), envelope)
        XCTAssertEqual(try MessageEnvelope(jsonData: envelope.encodedJSON()), envelope)
    }

    func testAGroupEnvelopeCarriesTheGroupInBase64AndNoRecipient() throws {
        let envelope = try MessageEnvelope(sender: alice, recipient: nil, kind: .groupMessage, group: groupID("team"), body: [1])
        XCTAssertEqual(envelope.encodedText(), #"{"body":"AQ==","group":"dGVhbQ==","kind":"groupMessage","sender":{"device":1,"user":"alice"},"v":1}"#)
        XCTAssertEqual(try MessageEnvelope(text: envelope.encodedText()), envelope)
        let distribution = try MessageEnvelope(sender: alice, recipient: bob, kind: .senderKeyDistribution, group: groupID("team"), body: [2])
        XCTAssertEqual(try MessageEnvelope(text: distribution.encodedText()), distribution)
    }

    func testAnotherWriterSFieldOrderAndWhitespaceAreAccepted() throws {
        let text = """
            { "v" : 1,
              "sender": {"user": "alice", "device": 1}, "kind": "message",
              "recipient": {"device": 2, "user": "bob"}, "body": "AQID" }
            """
        let envelope = try MessageEnvelope(text: text)
        XCTAssertEqual(envelope.sender, alice)
        XCTAssertEqual(envelope.recipient, bob)
        XCTAssertEqual(envelope.body, [1, 2, 3])
    }

    func testDecodingIsStrictWithTypedErrors() {
        let sender = #""sender":{"device":1,"user":"alice"}"#
        let recipient = #""recipient":{"device":2,"user":"bob"}"#
        let cases: [(String, EnvelopeError)] = [
            ("", .notAJSONObject),
            ("[]", .notAJSONObject),
            ("\"text\"", .notAJSONObject),
            (#"{"v":1"#, .notAJSONObject),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","body":"AQ=="} x"#, .notAJSONObject),
            (#"{"v":2,\#(sender),\#(recipient),"kind":"message","body":"AQ=="}"#, .unsupportedVersion(found: 2)),
            (#"{\#(sender),\#(recipient),"kind":"message","body":"AQ=="}"#, .missingField("v")),
            (#"{"v":1,\#(recipient),"kind":"message","body":"AQ=="}"#, .missingField("sender")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message"}"#, .missingField("body")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","body":"AQ==","note":"x"}"#, .unknownField("note")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","body":"AQ==","body":"Ag=="}"#, .repeatedField("body")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","body":"AQ==","bod\u0079":"Ag=="}"#, .notAJSONObject),
            (#"{"v":1,"sender":{"device":1,"user":"alice","user":"mallory"},\#(recipient),"kind":"message","body":"AQ=="}"#,
             .repeatedField("user")),
            (#"{"v":1,"sender":{"device":1,"user":"alice","admin":true},\#(recipient),"kind":"message","body":"AQ=="}"#,
             .unknownField("admin")),
            (#"{"v":1,"sender":{"device":1,"user":""},\#(recipient),"kind":"message","body":"AQ=="}"#, .invalidField("user")),
            (#"{"v":1,"sender":{"device":-1,"user":"alice"},\#(recipient),"kind":"message","body":"AQ=="}"#, .invalidField("device")),
            (#"{"v":1,"sender":{"device":4294967296,"user":"alice"},\#(recipient),"kind":"message","body":"AQ=="}"#,
             .invalidField("device")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"photo","body":"AQ=="}"#, .invalidField("kind")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","body":"AR=="}"#, .invalidField("body")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","body":"AQ"}"#, .invalidField("body")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","body":"A Q=="}"#, .invalidField("body")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","body":""}"#, .invalidField("body")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","body":1}"#, .invalidField("body")),
            (#"{"v":"1",\#(sender),\#(recipient),"kind":"message","body":"AQ=="}"#, .invalidField("v")),
            (#"{"v":1,\#(sender),"kind":"message","body":"AQ=="}"#, .inconsistentFields("a pairwise message needs a recipient")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"message","group":"dGVhbQ==","body":"AQ=="}"#,
             .inconsistentFields("a pairwise message has no group")),
            (#"{"v":1,\#(sender),"kind":"groupMessage","body":"AQ=="}"#, .inconsistentFields("a group message needs a group")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"groupMessage","group":"dGVhbQ==","body":"AQ=="}"#,
             .inconsistentFields("a group message has no recipient")),
            (#"{"v":1,\#(sender),\#(recipient),"kind":"senderKeyDistribution","body":"AQ=="}"#,
             .inconsistentFields("a sender-key distribution needs a group")),
            (#"{"v":1,\#(sender),"kind":"groupMessage","group":"","body":"AQ=="}"#, .invalidField("group")),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try MessageEnvelope(text: text), text) { error in
                XCTAssertEqual(error as? EnvelopeError, expected, text)
            }
        }
    }

    func testNumbersMustBeCanonicalIntegers() throws {
        // Found by the review: `"device": 1.0`, `1e0` and `-0` decoded as 1 and 0, so one
        // envelope had several texts (and two readers could disagree on a number).
        let recipient = #""recipient":{"device":2,"user":"bob"}"#
        for number in ["1.0", "1e0", "1E0", "1e+0", "10e-1", "1.5", "01", "001", "-0", "-0.0", "0e0", "1.", "+1"] {
            let device = #"{"v":1,"sender":{"device":\#(number),"user":"alice"},\#(recipient),"kind":"message","body":"AQ=="}"#
            XCTAssertThrowsError(try MessageEnvelope(text: device), device) { error in
                XCTAssertEqual(error as? EnvelopeError, number == "+1" || number == "1." ? .notAJSONObject : .invalidField("device"), device)
            }
            let version = #"{"v":\#(number),"sender":{"device":1,"user":"alice"},\#(recipient),"kind":"message","body":"AQ=="}"#
            XCTAssertThrowsError(try MessageEnvelope(text: version), version) { error in
                XCTAssertEqual(error as? EnvelopeError, number == "+1" || number == "1." ? .notAJSONObject : .invalidField("v"), version)
            }
        }
        // A number anywhere in the text is checked, also in a field the envelope does not define.
        XCTAssertThrowsError(try MessageEnvelope(
            text: #"{"v":1,"sender":{"device":1,"user":"alice"},\#(recipient),"kind":"message","body":"AQ==","x":[0,1.0]}"#)) {
            XCTAssertEqual($0 as? EnvelopeError, .invalidField("x"))
        }
        // Canonical integers still decode: 0 and the largest device id.
        for device: UInt32 in [0, 7, .max] {
            let text = #"{"v":1,"sender":{"device":\#(device),"user":"alice"},\#(recipient),"kind":"message","body":"AQ=="}"#
            XCTAssertEqual(try MessageEnvelope(text: text).sender.deviceID, device)
        }
    }

    func testSizeLimitsAreEnforcedOnBothSides() throws {
        let largest = [UInt8](repeating: 7, count: MessageEnvelope.maximumBodyByteCount)
        let envelope = try MessageEnvelope(sender: alice, recipient: bob, kind: .message, body: largest)
        XCTAssertLessThanOrEqual(envelope.encodedJSON().count, MessageEnvelope.maximumTextByteCount)
        XCTAssertEqual(try MessageEnvelope(text: envelope.encodedText()).body.count, largest.count)
        XCTAssertThrowsError(try MessageEnvelope(sender: alice, recipient: bob, kind: .message, body: largest + [0])) {
            XCTAssertEqual($0 as? EnvelopeError, .bodyTooLong(found: largest.count + 1))
        }
        XCTAssertThrowsError(try MessageEnvelope(sender: alice, recipient: bob, kind: .message, body: [])) {
            XCTAssertEqual($0 as? EnvelopeError, .invalidField("body"))
        }
        let tooLong = String(repeating: " ", count: MessageEnvelope.maximumTextByteCount + 1)
        XCTAssertThrowsError(try MessageEnvelope(text: tooLong)) {
            XCTAssertEqual($0 as? EnvelopeError, .textTooLong(found: MessageEnvelope.maximumTextByteCount + 1))
        }
        let oversizedBody = String(repeating: "A", count: 4 * (MessageEnvelope.maximumBodyByteCount / 3 + 2))
        let text = #"{"v":1,"sender":{"device":1,"user":"alice"},"recipient":{"device":2,"user":"bob"},"kind":"message","body":"\#(oversizedBody)"}"#
        XCTAssertThrowsError(try MessageEnvelope(text: text)) {
            guard case .bodyTooLong = $0 as? EnvelopeError else { return XCTFail("\($0)") }
        }
    }

    func testTheDocumentedOverheadHolds() throws {
        // "a 1,024-byte ciphertext becomes 1,477 bytes of text" (the type's documentation).
        let envelope = try MessageEnvelope(sender: alice, recipient: bob, kind: .message, body: [UInt8](repeating: 1, count: 1024))
        let count = envelope.encodedJSON().count
        // {"body":"…","kind":"message","recipient":{"device":2,"user":"bob"},"sender":{"device":1,"user":"alice"},"v":1}
        XCTAssertEqual(count, 1368 + 9 + 19 + 38 + 37 + 6, "base64 of 1,024 bytes is 1,368; the rest is the JSON around it")
    }

    func testTheDescriptionNeverHoldsTheBody() throws {
        let envelope = try MessageEnvelope(sender: alice, recipient: bob, kind: .message, body: Array("secret words".utf8))
        XCTAssertEqual(envelope.description, "MessageEnvelope(message from alice.1 to bob.2, 12 bytes)")
        XCTAssertFalse(String(describing: EnvelopeError.invalidField("body")).contains("c2VjcmV0"))
    }
}
