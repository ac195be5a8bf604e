// Harness `age_header`: the age v1 header parser and the decryptor around it (C2SP age.md).
//
// Input: a mode byte, then (mode 0 mod 3) raw file bytes, (1) a recipe for a valid file: grease
// stanzas (their arguments and bodies), a plaintext length, a piece size, and one byte change
// (position, XOR value; 0 = none), or (2) a header program: stanzas with chosen argument bytes
// and body line lengths around 64, a MAC line of a chosen length (then raw mode's checks).
//
// Invariants, raw mode: the library's parser accepts exactly what a reference parser written
// here from the ABNF accepts (version line; stanzas "-> " 1*VCHAR args, 64-column body lines
// ending with a shorter line, canonical unpadded base64; "--- " 43 canonical characters; at
// least one stanza, at most AgeDecryptor.maximumStanzaCount: the start of one more is
// AgeError.resourceLimit(.stanzaCount)), with the same stanzas, MAC and length; an accepted
// header re-encodes to exactly its bytes; decrypting the input (binary, an X25519 and a cheap
// scrypt identity) fails only with the CCTV categories header / no match / HMAC / payload (a
// resource limit counting as header: too many stanzas, an scrypt work factor above 2), with
// header (or the stanza-count limit) when the reference rejects the header, and never releases
// anything before the MAC is checked.
// Recipe mode: the unchanged file decrypts to its plaintext whatever the piece size; a changed
// byte always fails (header / no match / HMAC in the header, payload after it), and what was
// released is a prefix of the plaintext.
@_spi(Testing) import SessionKit
@_spi(Testing) import SessionKitAge
import SignalPrimitives
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A recipient that writes fixed (grease) stanzas.
struct GreaseRecipient: AgeRecipient {
    let stanzas: [AgeStanza]
    func wrap(_ fileKey: AgeFileKey) throws(AgeError) -> [AgeStanza] { stanzas }
}

enum Harness {
    static let identity = must { try AgeX25519Identity(privateKey: X25519.PrivateKey(rawRepresentation: fixedBytes(32, seed: 41))) }
    static let passphrase = must { try AgeScryptIdentity(passphrase: "fuzz", maximumWorkFactor: 2) }
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    // MARK: Reference parser (from the ABNF, independent of the library's)

    static func value(_ c: UInt8) -> Int? { alphabet.firstIndex(of: c) }

    /// Canonical unpadded base64, decoded; nil otherwise.
    static func referenceBase64(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var bits: [Int] = []
        for c in text {
            guard let v = value(c) else { return nil }
            for shift in stride(from: 5, through: 0, by: -1) { bits.append(v >> shift & 1) }
        }
        guard text.count % 4 != 1 else { return nil }
        let whole = bits.count / 8 * 8
        guard bits[whole...].allSatisfy({ $0 == 0 }) else { return nil }
        return stride(from: 0, to: whole, by: 8).map { start in UInt8(bits[start ..< start + 8].reduce(0) { $0 << 1 | $1 }) }
    }

    /// What the reference parser concluded of a header.
    enum Reference {
        case header(stanzas: [([String], [UInt8])], mac: [UInt8], length: Int)
        /// A stanza over `AgeDecryptor.maximumStanzaCount` started (what follows is not read).
        case tooManyStanzas
        case invalid
    }

