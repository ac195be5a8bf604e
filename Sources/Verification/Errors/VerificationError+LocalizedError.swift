import Foundation

extension VerificationError: LocalizedError {
    /// `description` as a sentence (never a key).
    public var errorDescription: String? { "Verification error: \(description)." }
}
