import SignalPrimitives

/// The QR payload a user shows so that a contact can record (and verify) their identity key
/// (SPEC §7, version 1):
///
///     0x01 || u8(len(uid)) || uid (UTF-8, 1–255 bytes) || identity key (32)
///
/// The uid is kept as its UTF-8 bytes and compared as bytes: "é" (c3 a9) and "e\u{301}"
/// (65 cc 81) are different uids although Swift `String`s equate them.
public struct QRPayload: Sendable, Hashable {
    /// The only version this codec reads and writes.
    public static let version: UInt8 = 0x01
    /// The identity key length: a 32-byte Ed25519 public key.
    public static let identityKeyByteCount = 32
    /// The accepted uid lengths in UTF-8 bytes.
    public static let uidByteRange: ClosedRange<Int> = 1 ... 255

    /// The uid's UTF-8 bytes (well-formed, 1–255 bytes). Equality and hashing use these bytes.
    public let uidBytes: [UInt8]
    /// The Ed25519 identity key.
    public let identityKey: Ed25519.PublicKey

    /// The uid as text (exactly the bytes of `uidBytes`; never normalised).
    public var uid: String { String(decoding: uidBytes, as: UTF8.self) }

    /// A payload for `uid` (its UTF-8 bytes, unnormalised) and an Ed25519 identity key.
    /// - Throws: `VerificationError.invalidPayload` when the uid is empty or longer than 255
    ///   UTF-8 bytes.
    public init(uid: String, identityKey: Ed25519.PublicKey) throws(VerificationError) {
        try self.init(uidBytes: Array(uid.utf8), identityKey: identityKey)
    }

    /// A payload from the uid's raw bytes.
    /// - Throws: `VerificationError.invalidPayload` when the uid is empty, longer than 255 bytes
    ///   or not well-formed UTF-8.
    public init(uidBytes: [UInt8], identityKey: Ed25519.PublicKey) throws(VerificationError) {
        guard Self.uidByteRange.contains(uidBytes.count), StrictUTF8.isValid(uidBytes) else { throw .invalidPayload }
        self.uidBytes = uidBytes
        self.identityKey = identityKey
    }

    /// Decodes a scanned payload strictly.
    /// - Throws: `VerificationError.unsupportedVersion` when the first byte is not 0x01;
    ///   `VerificationError.invalidPayload` for an empty buffer, an empty uid, a uid that is not
    ///   well-formed UTF-8 (overlong forms, surrogates, truncated sequences, …), a buffer
    ///   shorter than the lengths announce, or trailing bytes.
    public init(decoding payload: [UInt8]) throws(VerificationError) {
        guard let version = payload.first else { throw .invalidPayload }
        guard version == Self.version else { throw .unsupportedVersion }
        guard payload.count >= 2 else { throw .invalidPayload }
        let uidCount = Int(payload[1])
        guard uidCount > 0, payload.count == 2 + uidCount + Self.identityKeyByteCount else { throw .invalidPayload }
        let identityKey: Ed25519.PublicKey
        do { identityKey = try Ed25519.PublicKey(rawRepresentation: Array(payload[(2 + uidCount)...])) } catch {
            throw .invalidKey
        }
        try self.init(uidBytes: Array(payload[2 ..< 2 + uidCount]), identityKey: identityKey)
    }

    /// The encoded payload (`0x01 || u8(len) || uid || key`).
    public var encoded: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(2 + uidBytes.count + Self.identityKeyByteCount)
        out.append(Self.version)
        out.append(UInt8(truncatingIfNeeded: uidBytes.count))
        out.append(contentsOf: uidBytes)
        out.append(contentsOf: identityKey.rawRepresentation)
        return out
    }

    /// Whether the payload names `uid` (compared as UTF-8 bytes) with `identityKey`
    /// (compared in constant time).
    public func matches(uid: String, identityKey: Ed25519.PublicKey) -> Bool {
        let sameKey = ConstantTime.equals(self.identityKey.rawRepresentation, identityKey.rawRepresentation)
        return Array(uid.utf8) == uidBytes && sameKey
    }
}
