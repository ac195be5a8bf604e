import SignalPrimitives

/// A retry notice (SPEC §9): what device B sends device A when it cannot decrypt a message from
/// A because B's state is lost or unusable, so that A can act without a working session (start a
/// new session, send its group chain again).
///
///     notice = 0x27 || Encode(B) || Encode(A) || u32(registration_id_B) || kind (1) || body || IK_B (32) || mac (32)
///       kind 0x01 (pairwise): body = ratchet_key (32) || u32(n)        (the failed message's header.dh, header.n)
///       kind 0x02 (group):    body = Encode(group) || chain_id (32) || u32(iteration)
///     K   = HKDF(ZERO32, DH(x(IK_B).sk, x(IK_A).pk), "SessionKit Retry v2", 32)
///     mac = HMAC(K, every byte of the notice before mac)
///
/// The MAC is deniable (A could have computed it too) and the notice carries no plaintext and
/// no key; the server relays it in the clear. `ratchet_key` and `chain_id` are only compared,
/// never used as keys.
///
/// B creates one with `init(from:at:to:recipientIdentityKey:registrationID:failure:)`; A reads
/// one with `init(verifying:from:localAddress:identity:)` (SPEC §9's checks up to the MAC) and
/// then checks IK_B against its trust record (`checkSenderIdentity(trusted:)`).
@_spi(Testing) public struct RetryNotice: Sendable, Hashable, CustomStringConvertible {
    /// What B failed to decrypt.
    public enum Failure: Sendable, Hashable, CustomStringConvertible {
        /// Kind 0x01: a pairwise message, by its header's ratchet key (32 bytes) and counter.
        case pairwise(ratchetKey: [UInt8], counter: UInt32)
        /// Kind 0x02: a group message, by its group, chain id (32 bytes) and iteration.
        case group(GroupID, chainID: [UInt8], iteration: UInt32)

        /// The kind byte.
        public var kind: UInt8 {
            switch self {
            case .pairwise: return RetryNotice.pairwiseKind
            case .group: return RetryNotice.groupKind
            }
        }

        /// The body's bytes.
        var body: [UInt8] {
            switch self {
            case let .pairwise(ratchetKey, counter):
                var out = ratchetKey
                out.appendBigEndian(counter)
                return out
            case let .group(group, chainID, iteration):
                var out = group.encoded + chainID
                out.appendBigEndian(iteration)
                return out
            }
        }

        /// The bytes that identify the failure for the "one notice per failure" rule: the
        /// ratchet key, or the group and the chain id (counters and iterations left out).
        var identifyingBytes: [UInt8] {
            switch self {
            case let .pairwise(ratchetKey, _): return [RetryNotice.pairwiseKind] + ratchetKey
            case let .group(group, chainID, _): return [RetryNotice.groupKind] + group.encoded + chainID
            }
        }

        /// The kind and the counter or iteration (keys and ids in hex: none is secret).
        public var description: String {
            switch self {
            case let .pairwise(ratchetKey, counter): return "pairwise(ratchetKey: \(Hex.encode(ratchetKey)), n: \(counter))"
            case let .group(group, chainID, iteration): return "group(\(group), chain: \(Hex.encode(chainID)), iteration: \(iteration))"
            }
        }
    }

    /// The kind byte of a pairwise notice.
    public static let pairwiseKind: UInt8 = 0x01
    /// The kind byte of a group notice.
    public static let groupKind: UInt8 = 0x02

    /// B, the device that could not decrypt (and sends the notice).
    public let sender: ProtocolAddress
    /// A, the device whose message failed (and receives the notice).
    public let recipient: ProtocolAddress
    /// B's registration id.
    public let registrationID: RegistrationID
    /// What failed.
    public let failure: Failure
    /// IK_B, B's identity key.
    public let senderIdentityKey: Ed25519.PublicKey
    /// The notice's bytes (see the type's documentation).
    public let serialized: [UInt8]

    /// B's notice to A: B (`identity`, at `sender`) could not decrypt `failure` from A (at
    /// `recipient`, with the identity key `recipientIdentityKey`: from B's trust record or a
    /// session with A, else from A's bundle; a wrong key only makes A refuse the notice).
    /// - Throws: `SessionError.invalidKey` when `recipientIdentityKey` is not a valid point,
    ///   `.invalidConfiguration` for a ratchet key or chain id that is not 32 bytes,
    ///   `.primitive` when libsodium is unusable.
    public init(
        from identity: IdentityKeyPair, at sender: ProtocolAddress, to recipient: ProtocolAddress,
        recipientIdentityKey: Ed25519.PublicKey, registrationID: RegistrationID, failure: Failure
    ) throws(SessionError) {
        switch failure {
        case let .pairwise(ratchetKey, _):
            guard ratchetKey.count == 32 else { throw .invalidConfiguration("a retry notice's ratchet key is 32 bytes") }
        case let .group(_, chainID, _):
            guard chainID.count == 32 else { throw .invalidConfiguration("a retry notice's chain id is 32 bytes") }
        }
        let key = try RetryNoticeKey(local: identity, remote: recipientIdentityKey)
        var bytes = [WireType.retryNotice] + sender.encoded + recipient.encoded
        bytes.appendBigEndian(registrationID.rawValue)
        bytes.append(failure.kind)
        bytes.append(contentsOf: failure.body)
        bytes.append(contentsOf: identity.publicKey.rawRepresentation)
        bytes.append(contentsOf: key.mac(bytes[...]))
        self.sender = sender
        self.recipient = recipient
        self.registrationID = registrationID
        self.failure = failure
        senderIdentityKey = identity.publicKey
        serialized = bytes
    }

