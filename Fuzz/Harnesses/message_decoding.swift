// Harness `message_decoding`: decoding received pairwise messages (SPEC §4 wire formats, v2),
// `IncomingMessage(serialized:)`, `RatchetMessage(serialized:)` and `PreKeyMessage(serialized:)`.
//
// Invariants: the error is exactly the one SPEC §4's order of checks gives, computed by the
// reference decoder `WireReference` (FuzzSupport.swift) written from the SPEC: type byte
// (0x21 ratchet, 0x22 prekey, anything else `unsupportedVersion`); then lengths — at least
// 41 + 16 bytes, a prekey prefix of 70 bytes, plus 4 with flags bit 0 (OPK), plus 4 + 1088
// with flags bit 1 (KEM part), plus 4 with flags bit 2 (registration id, SPEC §9: 1 … 2^31 − 1),
// then a whole inner message — and the flags byte (another bit set) `invalidMessage`; the inner
// type byte `unsupportedVersion`; then key canonicity of EK_A
// and the ratchet key (bit 255 clear and u < 2^255 − 19) `invalidKey`. A decoded message
// re-encodes to the same bytes, its fields (IK_A, EK_A, spk_id, flags, opk_id, kem_id, CT,
// header, ciphertext) are the bytes at their SPEC offsets, P is the bytes between the type
// byte and the inner message, and its digest is SHA-256(P). `RatchetMessage`, `PreKeyMessage`
// and `IncomingMessage` agree.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static func checkRatchet(_ message: RatchetMessage, _ bytes: ArraySlice<UInt8>) {
        let start = bytes.startIndex
        invariant(message.serialized == Array(bytes), "ratchet message does not re-encode to its bytes")
        invariant(message.ratchetKey.rawRepresentation == Array(bytes[(start + 1) ..< (start + 33)]), "ratchet key")
        invariant(message.previousCounter == readU32(bytes[(start + 33) ..< (start + 37)]), "previous counter")
        invariant(message.counter == readU32(bytes[(start + 37) ..< (start + 41)]), "counter")
        invariant(Array(message.header) == Array(bytes[start ..< (start + 41)]), "header")
        invariant(Array(message.ciphertext) == Array(bytes[(start + 41)...]), "ciphertext")
    }

    static func checkPreKey(_ preKey: PreKeyMessage, _ bytes: [UInt8]) {
        let prefix = preKey.prefix
        let flags = bytes[69]
        let length = WireReference.prefixLength(flags: flags)
        invariant(prefix.flags == flags, "flags")
        invariant(prefix.byteCount == length - 1, "prefix length \(prefix.byteCount), SPEC \(length - 1)")
        invariant(prefix.identityKey.rawRepresentation == Array(bytes[1 ..< 33]), "IK_A")
        invariant(prefix.baseKey.rawRepresentation == Array(bytes[33 ..< 65]), "EK_A")
        invariant(prefix.signedPreKeyID == readU32(bytes[65 ..< 69]), "spk_id")
        var offset = 70
        if flags & 1 != 0 {
            invariant(prefix.oneTimePreKeyID == readU32(bytes[offset ..< offset + 4]), "opk_id")
            offset += 4
        } else {
            invariant(prefix.oneTimePreKeyID == nil, "an opk_id without flags bit 0")
        }
        if flags & 2 != 0 {
            invariant(prefix.kem?.preKeyID == readU32(bytes[offset ..< offset + 4]), "kem_id")
            invariant(prefix.kem?.ciphertext == Array(bytes[offset + 4 ..< offset + 1092]), "CT")
            offset += 1092
        } else {
            invariant(prefix.kem == nil, "a KEM part without flags bit 1")
        }
        if flags & 4 != 0 {
            invariant(prefix.registrationID?.rawValue == readU32(bytes[offset ..< offset + 4]), "registration id")
            offset += 4
        } else {
            invariant(prefix.registrationID == nil, "a registration id without flags bit 2")
        }
        invariant(offset == length, "harness: offsets")
        invariant(prefix.bytes == Array(bytes[1 ..< length]), "P is not the bytes after the type byte")
        invariant(prefix.digest == SHA256.hash(Array(bytes[1 ..< length])), "digest is not SHA-256(P)")
        invariant(preKey.serialized == bytes, "prekey message does not re-encode to its bytes")
        checkRatchet(preKey.message, bytes[length...])
        // A prefix rebuilt from its parts encodes the same P.
        let rebuilt = PreKeyMessage.Prefix(identityKey: prefix.identityKey, baseKey: prefix.baseKey,
                                           signedPreKeyID: prefix.signedPreKeyID, oneTimePreKeyID: prefix.oneTimePreKeyID,
                                           kem: prefix.kem, registrationID: prefix.registrationID)
        invariant(rebuilt == prefix && rebuilt.bytes == prefix.bytes, "a rebuilt prefix differs")
    }

    static func run(_ bytes: [UInt8]) {
        let expected = WireReference.expectedError(bytes)
        do {
            let message = try IncomingMessage(serialized: bytes)
            invariant(expected == nil, "decoded a message SPEC §4 rejects with \(String(describing: expected))")
            switch message {
            case let .ratchet(ratchet):
                invariant(bytes[0] == 0x21, "type")
                checkRatchet(ratchet, bytes[...])
                let direct = try RatchetMessage(serialized: bytes)
                invariant(direct == ratchet, "RatchetMessage and IncomingMessage disagree")
                invariant(message.ratchetMessage == ratchet, "ratchetMessage")
            case let .preKey(preKey):
                invariant(bytes[0] == 0x22, "type")
                checkPreKey(preKey, bytes)
                let direct = try PreKeyMessage(serialized: bytes)
                invariant(direct == preKey, "PreKeyMessage and IncomingMessage disagree")
                invariant(message.ratchetMessage == preKey.message, "ratchetMessage")
            }
        } catch {
            invariant(error == expected, "decoding threw \(error), SPEC §4 says \(String(describing: expected))")
            if bytes.first == 0x21 {
                do {
                    _ = try RatchetMessage(serialized: bytes)
                    fail("RatchetMessage accepted what IncomingMessage rejected")
                } catch {
                    invariant(error == expected, "RatchetMessage threw \(error)")
                }
            }
            if bytes.first == 0x22 {
                do {
                    _ = try PreKeyMessage(serialized: bytes)
                    fail("PreKeyMessage accepted what IncomingMessage rejected")
                } catch {
                    invariant(error == expected, "PreKeyMessage threw \(error)")
                }
            }
        }
        // Each decoder on its own: another type byte is `unsupportedVersion` (empty: `invalidMessage`).
        if let first = bytes.first, first != 0x21 {
            do {
                _ = try RatchetMessage(serialized: bytes)
                fail("RatchetMessage accepted type \(first)")
            } catch {
                invariant(error == .unsupportedVersion, "RatchetMessage threw \(error) for type \(first)")
            }
        }
        if let first = bytes.first, first != 0x22 {
            do {
                _ = try PreKeyMessage(serialized: bytes)
                fail("PreKeyMessage accepted type \(first)")
            } catch {
                invariant(error == .unsupportedVersion, "PreKeyMessage threw \(error) for type \(first)")
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        let key = fixedBytes(32, seed: 1).enumerated().map { $0.offset == 31 ? $0.element & 0x7F : $0.element }
        let header = [0x21] + key + [0, 0, 0, 2, 0, 0, 0, 5]
        let ratchet = header + [UInt8](repeating: 0xAB, count: 16 + 64)
        let prefix = [0x22] + fixedBytes(32, seed: 2) + key + [0, 0, 0, 7]
        let kemPart = [0, 0, 0, 3] + fixedBytes(1088, seed: 3)
        let nonCanonical = [UInt8](repeating: 0xFF, count: 31) + [0x7F]
        return [
            ratchet,
            Array(ratchet.prefix(57)),
            Array(ratchet.prefix(56)),
            prefix + [0x00] + ratchet,
            prefix + [0x01, 0, 0, 0, 9] + ratchet,
            prefix + [0x02] + kemPart + ratchet,
            prefix + [0x03, 0, 0, 0, 9] + kemPart + ratchet,
            prefix + [0x03, 0, 0, 0, 9] + kemPart + Array(ratchet.prefix(56)),
            prefix + [0x02] + Array(kemPart.prefix(500)),
            prefix + [0x04] + ratchet,
            prefix + [0x00] + [0x01] + ratchet.dropFirst(),
            prefix + [0x00] + [0x23] + ratchet.dropFirst(),
            [0x21] + nonCanonical + Array(ratchet.dropFirst(33)),
            [0x21] + [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F] + Array(ratchet.dropFirst(33)),
            [0x22] + fixedBytes(32, seed: 2) + nonCanonical + [0, 0, 0, 7, 0] + ratchet,
            [0x01] + ratchet.dropFirst(),
            [0x02] + fixedBytes(68, seed: 4) + [0] + ratchet,
            [0x26],
            [],
        ]
    }
}
