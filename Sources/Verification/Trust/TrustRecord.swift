import SessionKit

/// What a trust store holds for one user: the user's identity key (shared by all of the user's
/// devices), its status, the devices seen with it, and the keys the app replaced.
///
/// The transitions (`observing`, `decision`, `verifying`, `accepting`, `clearingVerification`)
/// are the rules every `TrustStore` applies, so that the in-memory and the SQLite store cannot
/// drift apart.
public struct TrustRecord: Equatable, Hashable, Sendable {
    /// The most devices a record lists; beyond it the device seen first is dropped (it is then
    /// reported as new if seen again).
    public static let maximumDeviceCount = 256
    /// The most superseded keys a record keeps, most recent first.
    public static let maximumSupersededKeyCount = 16

    /// The user's latest identity key.
    public let identityKey: Ed25519.PublicKey
    /// The user's trust status.
    public let status: TrustStatus
    /// The key recorded before the latest change, while that change awaits acceptance
    /// (present exactly when `status` is `.unverified`).
    public let previousIdentityKey: Ed25519.PublicKey?
    /// The device ids seen with `identityKey`, in the order they were first seen (at most
    /// `maximumDeviceCount`).
    public let devices: [UInt32]
    /// Keys the user had before the app accepted another (`accepting`, `verifying` a changed
    /// key), most recent first: messages under them are refused. Never holds `identityKey`.
    public let supersededIdentityKeys: [Ed25519.PublicKey]

    /// Creates a record.
    public init(
        identityKey: Ed25519.PublicKey, status: TrustStatus, previousIdentityKey: Ed25519.PublicKey?,
        devices: [UInt32] = [], supersededIdentityKeys: [Ed25519.PublicKey] = []
    ) {
        self.identityKey = identityKey
        self.status = status
        self.previousIdentityKey = previousIdentityKey
        self.devices = devices
        self.supersededIdentityKeys = supersededIdentityKeys
    }

    /// Whether the key changed and the app has not accepted the new key: sending is refused.
    public var isAwaitingAcceptance: Bool { status == .unverified }

    /// Whether encrypting to `key` is allowed: it is the key on record and no change awaits
    /// acceptance.
    public func allowsSending(to key: Ed25519.PublicKey) -> Bool {
        !isAwaitingAcceptance && key == identityKey
    }

    // MARK: Transitions

    /// What seeing `key` on `device` does to `record` (`nil`: no record for the user): the
    /// record to store (`nil` when nothing changes) and the observation. The first key is
    /// trusted; the user's key on a new device adds the device; another key replaces the
    /// user's, unverified, awaiting acceptance (the devices start again from `device`).
    public static func observing(
        _ key: Ed25519.PublicKey, device: UInt32, in record: TrustRecord?
    ) -> (next: TrustRecord?, observation: IdentityObservation) {
        guard let record else {
            return (TrustRecord(identityKey: key, status: .trusted, previousIdentityKey: nil, devices: [device]), .firstUse)
        }
        if record.identityKey == key {
            if record.devices.contains(device) { return (nil, .unchanged) }
            return (record.adding(device: device), .newDevice)
        }
        let next = TrustRecord(
            identityKey: key, status: .unverified, previousIdentityKey: record.identityKey, devices: [device],
            supersededIdentityKeys: record.supersededIdentityKeys.filter { $0 != key })
        return (next, .changed(previous: record.identityKey))
    }

    /// SessionKit's check of `key` on `device` against `record`: what `observing` would report
    /// and whether sending is allowed; whether the user is verified; whether `key` is superseded.
    public static func decision(for key: Ed25519.PublicKey, device: UInt32, in record: TrustRecord?) -> TrustDecision {
        guard let record else { return TrustDecision(observation: .firstUse, allowsSending: true) }
        let verified = record.status == .verified
        guard record.identityKey == key else {
            return TrustDecision(
                observation: .changed(previous: record.identityKey), allowsSending: false, isVerified: verified,
                isSuperseded: record.supersededIdentityKeys.contains(key))
        }
        return TrustDecision(
            observation: record.devices.contains(device) ? .unchanged : .newDevice,
            allowsSending: record.allowsSending(to: key), isVerified: verified)
    }