    /// A's reading of a notice that the transport says came from `transportSender` (B'), with
    /// SPEC §9's checks in order: the type byte (`unsupportedVersion`; an empty notice is
    /// `invalidMessage`); the lengths, the kind (0x01 or 0x02) and the registration id
    /// (1 … 2^31 − 1) (`invalidMessage`); that Encode(B) is B' and Encode(A) is `localAddress`
    /// (`invalidMessage`); IK_B's point (`invalidKey`); the MAC, with K from `identity` and IK_B
    /// (`invalidMessage`, compared in constant time). IK_B against the trust record comes next,
    /// with `checkSenderIdentity(trusted:)`.
    /// - Throws: `SessionError` as above; `.primitive` when the point check cannot run.
    public init(
        verifying bytes: [UInt8], from transportSender: ProtocolAddress, localAddress: ProtocolAddress, identity: IdentityKeyPair
    ) throws(SessionError) {
        guard let type = bytes.first else { throw .invalidMessage }
        guard type == WireType.retryNotice else { throw .unsupportedVersion }
        let layout = try Layout(bytes)
        guard bytes[layout.senderRange].elementsEqual(transportSender.encoded),
              bytes[layout.recipientRange].elementsEqual(localAddress.encoded) else {
            throw .invalidMessage
        }
        let identityKey: Ed25519.PublicKey
        do { identityKey = try Ed25519.PublicKey(rawRepresentation: Array(bytes[layout.identityKeyRange])) } catch { throw .invalidMessage }
        let key = try RetryNoticeKey(local: identity, remote: identityKey)
        guard ConstantTime.equals(key.mac(bytes[..<layout.identityKeyRange.upperBound]), Array(bytes[layout.identityKeyRange.upperBound...])) else {
            throw .invalidMessage
        }
        sender = transportSender
        recipient = localAddress
        registrationID = layout.registrationID
        failure = layout.failure
        senderIdentityKey = identityKey
        serialized = bytes
    }

    /// SPEC §9's last check: IK_B against A's trust record for B (`trusted`, `nil` without a
    /// record: then IK_B is accepted and nothing is recorded). IK_B is compared as 32 bytes.
    /// - Throws: `SessionError.untrustedIdentity` when the record holds another key (the
    ///   untrusted-identity outcome: report it, act on nothing).
    public func checkSenderIdentity(trusted: Ed25519.PublicKey?) throws(SessionError) {
        if let trusted, trusted != senderIdentityKey { throw .untrustedIdentity }
    }

    /// The sender, recipient, id and failure (nothing here is secret).
    public var description: String {
        "RetryNotice(from: \(sender), to: \(recipient), registrationID: \(registrationID), \(failure))"
    }

    /// Where the fields of a notice are, after the checks of lengths, kind and registration id.
    private struct Layout {
        let senderRange: Range<Int>
        let recipientRange: Range<Int>
        let registrationID: RegistrationID
        let failure: Failure
        let identityKeyRange: Range<Int>

        /// - Throws: `SessionError.invalidMessage` for a length that does not add up (an address
        ///   or group id of 0 bytes or running past the end, a missing or extra byte), a kind
        ///   other than 0x01 and 0x02 or a registration id out of range.
        init(_ bytes: [UInt8]) throws(SessionError) {
            var offset = 1
            senderRange = try Self.address(in: bytes, at: &offset)
            recipientRange = try Self.address(in: bytes, at: &offset)
            guard bytes.count - offset >= 5 else { throw .invalidMessage }
            let rawID = bytes.readBigEndianUInt32(at: offset)
            let kind = bytes[offset + 4]
            offset += 5
            switch kind {
            case RetryNotice.pairwiseKind:
                guard bytes.count - offset >= 36 else { throw .invalidMessage }
                failure = .pairwise(ratchetKey: Array(bytes[offset ..< offset + 32]), counter: bytes.readBigEndianUInt32(at: offset + 32))
                offset += 36
            case RetryNotice.groupKind:
                guard offset < bytes.count else { throw .invalidMessage }
                let length = Int(bytes[offset])
                guard length > 0, bytes.count - offset - 1 >= length + 36 else { throw .invalidMessage }
                let group: GroupID
                do { group = try GroupID(rawRepresentation: Array(bytes[offset + 1 ..< offset + 1 + length])) } catch { throw .invalidMessage }
                let chainStart = offset + 1 + length
                failure = .group(
                    group, chainID: Array(bytes[chainStart ..< chainStart + 32]), iteration: bytes.readBigEndianUInt32(at: chainStart + 32))
                offset = chainStart + 36
            default:
                throw .invalidMessage
            }
            guard bytes.count - offset == 32 + RetryNoticeKey.macByteCount else { throw .invalidMessage }
            guard let id = RegistrationID(rawValue: rawID) else { throw .invalidMessage }
            registrationID = id
            identityKeyRange = offset ..< offset + 32
        }

        /// The range of an `Encode(address)` at `offset` (a u8 length of 1–255, the user id, a
        /// u32 device id), moving `offset` past it.
        private static func address(in bytes: [UInt8], at offset: inout Int) throws(SessionError) -> Range<Int> {
            guard offset < bytes.count else { throw .invalidMessage }
            let length = Int(bytes[offset])
            guard length > 0, bytes.count - offset >= 1 + length + 4 else { throw .invalidMessage }
            defer { offset += 1 + length + 4 }
            return offset ..< offset + 1 + length + 4
        }
    }
}
