import SignalPrimitives

/// The errors of the age v1 implementation (`AgeEncryptor`, `AgeDecryptor`, their streams,
/// identities and recipients).
///
/// The first five cases are the failure categories of the C2SP/CCTV age test vectors, so an
/// app can tell a damaged file from a wrong key: `header` ("header failure"), `noMatch`
/// ("no match"), `headerMAC` ("HMAC failure"), `payload` ("payload failure") and `armor`
/// ("armor failure"). The `String` of a case is a short reason for logs; it never holds a key,
/// a passphrase or plaintext.
public enum AgeError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The header does not parse (C2SP `age.md`'s ABNF: the version line, the stanzas, canonical
    /// base64, 64-column bodies, the MAC line), or a stanza addressed to one of the identities is
    /// malformed: wrong arguments, a wrapped file key that is not 16 bytes, an X25519 share that
    /// gives an all-zero secret, an scrypt stanza next to other stanzas. Also a file that ends
    /// before its payload nonce. (A header over a reader limit is `resourceLimit`.)
    case header(String)
    /// The header parses, but none of the identities unwraps any of its stanzas: a wrong key or
    /// passphrase, or a file for other recipients (including `mlkem768x25519` stanzas without
    /// SessionKitMLKEM's `AgeHybridIdentity`).
    case noMatch
    /// A file key was unwrapped, but the header's MAC does not match it: the header was changed.
    case headerMAC
    /// The payload does not decrypt to its end: a chunk whose tag fails, a truncated file, a
    /// missing or repeated final chunk, an empty final chunk, or data after the final chunk.
    /// A stream has released only the chunks that verified before it.
    case payload(String)
    /// The ASCII armor is not the strict PEM encoding `age.md` requires.
    case armor(String)
    /// An identity string (`AGE-SECRET-KEY-1…`) or passphrase that cannot be used.
    case invalidIdentity(String)
    /// A recipient string (`age1…`) or recipient list that cannot be used: no recipients, an
    /// scrypt recipient next to others, a public key that gives an all-zero secret.
    case invalidRecipient(String)
    /// A stream was used after it finished or failed.
    case streamClosed
    /// A file could not be read, written or renamed (the path and the system's reason).
    case file(String)
    /// A primitive failed for a reason not caused by the input (libsodium unusable, or its
    /// allocation for scrypt failed although the memory check passed).
    case primitive(CryptoError)
    /// The file asks for more than the reader spends, and was refused before the work: more
    /// recipient stanzas than `AgeDecryptor.maximumStanzaCount`, an scrypt work factor above the
    /// identity's `maximumWorkFactor`, or scrypt memory the process cannot have. In the C2SP/CCTV
    /// categories this is a header failure (the `age` tool refuses such headers too).
    case resourceLimit(AgeResourceLimit)

    /// A short description without secrets.
    public var description: String {
        switch self {
        case let .header(why): return "header failure: \(why)"
        case .noMatch: return "no match: no identity unwraps a recipient stanza"
        case .headerMAC: return "HMAC failure: the header MAC does not match"
        case let .payload(why): return "payload failure: \(why)"
        case let .armor(why): return "armor failure: \(why)"
        case let .invalidIdentity(why): return "invalid identity: \(why)"
        case let .invalidRecipient(why): return "invalid recipient: \(why)"
        case .streamClosed: return "the stream has already finished or failed"
        case let .file(why): return "file error: \(why)"
        case let .primitive(error): return "primitive failure: \(error)"
        case let .resourceLimit(limit): return "resource limit: \(limit)"
        }
    }
}
