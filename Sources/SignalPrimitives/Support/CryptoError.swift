/// The errors thrown by `SignalPrimitives`.
///
/// Every entry point validates its inputs and throws one of these instead of trapping.
public enum CryptoError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// `sodium_init()` failed; no primitive can be used.
    case libraryInitializationFailed
    /// A key had the wrong number of bytes.
    case invalidKeyLength(expected: Int, actual: Int)
    /// A nonce had the wrong number of bytes.
    case invalidNonceLength(expected: Int, actual: Int)
    /// A signature had the wrong number of bytes.
    case invalidSignatureLength(expected: Int, actual: Int)
    /// A key is unusable: an all-zero Diffie–Hellman output, a point that is not
    /// canonical, not on the curve, of small order or outside the prime-order subgroup.
    case invalidKey
    /// An AEAD ciphertext or tag did not authenticate.
    case authenticationFailure
    /// A ciphertext is shorter than its authentication tag.
    case ciphertextTooShort(minimum: Int, actual: Int)
    /// A message is longer than the primitive accepts.
    case messageTooLong(maximum: Int, actual: Int)
    /// AES-256-GCM is not available: libsodium offers it only on CPUs with AES-NI and PCLMUL.
    case aesGCMUnavailable
    /// A key-derivation output length outside what the primitive can produce.
    case invalidOutputLength(requested: Int, maximum: Int)
    /// A caller-supplied output buffer is too small.
    case bufferTooSmall(required: Int, actual: Int)
    /// The linked libsodium accepts mixed-order Ed25519 points in its point validation
    /// (CVE-2025-69277, fixed in releases after 2025-12-30 and in Debian's 1.0.18-1+deb12u1):
    /// operations that validate points refuse to run on it. Update libsodium.
    case unsoundPointValidation
    /// A key-encapsulation operation failed inside its implementation.
    case kemFailure
    /// A key derivation (scrypt) could not run: its parameters are outside the function's
    /// domain, or the memory it needs could not be allocated.
    case keyDerivationFailed

    /// A short, secret-free description of the error.
    public var description: String {
        switch self {
        case .libraryInitializationFailed: return "libsodium failed to initialise"
        case let .invalidKeyLength(e, a): return "invalid key length: expected \(e) bytes, got \(a)"
        case let .invalidNonceLength(e, a): return "invalid nonce length: expected \(e) bytes, got \(a)"
        case let .invalidSignatureLength(e, a): return "invalid signature length: expected \(e) bytes, got \(a)"
        case .invalidKey: return "invalid key"
        case .authenticationFailure: return "authentication failed"
        case let .ciphertextTooShort(m, a): return "ciphertext too short: at least \(m) bytes needed, got \(a)"
        case let .messageTooLong(m, a): return "message too long: at most \(m) bytes, got \(a)"
        case .aesGCMUnavailable: return "AES-256-GCM is unavailable on this CPU (libsodium needs AES-NI and PCLMUL)"
        case let .invalidOutputLength(r, m): return "invalid output length \(r): at most \(m) bytes"
        case let .bufferTooSmall(r, a): return "output buffer too small: \(r) bytes needed, got \(a)"
        case .unsoundPointValidation:
            return "the linked libsodium accepts mixed-order Ed25519 points (CVE-2025-69277): update libsodium"
        case .kemFailure: return "the key-encapsulation mechanism failed"
        case .keyDerivationFailed: return "the key derivation failed (parameters out of range or memory unavailable)"
        }
    }
}
