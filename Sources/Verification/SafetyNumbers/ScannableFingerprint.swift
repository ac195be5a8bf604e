import SignalPrimitives

/// The scannable form of a safety number (SPEC §7), byte-compatible with libsignal's
/// `ScannableFingerprint`: the protobuf
///
///     CombinedFingerprints { 1: version (varint), 2: local LogicalFingerprint, 3: remote LogicalFingerprint }
///     LogicalFingerprint   { 1: content (bytes) }
///
/// with each content the first 32 bytes of that party's iterated hash. The encoding is written
/// by hand, fields in number order, varints minimal. Decoding is strict: a field other than
/// these, a repeated or missing field, a malformed varint, a content that is not 32 bytes or a
/// truncated field is a `VerificationError`.
///
/// Equality (and matching) compares the contents in constant time.
public struct ScannableFingerprint: Sendable, Equatable {
    /// The length of each content: 32 bytes.
    public static let contentByteCount = 32

    /// The fingerprint version (1 or 2 in libsignal; the digits do not depend on it).
    public let version: UInt32
    /// `H[0..<32]` of the party that encoded this form.
    public let localFingerprint: [UInt8]
    /// `H[0..<32]` of the other party, as the encoding party computed it.
    public let remoteFingerprint: [UInt8]

    /// A scannable fingerprint from its parts.
    /// - Throws: `VerificationError.invalidFingerprintLength` unless both contents are 32 bytes.
    public init(version: UInt32, localFingerprint: [UInt8], remoteFingerprint: [UInt8]) throws(VerificationError) {
        for content in [localFingerprint, remoteFingerprint] where content.count != Self.contentByteCount {
            throw .invalidFingerprintLength(content.count)
        }
        self.init(version: version, checkedLocal: localFingerprint, checkedRemote: remoteFingerprint)
    }

    /// The generator's path: both contents are 32 bytes by construction.
    init(version: UInt32, checkedLocal: [UInt8], checkedRemote: [UInt8]) {
        self.version = version
        localFingerprint = checkedLocal
        remoteFingerprint = checkedRemote
    }

    /// Decodes the protobuf bytes a peer shows (for example read from its QR code).
    /// - Throws: `VerificationError.unknownField`, `.duplicateField`, `.missingField`,
    ///   `.invalidVarint`, `.truncatedFingerprint` or `.invalidFingerprintLength` for anything
    ///   but a well-formed `CombinedFingerprints` with 32-byte contents.
    public init(serialized: [UInt8]) throws(VerificationError) {
        var reader = ProtobufWire.Reader(serialized[...])
        var version: UInt32?
        var local: [UInt8]?
        var remote: [UInt8]?
        while !reader.isAtEnd {
            let tag = try reader.readVarint()
            switch tag {
            case ProtobufWire.tag(1, ProtobufWire.varintType):
                guard version == nil else { throw .duplicateField(1) }
                let value = try reader.readVarint()
                guard value <= UInt64(UInt32.max) else { throw .invalidVarint }
                version = UInt32(value)
            case ProtobufWire.tag(2, ProtobufWire.lengthDelimitedType):
                guard local == nil else { throw .duplicateField(2) }
                local = try Self.decodeLogicalFingerprint(reader.readLengthDelimited())
            case ProtobufWire.tag(3, ProtobufWire.lengthDelimitedType):
                guard remote == nil else { throw .duplicateField(3) }
                remote = try Self.decodeLogicalFingerprint(reader.readLengthDelimited())
            default:
                throw .unknownField(tag: tag)
            }
        }
        guard let version else { throw .missingField(1) }
        guard let local else { throw .missingField(2) }
        guard let remote else { throw .missingField(3) }
        self.init(version: version, checkedLocal: local, checkedRemote: remote)
    }

    /// Decodes `LogicalFingerprint { 1: content }` with a 32-byte content.
    private static func decodeLogicalFingerprint(_ bytes: ArraySlice<UInt8>) throws(VerificationError) -> [UInt8] {
        var reader = ProtobufWire.Reader(bytes)
        var content: [UInt8]?
        while !reader.isAtEnd {
            let tag = try reader.readVarint()
            guard tag == ProtobufWire.tag(1, ProtobufWire.lengthDelimitedType) else { throw .unknownField(tag: tag) }
            guard content == nil else { throw .duplicateField(1) }
            let value = try reader.readLengthDelimited()
            guard value.count == contentByteCount else { throw .invalidFingerprintLength(value.count) }
            content = Array(value)
        }
        guard let content else { throw .missingField(1) }
        return content
    }

    /// The protobuf bytes to show (as a QR code) to the other party: 74 bytes for versions
    /// below 128.
    public var serialized: [UInt8] {
        var inner = [UInt8]()
        var out = [UInt8]()
        out.reserveCapacity(80)
        ProtobufWire.appendVarint(ProtobufWire.tag(1, ProtobufWire.varintType), to: &out)
        ProtobufWire.appendVarint(UInt64(version), to: &out)
        ProtobufWire.appendBytes(1, localFingerprint, to: &inner)
        ProtobufWire.appendBytes(2, inner, to: &out)
        inner.removeAll(keepingCapacity: true)
        ProtobufWire.appendBytes(1, remoteFingerprint, to: &inner)
        ProtobufWire.appendBytes(3, inner, to: &out)
        return out
    }

    /// Compares the other party's scannable form with this one: they match when the versions
    /// are equal and each side's local fingerprint equals the other's remote one. Both
    /// contents are compared in constant time, whatever the first comparison gives.
    public func compare(with theirs: ScannableFingerprint) -> FingerprintComparison {
        guard theirs.version == version else { return .versionMismatch(ours: version, theirs: theirs.version) }
        let theyHoldOurs = ConstantTime.equals(theirs.remoteFingerprint, localFingerprint)
        let weHoldTheirs = ConstantTime.equals(theirs.localFingerprint, remoteFingerprint)
        return theyHoldOurs && weHoldTheirs ? .match : .mismatch
    }

    /// Decodes the other party's scanned bytes and compares them with this fingerprint.
    /// - Throws: the decoding errors of `init(serialized:)`.
    public func compare(serialized theirs: [UInt8]) throws(VerificationError) -> FingerprintComparison {
        compare(with: try ScannableFingerprint(serialized: theirs))
    }

    /// Equal version and equal contents, compared in constant time.
    public static func == (lhs: ScannableFingerprint, rhs: ScannableFingerprint) -> Bool {
        let sameLocal = ConstantTime.equals(lhs.localFingerprint, rhs.localFingerprint)
        let sameRemote = ConstantTime.equals(lhs.remoteFingerprint, rhs.remoteFingerprint)
        return lhs.version == rhs.version && sameLocal && sameRemote
    }
}
