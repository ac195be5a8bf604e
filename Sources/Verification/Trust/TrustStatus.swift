/// How far an app trusts a contact's identity key (SPEC §7, trust on first use).
///
///     unverified ──first key seen──▶ trusted ──safety number compared / QR scanned──▶ verified
///         ▲                            │                                              │
///         └──────────── key changed ───┴──────────────────────────────────────────────┘
///
/// After a change seen on a listed device the contact stays `unverified`, and sending to it is
/// refused, until the app accepts either key (`acceptIdentityChange`, back to `trusted`),
/// rejects the change (`rejectIdentityChange`, the old key `trusted` again) or verifies a key
/// (`verified`). Another key on a device the record does not list changes no status.
public enum TrustStatus: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// No key is trusted: none seen yet, or the key changed and the app has not accepted it.
    case unverified = 0
    /// The key was recorded on first use (or a change was accepted) but not verified.
    case trusted = 1
    /// The user compared the safety number or scanned the contact's QR code for this key.
    case verified = 2

    /// The status name.
    public var description: String {
        switch self {
        case .unverified: return "unverified"
        case .trusted: return "trusted"
        case .verified: return "verified"
        }
    }
}
