import Foundation
import SignalPrimitives

/// One C2SP/CCTV age test vector (`age/testdata/` of https://github.com/C2SP/CCTV): a textual
/// header of `key: value` lines, an empty line, then the age file (zlib-compressed when
/// `compressed: zlib`).
///
/// Keys read: `expect` (`success`, `no match`, `HMAC failure`, `header failure`,
/// `payload failure`, `armor failure`), `payload` (SHA-256 hex of all plaintext released),
/// `identity` (repeatable, Bech32), `passphrase` (repeatable), `armored: yes`,
/// `compressed: zlib`, `file key` and `comment` (not needed to run the vector). The CCTV
/// README says a file with another key is to be ignored: such a file is skipped, never passed.
public struct AgeTestkitVector: Sendable, Equatable {
    /// The outcomes a vector can expect.
    public enum Expectation: String, Sendable, CaseIterable {
        /// The file decrypts to its end and the plaintext hashes to `payload`.
        case success = "success"
        /// The header parses but no identity unwraps a stanza.
        case noMatch = "no match"
        /// A file key is unwrapped but the header MAC does not match.
        case hmacFailure = "HMAC failure"
        /// The header does not parse.
        case headerFailure = "header failure"
        /// The payload fails; what was released before must hash to `payload`.
        case payloadFailure = "payload failure"
        /// The ASCII armor does not parse.
        case armorFailure = "armor failure"
    }

    /// The header keys this reader knows.
    static let knownKeys: Set<String> = ["expect", "payload", "file key", "identity", "passphrase", "armored", "compressed", "comment"]

    /// The expected outcome.
    public var expect: Expectation
    /// The SHA-256 of the plaintext that must be released, if given.
    public var payloadDigest: [UInt8]?
    /// The Bech32 identities, in file order.
    public var identities: [String] = []
    /// The passphrases, in file order.
    public var passphrases: [String] = []
    /// Whether the file is ASCII-armored.
    public var armored = false
    /// The header keys this reader does not know (the file is then skipped).
    public var unknownKeys: [String] = []
    /// The age file, decompressed.
    public var file: Data

    /// Whether `data` starts like a testkit vector: a first line `key: value` with a known key.
    public static func looksLikeVector(_ data: Data) -> Bool {
        let prefix = data.prefix(32)
        guard let colon = prefix.firstIndex(of: UInt8(ascii: ":")),
              let key = String(data: prefix[prefix.startIndex ..< colon], encoding: .utf8) else { return false }
        return knownKeys.contains(key) && prefix.dropFirst(colon - prefix.startIndex + 1).first == UInt8(ascii: " ")
    }

    /// Parses a vector file.
    /// - Throws: `VectorFailure` for a header without an empty line after it, a line that is
    ///   not `key: value`, a missing or unknown `expect`, bad hex, an unknown compression or a
    ///   bad zlib stream.
    public init(_ data: Data) throws {
        var offset = data.startIndex
        var expect: Expectation?
        var compressed = false
        while true {
            guard let end = data[offset...].firstIndex(of: 0x0A) else { throw VectorFailure("the vector header does not end with an empty line") }
            let line = data[offset ..< end]
            offset = end + 1
            if line.isEmpty { break }
            guard let text = String(data: line, encoding: .utf8), let separator = text.range(of: ": ") else {
                throw VectorFailure("vector header line is not 'key: value'")
            }
            let key = String(text[..<separator.lowerBound])
            let value = String(text[separator.upperBound...])
            switch key {
            case "expect":
                guard let parsed = Expectation(rawValue: value) else { throw VectorFailure("unknown expect value '\(value)'") }
                expect = parsed
            case "payload":
                guard let digest = Hex.decode(value), digest.count == 32 else { throw VectorFailure("payload is not 32 bytes of hex") }
                payloadDigest = digest
            case "identity": identities.append(value)
            case "passphrase": passphrases.append(value)
            case "armored":
                guard value == "yes" else { throw VectorFailure("armored must be 'yes', not '\(value)'") }
                armored = true
            case "compressed":
                guard value == "zlib" else { throw VectorFailure("unknown compression '\(value)'") }
                compressed = true
            case "file key", "comment": break
            default: unknownKeys.append(key)
            }
        }
        guard let expect else { throw VectorFailure("the vector header has no 'expect' line") }
        self.expect = expect
        let body = data[offset...]
        file = compressed ? try ZlibInflater.inflate(Data(body)) : Data(body)
    }
}
