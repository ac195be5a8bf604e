import SignalPrimitives

/// The numeric safety number of SPEC §7: each party's 30-digit half, shown with the smaller
/// half (as strings) first so that both parties see the same 60 digits.
public struct DisplayableFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The number of digits shown.
    public static let digitCount = 60
    /// The number of digits per displayed group.
    public static let groupLength = 5

    /// The local party's 30 digits.
    public let localDigits: String
    /// The remote party's 30 digits.
    public let remoteDigits: String

    init(localDigits: String, remoteDigits: String) {
        self.localDigits = localDigits
        self.remoteDigits = remoteDigits
    }

    /// The 60 digits, the smaller half first (no spaces).
    public var digits: String {
        let local = Array(localDigits.utf8), remote = Array(remoteDigits.utf8)
        return remote.lexicographicallyPrecedes(local) ? remoteDigits + localDigits : localDigits + remoteDigits
    }

    /// The 60 digits as 12 groups of 5.
    public var groups: [String] {
        let all = Array(digits.utf8)
        return stride(from: 0, to: all.count, by: Self.groupLength).map {
            String(decoding: all[$0 ..< min($0 + Self.groupLength, all.count)], as: UTF8.self)
        }
    }

    /// The 12 groups separated by single spaces, for display.
    public var formatted: String { groups.joined(separator: " ") }

    /// The 60 digits.
    public var description: String { digits }

    /// Two safety numbers are equal when they show the same 60 digits (the local party's
    /// number equals the remote party's number for the same keys and identifiers), compared in
    /// constant time like every fingerprint comparison (SPEC §7).
    public static func == (lhs: DisplayableFingerprint, rhs: DisplayableFingerprint) -> Bool {
        ConstantTime.equals(Array(lhs.digits.utf8), Array(rhs.digits.utf8))
    }

    /// Hashes the 60 digits.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(digits)
    }
}
