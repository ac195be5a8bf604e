// Harness `message_decoding`: decoding received pairwise messages (SPEC §4 wire formats),
// `IncomingMessage(serialized:)`, `RatchetMessage(serialized:)` and `PreKeyMessage(serialized:)`.
//
// Invariants: the error is exactly the one SPEC §4's order of checks gives, computed by a
// reference decoder written from the SPEC (type byte `unsupportedVersion`; then lengths —
// at least 41 + 16 bytes, a prekey message 70 or 74 more — and the flag byte
// `invalidMessage`; the inner type byte of a prekey message `unsupportedVersion`; then key
// canonicity, bit 255 clear and u < 2^255 − 19, `invalidKey`); a decoded message re-encodes
// to the same bytes and its fields are the bytes at their SPEC offsets.
import SessionKit
import SignalPrimitives

enum Harness {
    /// SPEC §1: canonical X25519 encoding (little-endian u with bit 255 clear and u < p).
    static func isCanonical(_ key: ArraySlice<UInt8>) -> Bool {
        let bytes = Array(key)
        guard bytes[31] & 0x80 == 0 else { return false }
        // With bit 255 clear, the values ≥ p = 2^255 − 19 are 0x7f ff … ff (ed … ff).
        let atLeastP = bytes[31] == 0x7F && bytes[1 ..< 31].allSatisfy { $0 == 0xFF } && bytes[0] >= 0xED
        return !atLeastP
    }

    static func u32(_ bytes: ArraySlice<UInt8>) -> UInt32 { bytes.reduce(0) { $0 << 8 | UInt32($1) } }

    /// The reference decision for `bytes`: nil when it decodes.
    static func expectedError(_ bytes: [UInt8]) -> SessionError? {
        guard let type = bytes.first else { return .invalidMessage }
        switch type {
        case 0x01:
            guard bytes.count >= 57 else { return .invalidMessage }
            return isCanonical(bytes[1 ..< 33]) ? nil : .invalidKey
        case 0x02:
            guard bytes.count >= 70 else { return .invalidMessage }
            guard bytes[69] <= 1 else { return .invalidMessage }
            let prefix = bytes[69] == 1 ? 74 : 70
            guard bytes.count >= prefix + 57 else { return .invalidMessage }
            guard bytes[prefix] == 0x01 else { return .unsupportedVersion }
            guard isCanonical(bytes[33 ..< 65]), isCanonical(bytes[(prefix + 1) ..< (prefix + 33)]) else { return .invalidKey }
            return nil
        default:
            return .unsupportedVersion
        }
    }

    static func checkRatchet(_ message: RatchetMessage, _ bytes: ArraySlice<UInt8>) {
        let start = bytes.startIndex
        invariant(message.serialized == Array(bytes), "ratchet message does not re-encode to its bytes")
        invariant(message.ratchetKey.rawRepresentation == Array(bytes[(start + 1) ..< (start + 33)]), "ratchet key")
        invariant(message.previousCounter == u32(bytes[(start + 33) ..< (start + 37)]), "previous counter")
        invariant(message.counter == u32(bytes[(start + 37) ..< (start + 41)]), "counter")
        invariant(Array(message.header) == Array(bytes[start ..< (start + 41)]), "header")
        invariant(Array(message.ciphertext) == Array(bytes[(start + 41)...]), "ciphertext")
    }

    static func run(_ bytes: [UInt8]) {
        let expected = expectedError(bytes)
        do {
            let message = try IncomingMessage(serialized: bytes)
            invariant(expected == nil, "decoded a message SPEC §4 rejects with \(String(describing: expected))")
            switch message {
            case let .ratchet(ratchet):
                invariant(bytes[0] == 0x01, "type")
                checkRatchet(ratchet, bytes[...])
                let direct = try RatchetMessage(serialized: bytes)
                invariant(direct == ratchet, "RatchetMessage and IncomingMessage disagree")
            case let .preKey(preKey):
                invariant(bytes[0] == 0x02, "type")
                let prefix = preKey.prefix
                let length = bytes[69] == 1 ? 74 : 70
                invariant(prefix.byteCount == length, "prefix length")
                invariant(prefix.identityKey.rawRepresentation == Array(bytes[1 ..< 33]), "IK_A")
                invariant(prefix.baseKey.rawRepresentation == Array(bytes[33 ..< 65]), "EK_A")
                invariant(prefix.signedPreKeyID == u32(bytes[65 ..< 69]), "spk_id")
                invariant(prefix.oneTimePreKeyID == (length == 74 ? u32(bytes[70 ..< 74]) : nil), "opk_id")
                invariant(prefix.serialized == Array(bytes[0 ..< length]), "prefix does not re-encode")
                invariant(preKey.serialized == bytes, "prekey message does not re-encode to its bytes")
                checkRatchet(preKey.message, bytes[length...])
                let direct = try PreKeyMessage(serialized: bytes)
                invariant(direct == preKey, "PreKeyMessage and IncomingMessage disagree")
            }
        } catch {
            invariant(error == expected, "decoding threw \(error), SPEC §4 says \(String(describing: expected))")
            if bytes.first == 0x01 {
                do {
                    _ = try RatchetMessage(serialized: bytes)
                    fail("RatchetMessage accepted what IncomingMessage rejected")
                } catch {
                    invariant(error == expected, "RatchetMessage threw \(error)")
                }
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        let key = fixedBytes(32, seed: 1).enumerated().map { $0.offset == 31 ? $0.element & 0x7F : $0.element }
        let header = [0x01] + key + [0, 0, 0, 2, 0, 0, 0, 5]
        let ratchet = header + [UInt8](repeating: 0xAB, count: 16 + 64)
        let prefix = [0x02] + fixedBytes(32, seed: 2) + key + [0, 0, 0, 7]
        let nonCanonical = [UInt8](repeating: 0xFF, count: 31) + [0x7F]
        return [
            ratchet,
            Array(ratchet.prefix(57)),
            Array(ratchet.prefix(56)),
            prefix + [0x00] + ratchet,
            prefix + [0x01, 0, 0, 0, 9] + ratchet,
            prefix + [0x02] + ratchet,
            prefix + [0x00] + [0x03] + ratchet.dropFirst(),
            [0x01] + nonCanonical + Array(ratchet.dropFirst(33)),
            [0x01] + [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F] + Array(ratchet.dropFirst(33)),
            [0x03],
            [],
        ]
    }
}
