// Harness `vector_loader`: the conformance engine reading a vector file (SPEC §8, schema
// `sessionkit-vectors/2`), through `ConformanceRunner.verify(data:path:)` with every registered
// suite (bundle and x3dh included) and Wycheproof algorithm (XChaCha20-Poly1305 and ML-KEM
// included). This harness links the real KEM adapter (`SessionKitMLKEM` on swift-crypto, see
// Fuzz/README.md), so ML-KEM keys, seeds and ciphertexts from the input reach swift-crypto.
//
// Invariants: whatever the bytes, the runner returns a result (never traps); the counts are
// consistent (passed + failed + skipped = total, one failure message per failure); a file
// that is not one JSON object of a known shape fails; running the same bytes twice gives the
// same result; the report renders as a table and as JSON.
//
// Bound: the engine's work grows with the counts a test declares (a sender-key `iteration`
// costs one HMAC per step, a safety-number `iterations` two SHA-512 per step, `max_skip` keys
// per message); the suites refuse counts beyond their caps (iteration 2^20, max_stored
// 100,000, iterations 1,000,000) before any work. Inputs giving one of these four keys a
// number of eight or more digits are skipped (so are inputs with such a number after a key
// written with a backslash escape, which could spell one of them); every number up to
// 9,999,999 is fuzzed, so the caps are reached. Other numbers (u32 prekey and device ids,
// test ids) are not limited: version 2's vectors use ids up to 2^32 − 1.
import Foundation
@_spi(Testing) import SessionKit
import SignalVectorKit

enum Harness {
    static let runner = ConformanceRunner()

    static let workKeys: Set<[UInt8]> = Set(["iteration", "iterations", "max_skip", "max_stored"].map { Array($0.utf8) })

    /// Whether a JSON number of eight or more digits is the value of a key in `workKeys` (or of
    /// a key holding an escape). A token-level scan: it needs no parse that could disagree with
    /// the engine's.
    static func hasLargeNumber(_ bytes: [UInt8]) -> Bool {
        var inString = false
        var escaped = false
        var sawEscape = false
        var string: [UInt8] = []
        var lastString: [UInt8] = []
        var lastStringHadEscape = false
        var key: [UInt8]?            // the key whose value comes next (after its ':')
        var keyHadEscape = false
        var digits = 0
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                    sawEscape = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    lastString = string
                    lastStringHadEscape = sawEscape
                } else {
                    string.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                sawEscape = false
                string = []
                digits = 0
            case UInt8(ascii: ":"):
                key = lastString
                keyHadEscape = lastStringHadEscape
                digits = 0
            case UInt8(ascii: "0") ... UInt8(ascii: "9"):
                digits += 1
                if digits >= 8, let key, keyHadEscape || workKeys.contains(key) { return true }
            case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), 0x20, 0x09, 0x0A, 0x0D:
                break
            default:
                // ',', '{', '[', ... end the value.
                key = nil
                digits = 0
            }
        }
        return false
    }

    static func run(_ bytes: [UInt8]) {
        guard !hasLargeNumber(bytes) else { return }
        let data = Data(bytes)
        let result = runner.verify(data: data, path: "fuzz.json")
        invariant(result.total == result.passed + result.failed + result.skipped, "counts do not add up")
        invariant(result.failures.count == result.failed, "\(result.failures.count) messages for \(result.failed) failures")
        invariant(result.failures.allSatisfy { !$0.message.isEmpty }, "a failure without a message")
        let isObject = (try? JSONSerialization.jsonObject(with: data, options: [])) is [String: Any]
        if !isObject { invariant(!result.succeeded && result.shape == .unreadable, "a file that is not one JSON object did not fail") }
        if result.succeeded { invariant(result.shape != .unreadable, "an unreadable file succeeded") }
        invariant(runner.verify(data: data, path: "fuzz.json") == result, "the same bytes gave another result")
        let report = VectorReport(files: [result])
        invariant(!report.renderTable().isEmpty, "empty table")
        invariant(!report.json.rendered().isEmpty, "empty JSON report")
    }

    static func seeds() -> [[UInt8]] {
        let documents = [
            #"{"schema": "sessionkit-vectors/2", "suite": "padding", "source": "seed", "tests": [{"id": 1, "comment": "", "plaintext": "", "padded": "01000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000003b"}]}"#,
            #"{"schema": "sessionkit-vectors/1", "suite": "padding", "source": "seed", "tests": []}"#,
            #"{"schema": "sessionkit-vectors/2", "suite": "qr-payload", "source": "seed", "tests": [{"id": 1, "comment": "", "payload": "0100", "error": "invalidPayload"}]}"#,
            #"{"schema": "sessionkit-vectors/2", "suite": "sender-key", "tests": [{"id": 1, "group_id": "00", "sender_address": {"uid": "a", "device_id": 1}, "chain_key": "00", "signing_seed": "00", "iteration": 0, "events": []}]}"#,
            #"{"schema": "sessionkit-vectors/2", "suite": "ratchet", "tests": [{"id": 1, "max_skip": 2, "alice": {"address": {"uid": "a", "device_id": 1}}, "bob": {}, "events": [{"op": "send"}]}]}"#,
            #"{"schema": "sessionkit-vectors/2", "suite": "bundle", "tests": [{"id": 1, "bundle": "26", "error": "invalidPayload"}, {"id": 2, "identity_seed": "00", "spk_id": 1, "spk_sk": "00", "opk_id": null, "opk_sk": null, "kem_id": 1, "kem_seed": "00", "bundle": "26"}]}"#,
            #"{"schema": "sessionkit-vectors/2", "suite": "x3dh", "tests": [{"id": 1, "alice_address": {"uid": "a", "device_id": 1}, "bob_address": {"uid": "b", "device_id": 2}, "bob_kem_seed": "00", "kem_encapsulation": {"ciphertext": "00", "shared_secret": "00"}}]}"#,
            #"{"schema": "sessionkit-vectors/2", "suite": "self-encryption", "tests": [{"id": 1, "identity_seed": "00", "context": "", "sealed": "25", "error": "invalidMessage"}]}"#,
            #"{"algorithm": "AES-GCM", "testGroups": [{"keySize": 256, "ivSize": 96, "tagSize": 128, "tests": [{"tcId": 1, "key": "00", "iv": "00", "aad": "", "msg": "", "ct": "", "tag": "", "result": "invalid", "flags": []}]}]}"#,
            #"{"algorithm": "XCHACHA20-POLY1305", "testGroups": [{"keySize": 256, "ivSize": 192, "tagSize": 128, "tests": [{"tcId": 1, "key": "00", "iv": "00", "aad": "", "msg": "", "ct": "", "tag": "", "result": "invalid", "flags": []}]}]}"#,
            #"{"algorithm": "ML-KEM", "testGroups": [{"type": "MLKEMTest", "parameterSet": "ML-KEM-768", "tests": [{"tcId": 1, "seed": "00", "ek": "00", "c": "00", "K": "00", "result": "invalid", "flags": []}]}, {"type": "MLKEMEncapsTest", "parameterSet": "ML-KEM-768", "tests": [{"tcId": 2, "ek": "00", "m": "00", "c": "", "K": "", "result": "invalid", "flags": []}]}]}"#,
            #"{"algorithm": "XDH", "testGroups": [{"curve": "curve25519", "tests": [{"tcId": 1, "public": "00", "private": "00", "shared": "00", "result": "valid"}]}]}"#,
            #"[1, 2, 3]"#,
            #"{"suite": "unknown"}"#,
        ]
        return documents.map { Array($0.utf8) }
    }
}
