// Harness `vector_loader`: the conformance engine reading a vector file (SPEC §8), through
// `ConformanceRunner.verify(data:path:)` with every registered suite and Wycheproof algorithm.
//
// Invariants: whatever the bytes, the runner returns a result (never traps); the counts are
// consistent (passed + failed + skipped = total, one failure message per failure); a file
// that is not one JSON object of a known shape fails; running the same bytes twice gives the
// same result; the report renders as a table and as JSON.
//
// Bound: the engine's work grows with the counts a test declares (a sender-key `iteration`
// costs one HMAC per step, a safety-number `iterations` two SHA-512 per step, `max_skip` keys
// per message); the suites refuse counts beyond their caps (iteration 2^20, max_stored
// 100,000, iterations 1,000,000) before any work. Inputs holding a JSON number of eight or
// more digits are skipped; every number up to 9,999,999 is fuzzed, so the caps are reached.
import Foundation
import SessionKit
import SignalVectorKit

enum Harness {
    static let runner = ConformanceRunner()

    /// Whether a JSON number outside strings has eight or more digits.
    static func hasLargeNumber(_ bytes: [UInt8]) -> Bool {
        var inString = false
        var escaped = false
        var digits = 0
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            if byte == UInt8(ascii: "\"") { inString = true; digits = 0; continue }
            if (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) {
                digits += 1
                if digits >= 8 { return true }
            } else {
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
            #"{"schema": "sessionkit-vectors/1", "suite": "padding", "source": "seed", "tests": [{"id": 1, "comment": "", "plaintext": "", "padded": "01000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000003b"}]}"#,
            #"{"schema": "sessionkit-vectors/1", "suite": "qr-payload", "source": "seed", "tests": [{"id": 1, "comment": "", "payload": "0100", "error": "invalidPayload"}]}"#,
            #"{"schema": "sessionkit-vectors/1", "suite": "sender-key", "tests": [{"id": 1, "chain_key": "00", "signing_seed": "00", "iteration": 0, "events": []}]}"#,
            #"{"schema": "sessionkit-vectors/1", "suite": "ratchet", "tests": [{"id": 1, "max_skip": 2, "alice": {}, "bob": {}, "events": [{"op": "send"}]}]}"#,
            #"{"algorithm": "AES-GCM", "testGroups": [{"keySize": 256, "ivSize": 96, "tagSize": 128, "tests": [{"tcId": 1, "key": "00", "iv": "00", "aad": "", "msg": "", "ct": "", "tag": "", "result": "invalid", "flags": []}]}]}"#,
            #"{"algorithm": "XDH", "testGroups": [{"curve": "curve25519", "tests": [{"tcId": 1, "public": "00", "private": "00", "shared": "00", "result": "valid"}]}]}"#,
            #"[1, 2, 3]"#,
            #"{"suite": "unknown"}"#,
        ]
        return documents.map { Array($0.utf8) }
    }
}