    /// The record once the user verified `key` (the safety number was compared or the QR code
    /// scanned): recorded if no key was; verifying the new key after a change also accepts it
    /// (the former key is superseded).
    /// - Throws: `VerificationError.identityKeyMismatch` when another key is on record.
    public static func verifying(_ key: Ed25519.PublicKey, of userID: String, in record: TrustRecord?) throws(VerificationError) -> TrustRecord {
        guard let record else { return TrustRecord(identityKey: key, status: .verified, previousIdentityKey: nil) }
        guard record.identityKey == key else { throw .identityKeyMismatch(userID) }
        return TrustRecord(
            identityKey: key, status: .verified, previousIdentityKey: nil, devices: record.devices,
            supersededIdentityKeys: superseding(record.previousIdentityKey, in: record.supersededIdentityKeys, keeping: key))
    }

    /// The record once the app accepted `key` for the user: with no record, `key` is trusted;
    /// the key on record ends a pending change (the former key is superseded; `nil` when
    /// nothing awaits acceptance); another key, while no change awaits acceptance (a
    /// quarantined message's key), replaces the user's, trusted, and supersedes it.
    /// - Throws: `VerificationError.identityKeyMismatch` when a change to another key awaits
    ///   acceptance (the key changed again since the app asked the user).
    public static func accepting(_ key: Ed25519.PublicKey, of userID: String, in record: TrustRecord?) throws(VerificationError) -> TrustRecord? {
        guard let record else { return TrustRecord(identityKey: key, status: .trusted, previousIdentityKey: nil) }
        if record.identityKey == key {
            guard record.isAwaitingAcceptance else { return nil }
            return TrustRecord(
                identityKey: key, status: .trusted, previousIdentityKey: nil, devices: record.devices,
                supersededIdentityKeys: superseding(record.previousIdentityKey, in: record.supersededIdentityKeys, keeping: key))
        }
        guard !record.isAwaitingAcceptance else { throw .identityKeyMismatch(userID) }
        return TrustRecord(
            identityKey: key, status: .trusted, previousIdentityKey: nil, devices: [],
            supersededIdentityKeys: superseding(record.identityKey, in: record.supersededIdentityKeys, keeping: key))
    }

    /// The record with verification withdrawn (`verified` → `trusted`; `nil`: nothing changes).
    public var clearingVerification: TrustRecord? {
        guard status == .verified else { return nil }
        return TrustRecord(
            identityKey: identityKey, status: .trusted, previousIdentityKey: nil, devices: devices,
            supersededIdentityKeys: supersededIdentityKeys)
    }

    /// This record with `device` added (the device seen first dropped beyond the limit).
    private func adding(device: UInt32) -> TrustRecord {
        var devices = devices + [device]
        if devices.count > Self.maximumDeviceCount { devices.removeFirst(devices.count - Self.maximumDeviceCount) }
        return TrustRecord(
            identityKey: identityKey, status: status, previousIdentityKey: previousIdentityKey, devices: devices,
            supersededIdentityKeys: supersededIdentityKeys)
    }

    /// `keys` with `replaced` put first (when given), without `kept`, bounded.
    private static func superseding(
        _ replaced: Ed25519.PublicKey?, in keys: [Ed25519.PublicKey], keeping kept: Ed25519.PublicKey
    ) -> [Ed25519.PublicKey] {
        var result = keys.filter { $0 != kept && $0 != replaced }
        if let replaced, replaced != kept { result.insert(replaced, at: 0) }
        return Array(result.prefix(maximumSupersededKeyCount))
    }
}
