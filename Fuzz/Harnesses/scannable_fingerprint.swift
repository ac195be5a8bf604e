// Harness `scannable_fingerprint`: decoding scanned fingerprints (SPEC §7, libsignal's
// CombinedFingerprints protobuf).
//
// Invariants: every failure is one of the decoding cases of `VerificationError` (never a
// trust-store or parameter error); a decoded fingerprint re-encodes to bytes of the same length
// (fields are unique, varints minimal) that decode to an equal value; it matches its mirror
// image (local and remote swapped), mismatches when one content bit differs, and reports a
// version mismatch for another version.
@_spi(Testing) import Verification

enum Harness {
    static func isDecodingError(_ error: VerificationError) -> Bool {
        switch error {
        case .truncatedFingerprint, .invalidVarint, .unknownField, .duplicateField, .missingField, .invalidFingerprintLength:
            return true
        default:
            return false
        }
    }

    static func run(_ bytes: [UInt8]) {
        let fingerprint: ScannableFingerprint
        do {
            fingerprint = try ScannableFingerprint(serialized: bytes)
        } catch {
            invariant(isDecodingError(error), "decoding threw \(error)")
            return
        }
        let encoded = fingerprint.serialized
        invariant(encoded.count == bytes.count, "re-encoding has \(encoded.count) bytes, input \(bytes.count)")
        do {
            let again = try ScannableFingerprint(serialized: encoded)
            invariant(again == fingerprint, "re-encoded fingerprint decodes to another value")
            invariant(again.serialized == encoded, "encoding is not stable")
            let mirror = try ScannableFingerprint(version: fingerprint.version, localFingerprint: fingerprint.remoteFingerprint,
                                                  remoteFingerprint: fingerprint.localFingerprint)
            invariant(fingerprint.compare(with: mirror) == .match, "fingerprint does not match its mirror image")
            let scanned = try fingerprint.compare(serialized: mirror.serialized)
            invariant(scanned == .match, "serialized mirror does not match")
            var changed = fingerprint.localFingerprint
            changed[Int(bytes.count % 32)] ^= 0x80
            let altered = try ScannableFingerprint(version: fingerprint.version, localFingerprint: fingerprint.remoteFingerprint,
                                                   remoteFingerprint: changed)
            invariant(fingerprint.compare(with: altered) == .mismatch, "a changed content still matches")
            let otherVersion = try ScannableFingerprint(version: fingerprint.version &+ 1, localFingerprint: fingerprint.remoteFingerprint,
                                                        remoteFingerprint: fingerprint.localFingerprint)
            invariant(fingerprint.compare(with: otherVersion) == .versionMismatch(ours: fingerprint.version, theirs: fingerprint.version &+ 1),
                      "another version is not a version mismatch")
        } catch {
            fail("a fingerprint the library encoded does not decode: \(error)")
        }
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for version in [UInt32(0), 1, 2, 127, 128, .max] {
            if let fingerprint = try? ScannableFingerprint(version: version, localFingerprint: fixedBytes(32, seed: 1),
                                                           remoteFingerprint: fixedBytes(32, seed: 2)) {
                seeds.append(fingerprint.serialized)
            }
        }
        if let base = seeds.first {
            seeds.append(Array(base.dropLast()))
            seeds.append(base + [0x08, 0x01])
            seeds.append([0x08, 0x81, 0x00] + base.dropFirst(2))     // non-minimal varint
        }
        return seeds
    }
}
