// Harness `age_hybrid`: age's `mlkem768x25519` recipients, identities and stanzas (C2SP age.md),
// `AgeHybridRecipient` / `AgeHybridIdentity` of SessionKitMLKEM on swift-crypto (this harness
// links swift-crypto, like `vector_loader`).
//
// Input: a mode byte (mod 4), then
//   0: a string parsed as an `age1pq1…` recipient and an `AGE-SECRET-KEY-PQ-1…` identity;
//   1: raw bytes (a 1216-byte public key, or a length and a few ML-KEM coefficients written into
//      the fixed identity's public key) for `AgeHybridRecipient(rawRepresentation:)`;
//   2: an age file (binary) decrypted with the fixed hybrid identity (C2SP/CCTV's
//      `AGE-SECRET-KEY-PQ-1HZLGZUPT4…`, whose files are among the seeds);
//   3: a stanza program: up to four stanzas, each the genuine `mlkem768x25519` stanza of CCTV's
//      `hybrid` file (file key "YELLOW SUBMARINE") with chosen changes (type, arguments, enc
//      bytes, length and base64 form, the X25519 share replaced by a small-order point in its
//      canonical or non-canonical forms, body bytes and length), a hybrid-typed stanza of raw
//      bytes, or a grease stanza; given to `unwrap` directly and written into a whole file
//      (the library's encryptor, MAC and payload under the file key) for the decryptor.
//
// Invariants: a recipient string parses exactly when it is Bech32 with the part `age1pq` and
// 1216 bytes whose ML-KEM-768 encapsulation key passes FIPS 203's modulus check (written here:
// every 12-bit coefficient < 3329), and then writes back the same string; an identity string
// exactly when the part is `AGE-SECRET-KEY-PQ-` (uppercase) with 32 bytes, writing back the
// same string, its recipient round-tripping; the raw initializer agrees with the same check, an
// accepted key wraps to one stanza `mlkem768x25519 <canonical base64 of 1120 bytes>` with a
// 32-byte body. Stanzas: a reference model of age.md's rules predicts `unwrap` exactly: stanzas
// of other types are ignored; an `mlkem768x25519` stanza with other than one argument, an enc
// that is not canonical unpadded base64 of 1120 bytes, a body of other than 32 bytes, or an
// X25519 share of small order (bit 255 ignored, reduced mod p: 0, 1, p − 1 and the two points of
// order 8) is `AgeError.header`; a well-formed stanza opens only when it is the genuine one
// (then the file key is YELLOW SUBMARINE), else it is skipped; the first match wins. (In raw
// files, whose stanzas anyone may have sealed to the identity, an opened stanza is not
// checked; a header error or nothing found must still be the model's.) Whole
// files: the decryptor fails with `header` where `unwrap` does, `noMatch` where it finds
// nothing, and decrypts to the plaintext otherwise; arbitrary files fail only with the CCTV
// categories (header / no match / HMAC / payload) and release nothing before the MAC is checked.
@_spi(Testing) import SessionKit
@_spi(Testing) import SessionKitAge
import SessionKitMLKEM
import SignalPrimitives
import Foundation

/// A recipient that writes the stanzas it is given.
struct StanzaRecipient: AgeRecipient {
    let stanzas: [AgeStanza]
    func wrap(_ fileKey: AgeFileKey) throws(AgeError) -> [AgeStanza] { stanzas }
}

enum Harness {
    static let type = "mlkem768x25519"
    /// C2SP/CCTV's hybrid identity (TestVectors/age/hybrid and the other `hybrid*` files).
    static let identityString = "AGE-SECRET-KEY-PQ-1HZLGZUPT4ETPKDEV8HSGFDCYZ4E522W0A7PU2LHT8EH9W6YLNC3SW78XKG"
    static let identity = must { try AgeHybridIdentity(identityString) }
    /// The file key of CCTV's `hybrid` file.
    static let fileKey = Array("YELLOW SUBMARINE".utf8)
    /// The enc argument and body of the stanza of CCTV's `hybrid` file.
    static let genuine: (enc: String, body: [UInt8]) = must {
        // TestVectors/age/hybrid, found from this file's path (Fuzz/Harnesses/ in the package).
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = [UInt8](try Data(contentsOf: package.appendingPathComponent("TestVectors/age/hybrid")))
        guard let blank = file.firstRange(of: Array("\n\n".utf8)) else { throw AgeError.header("no blank line in the vector") }
        let header = try AgeTesting.parseHeader(Array(file[blank.upperBound...]))
        return (header.stanzas[0].arguments[1], header.stanzas[0].body)
    }
    static let genuineEnc = referenceBase64(Array(genuine.enc.utf8))!
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    // MARK: Reference checks (from age.md, FIPS 203 and RFC 7748, independent of the library)

