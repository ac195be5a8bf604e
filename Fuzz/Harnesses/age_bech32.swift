// Harness `age_bech32`: Bech32 as age uses it (BIP 173 without a length limit), and the
// X25519 identity and recipient strings.
//
// Input: a mode byte, then (mode even) text, or (mode odd) a human-readable part and data.
//
// Invariants: a decoded string is single-case and re-encodes to itself (in its case); an
// identity string parses exactly when it decodes with the part AGE-SECRET-KEY- (uppercase) and
// 32 bytes, and then writes back the same string; likewise a recipient with `age` (lowercase);
// encoding any data under any valid part decodes back to it; one changed character is refused
// (the checksum detects every single-character change).
@_spi(Testing) import SessionKit
@_spi(Testing) import SessionKitAge
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        if mode % 2 == 0 {
            let text = String(decoding: input.rest(), as: UTF8.self)
            let decoded = AgeTesting.bech32Decode(text)
            if let decoded {
                let again = AgeTesting.bech32Encode(hrp: decoded.hrp, data: decoded.data)
                invariant(again == text.lowercased() || again == text.uppercased(), "a decoded string does not re-encode to itself")
                invariant(text == text.lowercased() || text == text.uppercased(), "a mixed-case string decoded")
            }
            let identity = try? AgeX25519Identity(text)
            invariant((identity != nil) == (decoded?.hrp == "AGE-SECRET-KEY-" && decoded?.data.count == 32), "identity parsing disagrees with Bech32")
            if let identity { invariant(identity.secretKeyString == text, "an identity does not write back its string") }
            let recipient = try? AgeX25519Recipient(text)
            invariant((recipient != nil) == (decoded?.hrp == "age" && decoded?.data.count == 32), "recipient parsing disagrees with Bech32")
            if let recipient { invariant(recipient.string == text, "a recipient does not write back its string") }
            return
        }
        let upper = input.byte() % 2 == 1
        var hrpBytes = input.take(Int(input.byte() % 20) + 1).map { 0x21 + $0 % 94 }
        if hrpBytes.isEmpty { hrpBytes = [0x61] }   // a human-readable part has 1 or more characters
        hrpBytes = hrpBytes.map { upper ? ((0x61 ... 0x7A).contains($0) ? $0 - 0x20 : $0) : ((0x41 ... 0x5A).contains($0) ? $0 + 0x20 : $0) }
        // The separator is the last "1": a part may contain "1" too.
        let hrp = String(decoding: hrpBytes, as: UTF8.self)
        let position = Int(input.u16())
        let data = input.rest()
        let text = AgeTesting.bech32Encode(hrp: hrp, data: data)
        guard let decoded = AgeTesting.bech32Decode(text) else { fail("an encoded string does not decode") }
        invariant(decoded.hrp == hrp && decoded.data == data, "an encoded string decodes to other parts")
        var characters = Array(text.utf8)
        let index = position % characters.count
        let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
        let original = characters[index]
        let lower = (0x41 ... 0x5A).contains(original) ? original + 0x20 : original
        guard let value = alphabet.firstIndex(of: lower), index > hrpBytes.count else { return }
        var replacement = alphabet[(value + 1 + position / characters.count % 31) % 32]
        if upper, (0x61 ... 0x7A).contains(replacement) { replacement -= 0x20 }
        characters[index] = replacement
        invariant(AgeTesting.bech32Decode(String(decoding: characters, as: UTF8.self)) == nil, "a string with one character changed decoded")
    }

    static func seeds() -> [[UInt8]] {
        let identity = must { try AgeX25519Identity(privateKey: X25519.PrivateKey(rawRepresentation: fixedBytes(32, seed: 9))) }
        return [
            [0] + Array(identity.secretKeyString.utf8),
            [0] + Array(identity.recipient.string.utf8),
            [0] + Array("A12UEL5L".utf8),
            [0] + Array("split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w".utf8),
            [1, 1, 15] + Array("AGE-SECRET-KEY-".utf8) + [0, 40] + fixedBytes(32, seed: 3),
            [1, 0, 3] + Array("age".utf8) + [0, 7] + fixedBytes(32, seed: 4),
        ]
    }
}
