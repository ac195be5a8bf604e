// Harness `message_envelope`: the text envelope (`MessageEnvelope(jsonData:)`).
//
// Invariants: any input either decodes or throws an `EnvelopeError` (typed throws), never
// traps; an input Foundation's JSONSerialization does not read as one JSON object is refused;
// an accepted input is, by JSONSerialization as an independent oracle, an object of known keys
// only with v = 1 and a body whose standard base64 is the envelope's body (re-encoded
// canonically); every number in an accepted input is a canonical integer (digits only, no
// leading zero, sign, fraction or exponent: SPEC's envelope numbers, found by a scan of the raw
// text independent of the decoder); its `encodedText()` decodes to an equal envelope and is a
// fixed point.
import Foundation
import SessionKit

enum Harness {
    static let knownKeys: Set<String> = ["v", "sender", "recipient", "kind", "group", "body"]

    static func run(_ bytes: [UInt8]) {
        let data = Data(bytes)
        let oracle = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        do {
            let envelope = try MessageEnvelope(jsonData: data)
            guard let object = oracle as? [String: Any] else { fail("accepted what JSONSerialization does not read as an object") }
            invariant(Set(object.keys).isSubset(of: knownKeys), "accepted unknown keys \(object.keys.sorted())")
            invariant((object["v"] as? NSNumber)?.intValue == 1, "accepted a version other than 1")
            invariant(object["body"] as? String == Data(envelope.body).base64EncodedString(), "body is not its canonical base64")
            invariant((object["recipient"] == nil) == (envelope.recipient == nil), "recipient presence differs")
            invariant((object["group"] == nil) == (envelope.group == nil), "group presence differs")
            if let sender = object["sender"] as? [String: Any] {
                invariant(sender["user"] as? String == envelope.sender.userID, "sender user differs")
                invariant((sender["device"] as? NSNumber)?.int64Value == Int64(envelope.sender.deviceID), "sender device differs")
            } else {
                fail("accepted without a sender object")
            }
            for number in numberTokens(bytes) {
                invariant(isCanonicalInteger(number), "accepted the non-canonical number \(String(decoding: number, as: UTF8.self))")
            }
            let text = envelope.encodedText()
            let again = try MessageEnvelope(text: text)
            invariant(again == envelope, "re-encoded envelope decodes differently")
            invariant(again.encodedText() == text, "encoding is not a fixed point")
        } catch {
            // Typed throws: every refusal is an `EnvelopeError`; its description must not trap.
            _ = error.description
        }
    }

    /// The number tokens of a JSON text outside its strings (a byte scan, not a parser).
    static func numberTokens(_ bytes: [UInt8]) -> [[UInt8]] {
        var tokens: [[UInt8]] = []
        var index = 0
        var inString = false
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\"") {
                inString = true
                index += 1
                continue
            }
            let numberBytes = Set("+-0123456789.eE".utf8)
            if byte == UInt8(ascii: "-") || (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) {
                var end = index
                while end < bytes.count, numberBytes.contains(bytes[end]) { end += 1 }
                tokens.append(Array(bytes[index ..< end]))
                index = end
                continue
            }
            index += 1
        }
        return tokens
    }

    /// Whether `token` is `0` or a digit 1–9 followed by digits.
    static func isCanonicalInteger(_ token: [UInt8]) -> Bool {
        guard let first = token.first, token.allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) }) else { return false }
        return first != UInt8(ascii: "0") || token.count == 1
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        guard let alice = try? ProtocolAddress(userID: "alice", deviceID: 1),
              let bob = try? ProtocolAddress(userID: "bob", deviceID: 2),
              let team = try? GroupID("team")
        else { return seeds }
        let envelopes = [
            try? MessageEnvelope(sender: alice, recipient: bob, kind: .message, body: [0x33, 0x08, 0xCB]),
            try? MessageEnvelope(sender: alice, recipient: bob, kind: .senderKeyDistribution, group: team, body: [1, 2]),
            try? MessageEnvelope(sender: alice, recipient: nil, kind: .groupMessage, group: team, body: [UInt8](repeating: 7, count: 40)),
        ]
        for envelope in envelopes.compactMap({ $0 }) { seeds.append(Array(envelope.encodedText().utf8)) }
        seeds.append(Array(#"{"v":1,"sender":{"user":"a","device":1},"recipient":{"user":"b","device":2},"kind":"message","body":"AQ==","body":"Ag=="}"#.utf8))
        seeds.append(Array(#"{"v":1, "sender": {"user": "\u00e9", "device": 4294967295}, "kind": "groupMessage", "group": "dGVhbQ==", "body": "AR=="}"#.utf8))
        seeds.append(Array(#"[{"v":1}]"#.utf8))
        seeds.append(Array(#"{"v":1.0,"sender":{"user":"a","device":1e0},"kind":"groupMessage","group":"dGVhbQ==","body":"AQ=="}"#.utf8))
        seeds.append(Array(#"{"v":1,"sender":{"user":"a","device":01},"kind":"groupMessage","group":"dGVhbQ==","body":"AQ=="}"#.utf8))
        return seeds
    }
}
