import SignalPrimitives

/// An installation's registration id (SPEC §9): a random number, 1 … 2^31 − 1, drawn once when
/// the installation creates its store and never reused after a reinstall or a restore (a
/// restored device draws a new one).
///
/// It travels in flag bit 2 of the bundle and of the prekey prefix, and every session records
/// the peer's (`SessionManager.registrationID(of:)`). An app tells its server, for each device
/// it sends to, which registration id it believes the device has, so that the server can refuse
/// a message for a device that was reinstalled ("stale") before anything is lost. The id is
/// routing data, not a secret and not an authenticator: it is not signed in the bundle.
public struct RegistrationID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The range of valid ids: 1 … 2^31 − 1.
    public static let validRange: ClosedRange<UInt32> = 1 ... 0x7FFF_FFFF

    /// The id.
    public let rawValue: UInt32

    /// The id `rawValue`, or `nil` when it is 0 or above 2^31 − 1.
    public init?(rawValue: UInt32) {
        guard Self.validRange.contains(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A new random id, uniform over `validRange` but for a bias of at most 2^−31 (a u32 from
    /// `random` reduced modulo 2^31 − 1, plus 1): what an installation draws once, with its
    /// store (the system CSPRNG by default; pass another source only in tests).
    public static func random(using random: any RandomSource = SystemRandomSource()) -> RegistrationID {
        let bytes = random.bytes(4)
        let raw = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return RegistrationID(uncheckedRawValue: raw % validRange.upperBound + 1)
    }

    /// Wraps a value the caller has checked to be in `validRange`.
    init(uncheckedRawValue rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Orders ids by value.
    public static func < (a: RegistrationID, b: RegistrationID) -> Bool { a.rawValue < b.rawValue }

    /// The id in decimal.
    public var description: String { String(rawValue) }
}
