import SessionKit

/// The one error type of the `Verification` module: every call of it (fingerprints, scannable
/// fingerprints, the QR payload codec, the trust store and its persisted records) throws this,
/// so verifying a contact (scan the QR code, compare, mark verified) handles one type.
///
/// `invalidPayload`, `unsupportedVersion` and `invalidKey` carry the SPEC §8 names
/// (`specName`); the other cases have none.
public enum VerificationError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// A fingerprint iteration count outside `2...1_000_000` (SPEC §7: 1 < iterations ≤ 1,000,000).
    case invalidIterations(Int)
    /// A fingerprint content (`LogicalFingerprint.content`) that is not exactly 32 bytes.
    case invalidFingerprintLength(Int)
    /// A scannable fingerprint ends inside a field (a length-delimited field longer than the
    /// bytes that remain).
    case truncatedFingerprint
    /// A malformed varint in a scannable fingerprint: truncated, longer than 10 bytes, not
    /// minimally encoded, or too large for its field (the version is a `uint32`).
    case invalidVarint
    /// A field a scannable fingerprint may not carry (unknown number, or a known number with
    /// the wrong wire type). `tag` is the raw protobuf key, `field << 3 | wireType`.
    case unknownField(tag: UInt64)
    /// A field that appears twice in one message of a scannable fingerprint.
    case duplicateField(Int)
    /// A required field (version, local, remote, or a fingerprint's content) is absent.
    case missingField(Int)
    /// SPEC §8 `invalidPayload`: a QR payload or persisted trust records that do not decode
    /// (truncated, trailing bytes, a malformed uid or field).
    case invalidPayload
    /// SPEC §8 `unsupportedVersion`: a QR payload or persisted trust records of a version this
    /// library does not read.
    case unsupportedVersion
    /// SPEC §8 `invalidKey`: an identity key that is not a 32-byte Ed25519 public key.
    case invalidKey
    /// The trust store holds no record for the user (its user id).
    case unknownContact(String)
    /// The identity key passed to `acceptIdentityChange` is neither key of the user's pending
    /// change (its user id): the key changed again since the app asked the user; or a scanned
    /// code passed to `markVerified(scanned:forUser:)` carries a key that is not on record.
    case identityKeyMismatch(String)
    /// A scanned QR payload names another user than the contact it was scanned for (a code of
    /// Carol's scanned on Bob's screen): nothing was verified. The user id is the contact's.
    case payloadForAnotherUser(String)
    /// A trust-store backend failed (for use by app-provided stores).
    case storage(String)

    /// The SPEC §8 error name (`invalidPayload`, `unsupportedVersion`, `invalidKey`), or `nil`
    /// for the errors SPEC §8 does not name.
    public var specName: String? {
        switch self {
        case .invalidPayload: return "invalidPayload"
        case .unsupportedVersion: return "unsupportedVersion"
        case .invalidKey: return "invalidKey"
        default: return nil
        }
    }

    /// A short description without key material.
    public var description: String {
        switch self {
        case let .invalidIterations(n): return "invalid fingerprint iterations \(n): must satisfy 1 < n ≤ 1000000"
        case let .invalidFingerprintLength(n): return "fingerprint content of \(n) bytes (32 required)"
        case .truncatedFingerprint: return "scannable fingerprint truncated"
        case .invalidVarint: return "scannable fingerprint holds a malformed varint"
        case let .unknownField(tag): return "scannable fingerprint holds an unexpected field (key \(tag))"
        case let .duplicateField(n): return "scannable fingerprint repeats field \(n)"
        case let .missingField(n): return "scannable fingerprint lacks field \(n)"
        case .invalidPayload: return "invalid payload"
        case .unsupportedVersion: return "unsupported version"
        case .invalidKey: return "invalid identity key"
        case let .unknownContact(userID): return "no trust record for user \(userID)"
        case let .identityKeyMismatch(userID): return "identity key differs from the one on record for user \(userID)"
        case let .payloadForAnotherUser(userID): return "the scanned code names another user than \(userID)"
        case let .storage(why): return "trust storage failed: \(why)"
        }
    }
}
