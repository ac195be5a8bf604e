import Foundation

extension QRPayload {
    /// Decodes a scanned payload from `Data` (what a camera API returns); as `init(decoding:)`.
    /// - Throws: the errors of `init(decoding:)`.
    public init(decoding data: Data) throws(VerificationError) {
        try self.init(decoding: [UInt8](data))
    }
}

extension ScannableFingerprint {
    /// `compare(serialized:)` for a scanned code held as `Data`.
    /// - Throws: the errors of `compare(serialized:)`.
    public func compare(serialized theirs: Data) throws(VerificationError) -> FingerprintComparison {
        try compare(serialized: [UInt8](theirs))
    }
}