    static func referenceParse(_ bytes: [UInt8]) -> Reference {
        var offset = 0
        func line() -> ArraySlice<UInt8>? {
            guard let end = bytes[offset...].firstIndex(of: 0x0A) else { return nil }
            defer { offset = end + 1 }
            return bytes[offset ..< end]
        }
        guard let first = line(), Array(first) == Array("age-encryption.org/v1".utf8) else { return .invalid }
        var stanzas: [([String], [UInt8])] = []
        while let next = line() {
            if next.starts(with: Array("---".utf8)) {
                guard !stanzas.isEmpty, next.count == 47, next[next.startIndex + 3] == 0x20,
                      let mac = referenceBase64(next[(next.startIndex + 4)...]), mac.count == 32 else { return .invalid }
                return .header(stanzas: stanzas, mac: mac, length: offset)
            }
            guard next.starts(with: Array("-> ".utf8)) else { return .invalid }
            if stanzas.count == AgeDecryptor.maximumStanzaCount { return .tooManyStanzas }
            let parts = next[(next.startIndex + 3)...].split(separator: 0x20, omittingEmptySubsequences: false)
            guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { (0x21 ... 0x7E).contains($0) } }) else { return .invalid }
            var body: [UInt8] = []
            while true {
                guard let bodyLine = line(), bodyLine.count <= 64, let decoded = referenceBase64(bodyLine) else { return .invalid }
                body += decoded
                if bodyLine.count < 64 { break }
            }
            stanzas.append((parts.map { String(decoding: $0, as: UTF8.self) }, body))
        }
        return .invalid
    }

    static func isStanzaCountLimit(_ error: AgeError) -> Bool {
        error == .resourceLimit(.stanzaCount(maximum: AgeDecryptor.maximumStanzaCount))
    }

    // MARK: Modes

    static func decrypt(_ file: [UInt8], pieceSize: Int) -> (released: [UInt8], error: AgeError?) {
        ageDecrypt(file, identities: [identity, passphrase], pieceSize: pieceSize)
    }

    static func isCategory(_ error: AgeError, header: Bool) -> Bool {
        switch error {
        case .header, .noMatch, .headerMAC, .resourceLimit: return true
        case .payload: return !header
        default: return false
        }
    }

    static func raw(_ bytes: [UInt8], pieceSize: Int) {
        let reference = referenceParse(bytes)
        do throws(AgeError) {
            let parsed = try AgeTesting.parseHeader(bytes)
            guard case let .header(stanzas, mac, length) = reference else { fail("the library accepted a header the reference rejects (\(reference))") }
            invariant(parsed.length == length, "header lengths differ")
            invariant(parsed.mac == mac, "MACs differ")
            invariant(parsed.stanzas.count == stanzas.count, "stanza counts differ")
            for (stanza, expected) in zip(parsed.stanzas, stanzas) {
                invariant(stanza.arguments == expected.0 && stanza.body == expected.1, "a stanza differs from the reference's")
            }
            invariant(AgeTesting.encodeHeader(parsed.stanzas, mac: parsed.mac) == Array(bytes[0 ..< parsed.length]),
                      "an accepted header does not re-encode to its bytes")
        } catch {
            switch reference {
            case .header: fail("the library rejected a header the ABNF accepts: \(error)")
            case .tooManyStanzas: invariant(isStanzaCountLimit(error), "too many stanzas, but the parser threw \(error)")
            case .invalid: guard case .header = error else { fail("the parser threw \(error)") }
            }
        }
        let (released, error) = decrypt(bytes, pieceSize: pieceSize)
        if let error {
            invariant(isCategory(error, header: false), "decrypting threw \(error), outside the categories")
            switch reference {
            case .header: break
            case .tooManyStanzas: invariant(isStanzaCountLimit(error), "too many stanzas failed with \(error)")
            case .invalid: invariant({ if case .header = error { return true } else { return false } }(), "a bad header failed with \(error)")
            }
            if case .payload = error {} else { invariant(released.isEmpty, "plaintext released before a \(error)") }
        }
    }

    static func recipe(_ input: inout FuzzInput) {
        var grease: [AgeStanza] = []
        for _ in 0 ..< Int(input.byte() % 4) {
            let count = Int(input.byte() % 4) + 1
            var arguments = (0 ..< count).map { _ -> String in
                let raw = input.take(Int(input.byte() % 12) + 1)
                return raw.isEmpty ? "x" : String(decoding: raw.map { 0x21 + $0 % 94 }, as: UTF8.self)
            }
            // Grease, never a type an identity reads (X25519, scrypt).
            arguments[0] = "g-" + arguments[0]
            guard let stanza = try? AgeStanza(arguments: arguments, body: input.take(Int(input.u16() % 200))) else { fail("grease stanza refused") }
            grease.append(stanza)
        }
        let length = Int(input.u16()) * Int(input.byte() % 8 + 1)
        let pieceSize = Int(input.u16()) + 1
        let position = Int(input.u32())
        let change = input.byte()
        let plaintext = fixedBytes(length, seed: UInt64(length))
        let encryptor = AgeEncryptor(recipients: [GreaseRecipient(stanzas: grease), identity.recipient])
        let stream = must { try encryptor.makeStream(fileKey: AgeFileKey(using: FixedRandomSource(bytes: fixedBytes(16, seed: 5))),
                                                     nonce: fixedBytes(16, seed: 6)) }
        var file: [UInt8] = []
        must { try plaintext.withBytes { (p: UnsafeRawBufferPointer) throws(AgeError) in try stream.update(p) { file += $0 } } }
        must { try stream.finish { file += $0 } }
        let headerLength = must { try AgeTesting.parseHeader(file).length }
        if change == 0 {
            let (released, error) = decrypt(file, pieceSize: pieceSize)
            invariant(error == nil, "a valid file failed: \(String(describing: error))")
            invariant(released == plaintext, "a valid file decrypted to other bytes")
            return
        }
        let index = position % file.count
        file[index] ^= change
        let (released, error) = decrypt(file, pieceSize: pieceSize)
        guard let error else { fail("a file with byte \(index) changed decrypted") }
        invariant(isCategory(error, header: index < headerLength), "byte \(index) changed (header \(headerLength)): \(error)")
        invariant(released == Array(plaintext.prefix(released.count)), "released bytes that are not the plaintext")
    }

    /// A header written line by line from the input: stanzas with fuzzer-chosen argument
    /// bytes and body line lengths (around 64), a MAC line of a chosen length, so that the
    /// length and character rules are reached directly.
    static func lines(_ input: inout FuzzInput) -> [UInt8] {
        var text = Array("age-encryption.org/v1".utf8)
        let flags = input.byte()
        if flags & 1 != 0 { text = Array("age-encryption.org/v".utf8) + [0x30 + input.byte() % 10] }
        text.append(0x0A)
        for _ in 0 ..< Int(input.byte() % 4) {
            text += Array("-> ".utf8)
            for index in 0 ..< Int(input.byte() % 3) + 1 {
                if index > 0 { text.append(0x20) }
                text += input.take(Int(input.byte() % 6)).map { $0 % 3 == 0 ? $0 : 0x21 + $0 % 94 }
            }
            text.append(0x0A)
            for _ in 0 ..< Int(input.byte() % 4) + 1 {
                let length = Int(input.byte()) % 4 == 0 ? 62 + Int(input.byte() % 5) : Int(input.byte() % 70)
                text += (0 ..< length).map { _ in alphabet[Int(input.byte() % 64)] }
                text.append(0x0A)
            }
        }
        let macLength = flags & 2 != 0 ? Int(input.byte() % 48) : 43
        text += Array("---".utf8) + (flags & 4 != 0 ? [] : [0x20]) + (0 ..< macLength).map { _ in alphabet[Int(input.byte() % 64)] }
        text.append(0x0A)
        return text + input.rest()
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        switch mode % 3 {
        case 0:
            let pieceSize = Int(input.byte()) * 37 + 1
            raw(input.rest(), pieceSize: pieceSize)
        case 1:
            recipe(&input)
        default:
            let pieceSize = Int(input.byte()) * 37 + 1
            raw(lines(&input), pieceSize: pieceSize)
        }
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        let file = must { try AgeEncryptor(recipients: [identity.recipient]).encrypt(Data(fixedBytes(100, seed: 1))) }
        seeds.append([0, 3] + [UInt8](file))
        let scrypt = must { try AgeEncryptor(recipients: [AgeScryptRecipient(passphrase: "fuzz", workFactor: 2)]).encrypt(Data(fixedBytes(70000, seed: 2))) }
        seeds.append([0, 200] + [UInt8](scrypt.prefix(200)))
        seeds.append([0, 0] + Array("age-encryption.org/v1\n-> a b\n\n--- ".utf8) + Array(repeating: UInt8(ascii: "A"), count: 43) + [0x0A])
        seeds.append([1, 2, 1, 3, 0x41, 0x42, 0x43, 0, 10] + fixedBytes(10, seed: 3) + [0x10, 0, 2, 0, 100] + [0, 0, 0, 0, 0])
        seeds.append([1, 0, 0xff, 0xff, 1, 0x40, 0, 0, 0, 0, 50, 0x80])
        // Header programs (mode 2): one stanza with body lines of these lengths, 'A' characters.
        for lengths in [[64, 10], [63], [64, 64, 0], [62, 2], [66, 4], [0]] {
            var seed: [UInt8] = [2, 5, 0, 1, 0, 3, 0x41, 0x42, 0x43, UInt8(lengths.count - 1)]
            for length in lengths {
                seed += (62 ... 66).contains(length) ? [0, UInt8(length - 62)] : [1, UInt8(length)]
                seed += [UInt8](repeating: 0, count: length)
            }
            seeds.append(seed + [UInt8](repeating: 0, count: 43))
        }
        return seeds
    }
}
