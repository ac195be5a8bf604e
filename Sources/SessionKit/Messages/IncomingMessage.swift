/// A received message of either kind, decoded by its type byte (SPEC §4).
@_spi(Testing) public enum IncomingMessage: Sendable, Hashable {
    /// A Double Ratchet message (type 0x21).
    case ratchet(RatchetMessage)
    /// A prekey message (type 0x22).
    case preKey(PreKeyMessage)

    /// Decodes `bytes`, running the checks of SPEC §4 that need no session: the type byte,
    /// then lengths and the prekey flag, then key canonicity.
    /// - Throws: `SessionError.invalidMessage` for an empty, short or inconsistent input,
    ///   `SessionError.unsupportedVersion` for an unknown type byte,
    ///   `SessionError.invalidKey` for a non-canonical X25519 key.
    public init(serialized bytes: [UInt8]) throws(SessionError) {
        switch bytes.first {
        case nil: throw .invalidMessage
        case WireType.ratchetMessage?: self = .ratchet(try RatchetMessage(serialized: bytes))
        case WireType.preKeyMessage?: self = .preKey(try PreKeyMessage(serialized: bytes))
        default: throw .unsupportedVersion
        }
    }

    /// The Double Ratchet message inside (the whole message, or the part after the prefix).
    public var ratchetMessage: RatchetMessage {
        switch self {
        case let .ratchet(message): return message
        case let .preKey(message): return message.message
        }
    }
}

extension IncomingMessage {
    /// Whether this is a prekey message (type 0x22).
    var isPreKeyMessage: Bool {
        if case .preKey = self { return true }
        return false
    }
}
