import Foundation
import SignalPrimitives
import XCTest

/// Checks that no textual rendering of a value shows a secret: `description`,
/// `debugDescription`, string interpolation and `dump` (which walks the stored properties
/// through reflection, as debuggers and some loggers do).
enum Redaction {
    /// Every rendering checked.
    static func renderings(_ value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped]
    }

    /// The renderings with memory addresses blanked (they differ between any two objects).
    static func addressFreeRenderings(_ value: Any) -> [String] {
        renderings(value).map {
            $0.replacingOccurrences(of: "0x[0-9a-fA-F]+", with: "0x…", options: .regularExpression)
                .replacingOccurrences(of: "pointerValue: [0-9]+", with: "pointerValue: …", options: .regularExpression)
        }
    }

    /// The byte values a rendering lists in decimal, in order (as `dump` shows arrays and
    /// tuples of bytes), without the `.0:` labels of tuple elements.
    static func decimalRun(_ text: String) -> [Int] {
        let unlabelled = text.replacingOccurrences(of: "\\.[0-9]+:", with: " ", options: .regularExpression)
        guard let regex = try? NSRegularExpression(pattern: "[0-9]+") else { return [] }
        let range = NSRange(unlabelled.startIndex..., in: unlabelled)
        return regex.matches(in: unlabelled, range: range).compactMap { match in
            Range(match.range, in: unlabelled).flatMap { Int(unlabelled[$0]) }
        }
    }

    /// Asserts that no rendering of `value` contains `secret` as hex (either case), as base64,
    /// or as a run of decimal byte values.
    static func assertHides(_ secret: [UInt8], in value: Any, _ what: String,
                            file: StaticString = #filePath, line: UInt = #line) {
        precondition(secret.count >= 16, "a secret shorter than 16 bytes could appear by chance")
        let hex = Hex.encode(secret)
        let base64 = Data(secret).base64EncodedString()
        let values = secret.map(Int.init)
        for text in renderings(value) {
            XCTAssertFalse(text.lowercased().contains(hex), "\(what) shows the secret in hex:\n\(text)", file: file, line: line)
            XCTAssertFalse(text.contains(base64), "\(what) shows the secret in base64", file: file, line: line)
            let run = decimalRun(text)
            let shown = run.count >= values.count && (0 ... run.count - values.count).contains {
                Array(run[$0 ..< $0 + values.count]) == values
            }
            XCTAssertFalse(shown, "\(what) lists the secret's bytes:\n\(text)", file: file, line: line)
        }
    }

    /// Asserts that two values that differ only in their secrets render identically
    /// (addresses aside): nothing derived from the secret is shown either.
    static func assertRendersIndependentlyOfSecret(_ first: Any, _ second: Any, _ what: String,
                                                   file: StaticString = #filePath, line: UInt = #line) {
        for (a, b) in zip(addressFreeRenderings(first), addressFreeRenderings(second)) where a != b {
            let differing = zip(a.split(separator: "\n"), b.split(separator: "\n")).first { $0 != $1 }
            XCTFail("\(what) renders something that depends on its secret: \(differing.map { "\($0.0) / \($0.1)" } ?? "lengths differ")",
                    file: file, line: line)
        }
    }

    /// Two different 32-byte secrets with no zero byte.
    static let secrets: ([UInt8], [UInt8]) = ((0 ..< 32).map { UInt8(0x41 + $0) }, (0 ..< 32).map { UInt8(0xC1 + ($0 % 60)) })
}
