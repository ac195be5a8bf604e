// Harness `qr_payload`: the QR payload codec (SPEC §7).
//
// Invariants: decoding fails exactly as SPEC §7 says (unknown version `unsupportedVersion`;
// empty, short, trailing bytes, empty uid or uid that is not well-formed UTF-8
// `invalidPayload`, judged with the standard library's strict UTF-8 validation as an
// independent oracle); a decoded payload re-encodes to the same bytes, matches its own uid
// and key, and does not match a different key.
@_spi(Testing) import SessionKit
@_spi(Testing) import Verification
import SignalPrimitives

enum Harness {
    static func expectedError(_ bytes: [UInt8]) -> VerificationError? {
        guard let version = bytes.first else { return .invalidPayload }
        guard version == 0x01 else { return .unsupportedVersion }
        guard bytes.count >= 2 else { return .invalidPayload }
        let count = Int(bytes[1])
        guard count > 0, bytes.count == 2 + count + 32 else { return .invalidPayload }
        guard String(validating: bytes[2 ..< 2 + count], as: UTF8.self) != nil else { return .invalidPayload }
        return nil
    }

    static func run(_ bytes: [UInt8]) {
        let expected = expectedError(bytes)
        do {
            let payload = try QRPayload(decoding: bytes)
            invariant(expected == nil, "decoded a payload SPEC §7 rejects (\(String(describing: expected)))")
            invariant(payload.encoded == bytes, "payload does not re-encode to its bytes")
            invariant(payload.uidBytes == Array(bytes[2 ..< 2 + Int(bytes[1])]), "uid bytes differ")
            invariant(Array(payload.uid.utf8) == payload.uidBytes, "uid text is not exactly its bytes")
            invariant(payload.matches(uid: payload.uid, identityKey: payload.identityKey), "payload does not match itself")
            var otherBytes = payload.identityKey.rawRepresentation
            otherBytes[31] ^= 1
            let otherKey = must { try Ed25519.PublicKey(rawRepresentation: otherBytes) }
            invariant(!payload.matches(uid: payload.uid, identityKey: otherKey), "payload matches another key")
            let again = try QRPayload(uidBytes: payload.uidBytes, identityKey: payload.identityKey)
            invariant(again == payload, "rebuilt payload differs")
        } catch {
            invariant(error == expected, "decode threw \(error), expected \(String(describing: expected))")
        }
    }

    static func seeds() -> [[UInt8]] {
        let key = fixedBytes(32, seed: 1)
        var seeds: [[UInt8]] = []
        for uid in ["alice", "é", "e\u{301}", "👩‍💻", String(repeating: "x", count: 255)] {
            if let payload = try? QRPayload(uid: uid, identityKey: must { try Ed25519.PublicKey(rawRepresentation: key) }) {
                seeds.append(payload.encoded)
            }
        }
        seeds.append([0x01, 2, 0xc0, 0xaf] + key)          // overlong
        seeds.append([0x01, 3, 0xed, 0xa0, 0x80] + key)    // surrogate
        seeds.append([0x01, 0] + key)
        seeds.append([0x02, 1, 0x61] + key)
        seeds.append([0x01])
        return seeds
    }
}