    /// Canonical unpadded base64, decoded; nil otherwise.
    static func referenceBase64(_ text: [UInt8]) -> [UInt8]? {
        var bits: [Int] = []
        bits.reserveCapacity(text.count * 6)
        for c in text {
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            for shift in stride(from: 5, through: 0, by: -1) { bits.append(v >> shift & 1) }
        }
        guard text.count % 4 != 1 else { return nil }
        let whole = bits.count / 8 * 8
        guard bits[whole...].allSatisfy({ $0 == 0 }) else { return nil }
        return stride(from: 0, to: whole, by: 8).map { start in UInt8(bits[start ..< start + 8].reduce(0) { $0 << 1 | $1 }) }
    }

    /// Unpadded base64 (for building stanzas).
    static func base64(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// FIPS 203 §7.2's modulus check of an ML-KEM-768 encapsulation key: its first 1152 bytes
    /// are 768 12-bit little-endian coefficients, each < 3329.
    static func isWellFormedEncapsulationKey(_ key: ArraySlice<UInt8>) -> Bool {
        guard key.count == 1184 else { return false }
        let bytes = Array(key)
        for at in stride(from: 0, to: 1152, by: 3) {
            let c0 = UInt16(bytes[at]) | UInt16(bytes[at + 1] & 0x0F) << 8
            let c1 = UInt16(bytes[at + 1] >> 4) | UInt16(bytes[at + 2]) << 4
            if c0 >= 3329 || c1 >= 3329 { return false }
        }
        return true
    }

    /// The little-endian encodings of 2^255 − 19 − 1, of the two points of order 8, then 0 and 1.
    static let smallOrder: [[UInt8]] = [
        [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
        [224, 235, 122, 124, 59, 65, 184, 174, 22, 86, 227, 250, 241, 159, 196, 106, 218, 9, 141, 235, 156, 50, 177, 253, 134, 98, 5, 22, 95, 73, 184, 0],
        [95, 156, 149, 188, 163, 80, 140, 36, 177, 208, 177, 85, 156, 131, 239, 91, 4, 68, 92, 196, 88, 28, 142, 134, 216, 34, 78, 221, 208, 159, 17, 87],
        [0] + [UInt8](repeating: 0, count: 31),
        [1] + [UInt8](repeating: 0, count: 31),
    ]
    /// p = 2^255 − 19, little-endian.
    static let prime: [UInt8] = [0xED] + [UInt8](repeating: 0xFF, count: 30) + [0x7F]

    /// Whether X25519 with a clamped scalar gives all zeros for `share`: bit 255 is ignored, the
    /// rest is reduced modulo p (a value ≥ p is below 2^255 − p + p, so one subtraction), and the
    /// result is one of the five small-order u-coordinates.
    static func isSmallOrder(_ share: [UInt8]) -> Bool {
        var u = share
        u[31] &= 0x7F
        // u ≥ p?  Compare from the most significant byte.
        var greaterOrEqual = true
        for index in stride(from: 31, through: 0, by: -1) where u[index] != prime[index] {
            greaterOrEqual = u[index] > prime[index]
            break
        }
        if greaterOrEqual {
            var borrow = 0
            for index in 0 ..< 32 {
                let difference = Int(u[index]) - Int(prime[index]) - borrow
                u[index] = UInt8((difference + 256) & 0xFF)
                borrow = difference < 0 ? 1 : 0
            }
        }
        return smallOrder.contains(u)
    }

    /// What `unwrap` must do with `stanzas`: throw `header`, return the genuine file key, or
    /// find nothing.
    enum Outcome: Equatable { case header, fileKey, none }

    static func model(_ stanzas: [AgeStanza]) -> Outcome {
        for stanza in stanzas where stanza.type == type {
            guard stanza.arguments.count == 2, let enc = referenceBase64(Array(stanza.arguments[1].utf8)), enc.count == 1120,
                  stanza.body.count == 32, !isSmallOrder(Array(enc[1088...])) else { return .header }
            if enc == genuineEnc && stanza.body == genuine.body { return .fileKey }
        }
        return .none
    }

    // MARK: Modes

    static func strings(_ text: String) {
        let decoded = AgeTesting.bech32Decode(text)
        let recipient = try? AgeHybridRecipient(text)
        let expectRecipient = decoded.map { $0.hrp == "age1pq" && $0.data.count == 1216 && isWellFormedEncapsulationKey($0.data[..<1184]) } ?? false
        invariant((recipient != nil) == expectRecipient, "recipient parsing disagrees with Bech32 and FIPS 203")
        if let recipient {
            invariant(recipient.string == text, "a recipient does not write back its string")
            invariant(recipient.rawRepresentation == decoded?.data, "a recipient holds other bytes than its string")
        }
        do throws(AgeError) {
            let parsed = try AgeHybridIdentity(text)
            invariant(decoded?.hrp == "AGE-SECRET-KEY-PQ-" && decoded?.data.count == 32, "an identity parsed from a string that is not one")
            invariant(parsed.secretKeyString == text, "an identity does not write back its string")
            let again = try? AgeHybridRecipient(parsed.recipient.string)
            invariant(again == parsed.recipient, "an identity's recipient does not round-trip")
        } catch {
            guard case .invalidIdentity = error else { fail("identity parsing threw \(error)") }
            invariant(!(decoded?.hrp == "AGE-SECRET-KEY-PQ-" && decoded?.data.count == 32), "a valid identity string was refused: \(error)")
        }
    }

    static func rawKey(_ input: inout FuzzInput) {
        var key: [UInt8]
        if input.byte() % 2 == 0 {
            key = input.rest()
        } else {
            // The fixed identity's key with coefficients overwritten (so the modulus check is
            // reached often) and a chosen length change.
            key = identity.recipient.rawRepresentation
            for _ in 0 ..< Int(input.byte() % 4) {
                let pair = Int(input.u16()) % 384
                let value = input.u16() % 4096
                let at = pair * 3
                key[at] = UInt8(value & 0xFF)
                key[at + 1] = key[at + 1] & 0xF0 | UInt8(value >> 8)
            }
            let change = Int(input.byte())
            if change >= 250 { key.removeLast(change - 249) } else if change >= 245 { key += [UInt8](repeating: 7, count: change - 244) }
        }
        let expected = key.count == 1216 && isWellFormedEncapsulationKey(key[..<1184])
        do throws(AgeError) {
            let recipient = try AgeHybridRecipient(rawRepresentation: key)
            invariant(expected, "a key failing FIPS 203's check (or of another length) was accepted")
            invariant(recipient.rawRepresentation == key, "a recipient holds other bytes")
            invariant((try? AgeHybridRecipient(recipient.string)) == recipient, "a recipient does not round-trip its string")
            let stanzas = try recipient.wrap(AgeFileKey(bytes: SecureBytes(copying: fileKey)))
            invariant(stanzas.count == 1 && stanzas[0].arguments.count == 2 && stanzas[0].type == type, "wrap wrote other stanzas")
            invariant(referenceBase64(Array(stanzas[0].arguments[1].utf8))?.count == 1120, "wrap's enc is not canonical base64 of 1120 bytes")
            invariant(stanzas[0].body.count == 32, "wrap's body is not 32 bytes")
        } catch {
            guard case .invalidRecipient = error else { fail("the raw recipient threw \(error)") }
            invariant(!expected, "a valid key was refused: \(error)")
        }
    }

    static func decrypt(_ file: [UInt8], pieceSize: Int) -> (released: [UInt8], error: AgeError?) {
        ageDecrypt(file, identities: [identity], pieceSize: pieceSize)
    }

    /// `unwrap` on `stanzas` against the model. With `exact`, the genuine stanza is the only
    /// one that can open (programs); otherwise (raw files, whose stanzas may be sealed to the
    /// identity by anyone, like CCTV's) an opened stanza is not checked, and a header error or
    /// nothing found must be what the model says (the library then went through the same
    /// stanzas as the model).
    @discardableResult
    static func checkUnwrap(_ stanzas: [AgeStanza], exact: Bool) -> Outcome {
        let expected = model(stanzas)
        do throws(AgeError) {
            let key = try identity.unwrap(stanzas)
            if let key {
                guard exact else { return expected }
                invariant(expected == .fileKey, "unwrap opened a stanza the model does not (expected \(expected))")
                invariant(key.withUnsafeBytes { Array($0) } == fileKey, "unwrap returned another file key")
            } else {
                invariant(expected == .none, "unwrap found nothing (expected \(expected))")
            }
        } catch {
            guard case .header = error else { fail("unwrap threw \(error)") }
            invariant(expected == .header, "unwrap threw \(error) (expected \(expected))")
        }
        return expected
    }

    static func rawFile(_ bytes: [UInt8], pieceSize: Int) {
        let parsed = try? AgeTesting.parseHeader(bytes)
        if let parsed { checkUnwrap(parsed.stanzas, exact: false) }
        let (released, error) = decrypt(bytes, pieceSize: pieceSize)
        guard let error else {
            invariant(parsed != nil, "a file whose header does not parse decrypted")
            return
        }
        switch error {
        // A resource limit: more stanzas than AgeDecryptor.maximumStanzaCount.
        case .header, .noMatch, .headerMAC, .resourceLimit(.stanzaCount): invariant(released.isEmpty, "plaintext released before a \(error)")
        case .payload: break
        default: fail("decrypting threw \(error), outside the categories")
        }
        if parsed == nil {
            invariant({ if case .header = error { return true } else { return error == .resourceLimit(.stanzaCount(maximum: AgeDecryptor.maximumStanzaCount)) } }(),
                      "a bad header failed with \(error)")
        }
    }

    /// One stanza of a program.
    static func stanza(_ input: inout FuzzInput) -> AgeStanza? {
        let kind = input.byte()
        switch kind % 3 {
        case 0:
            var arguments = [type, genuine.enc]
            var enc = genuineEnc
            var body = genuine.body
            let ops = input.byte()
            if ops & 1 != 0 {
                switch input.byte() % 4 {
                case 0: arguments[0] = "MLKEM768X25519"
                case 1: arguments[0] = "mlkem768x25519x"
                case 2: arguments.removeLast()
                default: arguments.append(String(decoding: input.take(Int(input.byte() % 8) + 1).map { 0x21 + $0 % 94 }, as: UTF8.self))
                }
            }
            if ops & 2 != 0 {
                let position = Int(input.u16())
                switch input.byte() % 5 {
                case 0: enc[position % enc.count] ^= max(input.byte(), 1)
                case 1: enc = Array(enc.prefix(position % (enc.count + 1)))
                case 2: enc += input.take(Int(input.byte() % 4) + 1)
                case 3:
                    // A small-order share: canonical, with bit 255 set, or (for 0 and 1) plus p.
                    let choice = Int(input.byte())
                    var share = smallOrder[choice % smallOrder.count]
                    if choice / 5 % 3 == 1 { share[31] |= 0x80 }
                    if choice / 5 % 3 == 2, share[1 ... 31].allSatisfy({ $0 == 0 }) {
                        share = prime
                        share[0] &+= choice % smallOrder.count == 4 ? 1 : 0
                    }
                    enc = Array(enc.prefix(1088)) + share
                default: enc = Array(enc.prefix(1088)) + input.take(32)
                }
            }
            if arguments.count >= 2, arguments[1] == genuine.enc { arguments[1] = base64(enc) }
            if ops & 4 != 0, arguments.count >= 2 {
                // A non-canonical form: trailing bits set, padding, or a character outside the alphabet.
                var text = Array(arguments[1].utf8)
                switch input.byte() % 3 {
                case 0: if let last = text.last, let value = alphabet.firstIndex(of: last) { text[text.count - 1] = alphabet[value | 1] }
                case 1: text += Array("==".utf8)
                default: if !text.isEmpty { text[Int(input.u16()) % text.count] = [UInt8]([0x2D, 0x5F, 0x2E])[Int(input.byte() % 3)] }
                }
                arguments[1] = String(decoding: text, as: UTF8.self)
            }
            if ops & 8 != 0 {
                let position = Int(input.byte())
                switch input.byte() % 3 {
                case 0: body[position % body.count] ^= max(input.byte(), 1)
                case 1: body = Array(body.prefix(position % 33))
                default: body += input.take(Int(input.byte() % 4) + 1)
                }
            }
            return try? AgeStanza(arguments: arguments, body: body)
        case 1:
            let length = input.byte() % 2 == 0 ? 1118 + Int(input.byte() % 5) : Int(input.u16() % 1500)
            var arguments = [type, base64(input.take(length))]
            if arguments[1].isEmpty { arguments.removeLast() }
            return try? AgeStanza(arguments: arguments, body: input.take(Int(input.byte() % 40)))
        default:
            let name = "g-" + String(decoding: input.take(Int(input.byte() % 6) + 1).map { 0x21 + $0 % 94 }, as: UTF8.self)
            return try? AgeStanza(arguments: [name], body: input.take(Int(input.byte() % 40)))
        }
    }

    static func program(_ input: inout FuzzInput) {
        var stanzas: [AgeStanza] = []
        for _ in 0 ..< Int(input.byte() % 4) + 1 {
            if let stanza = stanza(&input) { stanzas.append(stanza) }
        }
        let expected = checkUnwrap(stanzas, exact: true)
        guard !stanzas.isEmpty else { return }
        let length = Int(input.u16() % 2000)
        let pieceSize = Int(input.byte()) * 37 + 1
        let plaintext = fixedBytes(length, seed: UInt64(length))
        let encryptor = AgeEncryptor(recipients: [StanzaRecipient(stanzas: stanzas)])
        let stream = must { try encryptor.makeStream(fileKey: AgeFileKey(bytes: SecureBytes(copying: fileKey)), nonce: fixedBytes(16, seed: 6)) }
        var file: [UInt8] = []
        must { try plaintext.withBytes { (p: UnsafeRawBufferPointer) throws(AgeError) in try stream.update(p) { file += $0 } } }
        must { try stream.finish { file += $0 } }
        let (released, error) = decrypt(file, pieceSize: pieceSize)
        switch expected {
        case .fileKey:
            invariant(error == nil, "a file with the genuine stanza failed: \(String(describing: error))")
            invariant(released == plaintext, "a file decrypted to other bytes")
        case .header:
            guard case .header = error else { fail("a file with a malformed hybrid stanza gave \(String(describing: error))") }
            invariant(released.isEmpty, "plaintext released before a header error")
        case .none:
            invariant(error == .noMatch, "a file without a matching stanza gave \(String(describing: error))")
            invariant(released.isEmpty, "plaintext released without a match")
        }
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        switch input.byte() % 4 {
        case 0: strings(String(decoding: input.rest(), as: UTF8.self))
        case 1: rawKey(&input)
        case 2:
            let pieceSize = Int(input.byte()) * 37 + 1
            rawFile(input.rest(), pieceSize: pieceSize)
        default: program(&input)
        }
    }

    static func seeds() -> [[UInt8]] {
        let recipient = identity.recipient.string
        var seeds: [[UInt8]] = [
            [0] + Array(identityString.utf8),
            [0] + Array(recipient.utf8),
            [0] + Array(identityString.lowercased().utf8),
            [1, 0] + identity.recipient.rawRepresentation,
            [1, 1, 1, 0, 0, 0x0D, 0x01, 0],
            [1, 1, 1, 0, 0, 0x0D, 0x00, 0],
        ]
        // Programs: the genuine stanza alone, after grease and a malformed one, changed in each way.
        seeds.append([3, 0, 0, 0, 0x10, 7])
        seeds.append([3, 2, 2, 1, 0x41, 3, 0xAA, 0xBB, 0xCC, 1, 0, 200, 0, 0, 0x01, 0x10, 3])
        // Each change of the genuine stanza: type and arguments (ops bit 0, four kinds), enc
        // (bit 1: flip, truncate, extend, small-order share in each form, other share), base64
        // form (bit 2), body (bit 3); the bytes after the change give the plaintext length and
        // the piece size.
        let tail: [UInt8] = [0, 100, 0]
        for kind: UInt8 in 0 ..< 4 { seeds.append([3, 0, 0, 1, kind, 2, 0x41, 0x42] + tail) }
        for change: UInt8 in [0, 1, 2, 4] { seeds.append([3, 0, 0, 2, 0x01, 0x23, change, 0x55, 3] + [UInt8](repeating: 0x33, count: 4) + tail) }
        for choice: UInt8 in 0 ..< 15 { seeds.append([3, 0, 0, 2, 0, 0, 3, choice] + tail) }
        for form: UInt8 in 0 ..< 3 { seeds.append([3, 0, 0, 4, form, 0, 10, 0] + tail) }
        for change: UInt8 in 0 ..< 3 { seeds.append([3, 0, 0, 8, 7, change, 0x80, 1, 2, 3, 4] + tail) }
        return seeds
    }
}
