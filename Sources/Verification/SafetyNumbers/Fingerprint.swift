import SignalPrimitives

/// A safety number between two parties (SPEC §7): the 60-digit number both parties compare
/// by eye, and the scannable form one party shows as a QR code for the other to scan.
public struct Fingerprint: Sendable, CustomStringConvertible {
    /// The 60-digit safety number (identical for both parties).
    public let displayable: DisplayableFingerprint
    /// The scannable form, as this (local) party encodes it.
    public let scannable: ScannableFingerprint

    /// Computes a fingerprint without caching; see `FingerprintGenerator` for the parameters.
    /// - Throws: `VerificationError.invalidIterations` unless 1 < `iterations` ≤ 1,000,000.
    @_spi(Testing) public init(version: UInt32, iterations: Int = FingerprintGenerator.defaultIterations,
                localIdentifier: [UInt8], localIdentityKey: [UInt8],
                remoteIdentifier: [UInt8], remoteIdentityKey: [UInt8]) throws(VerificationError) {
        let generator = try FingerprintGenerator(iterations: iterations, cacheCapacity: 0)
        self = generator.fingerprint(version: version,
                                     localIdentifier: localIdentifier, localIdentityKey: localIdentityKey,
                                     remoteIdentifier: remoteIdentifier, remoteIdentityKey: remoteIdentityKey)
    }

    /// Assembles a fingerprint from both parties' `H[0..<32]`.
    init(version: UInt32, localHash: [UInt8], remoteHash: [UInt8]) {
        displayable = DisplayableFingerprint(localDigits: FingerprintHash.digits(localHash),
                                             remoteDigits: FingerprintHash.digits(remoteHash))
        scannable = ScannableFingerprint(version: version, checkedLocal: localHash, checkedRemote: remoteHash)
    }

    /// The safety number in 12 groups of 5 digits.
    public var description: String { displayable.formatted }
}
