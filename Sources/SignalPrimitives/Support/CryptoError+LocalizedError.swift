#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CryptoError: LocalizedError {
    /// `description` as a sentence (never a key or a plaintext).
    public var errorDescription: String? { "Cryptographic error: \(description)." }
}
