import SessionKit

/// What a trust store holds for one user: the user's identity key (shared by all of the user's
/// devices), its status, the devices seen with it, and the keys the app replaced.
///
/// The transitions (`observing`, `decision`, `verifying`, `accepting`, `rejecting`,
/// `clearingVerification`) are the rules every `TrustStore` applies, so that the in-memory and
/// the SQLite store cannot drift apart.
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
    /// While a change awaits acceptance, the key the app last accepted, which the change would
    /// replace (present exactly when `status` is `.unverified`): rejecting the change, or
    /// accepting this key, restores it.
    public let previousIdentityKey: Ed25519.PublicKey?
    /// The user's device ids seen with the user's key, in the order they were first seen (at
    /// most `maximumDeviceCount`). A change seen on a listed device keeps them listed (they are
    /// the user's, whichever key is accepted); another key on a device not listed here is not
    /// a change of the user's key (`IdentityObservation.unknownDeviceWithOtherKey`).
    public let devices: [UInt32]
    /// Keys the user had before the app accepted a change seen on a listed device, or verified
    /// another key (`accepting`, `verifying`), most recent first: messages under them are
    /// refused. Never holds `identityKey`.
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
    /// record to store (`nil` when nothing changes) and the observation.
    ///
    /// - No record: the key is trusted on first use.
    /// - The user's key: on a listed device nothing changes; on another device the device is
    ///   added (`newDevice`).
    /// - While a change awaits acceptance, the key it would replace (`previousIdentityKey`):
    ///   nothing changes (`changed`; either key may still be accepted, `accepting`).
    /// - Another key on a device the record does not list, while it lists devices: nothing
    ///   changes (`unknownDeviceWithOtherKey`). The user's listed devices still present the
    ///   recorded key, so this is not a change of the user's key (it may be an injected
    ///   message); the app can still accept the key (`accepting`), as for a reinstall that
    ///   came back under a new device id.
    /// - Another key on a listed device (or while no device is listed): a change of the user's
    ///   key, unverified, awaiting acceptance. The devices stay listed (they are the user's,
    ///   whichever key is accepted); `previousIdentityKey` is the key the app last accepted (a
    ///   second change before the app answered replaces the first, not the accepted key).
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
        if record.isKeyBeforePendingChange(key) { return (nil, .changed(previous: record.identityKey)) }
        if !record.devices.isEmpty, !record.devices.contains(device) {
            return (nil, .unknownDeviceWithOtherKey(recorded: record.identityKey))
        }
        let listed = record.devices.contains(device) ? record.devices : record.adding(device: device).devices
        let next = TrustRecord(
            identityKey: key, status: .unverified, previousIdentityKey: record.previousIdentityKey ?? record.identityKey,
            devices: listed, supersededIdentityKeys: record.supersededIdentityKeys.filter { $0 != key })
        return (next, .changed(previous: record.identityKey))
    }

    /// SessionKit's check of `key` on `device` against `record`: what `observing` would report
    /// and whether sending is allowed; whether the user is verified; whether `key` is
    /// superseded; whether it is the key a pending change would replace.
    public static func decision(for key: Ed25519.PublicKey, device: UInt32, in record: TrustRecord?) -> TrustDecision {
        guard let record else { return TrustDecision(observation: .firstUse, allowsSending: true) }
        let verified = record.status == .verified
        guard record.identityKey == key else {
            return TrustDecision(
                observation: observing(key, device: device, in: record).observation, allowsSending: false, isVerified: verified,
                isSuperseded: record.supersededIdentityKeys.contains(key), isKeyBeforePendingChange: record.isKeyBeforePendingChange(key))
        }
        return TrustDecision(
            observation: record.devices.contains(device) ? .unchanged : .newDevice,
            allowsSending: record.allowsSending(to: key), isVerified: verified)
    }

    /// The record once the user verified `key` (compared the safety number for it, or scanned
    /// the QR code carrying it): verifying is accepting and marking verified in one step.
    /// With no record, `key` is recorded verified. The key on record becomes verified (after a
    /// change, the key it replaced is superseded). While a change awaits acceptance, the key it
    /// would replace is restored, verified (the pending key is dropped, not superseded).
    /// Another key (a verified contact's reinstall, whose messages were quarantined) replaces
    /// the user's, verified, and the keys it replaces are superseded: the user confirmed that
    /// the contact's key is now `key`. The devices stay listed.
    public static func verifying(_ key: Ed25519.PublicKey, of userID: String, in record: TrustRecord?) -> TrustRecord {
        guard let record else { return TrustRecord(identityKey: key, status: .verified, previousIdentityKey: nil) }
        if record.identityKey == key {
            return TrustRecord(
                identityKey: key, status: .verified, previousIdentityKey: nil, devices: record.devices,
                supersededIdentityKeys: superseding(record.previousIdentityKey, in: record.supersededIdentityKeys, keeping: key))
        }
        if record.isKeyBeforePendingChange(key) { return record.restoringKeyBeforeChange(status: .verified) }
        let superseded = superseding(record.previousIdentityKey, in: record.supersededIdentityKeys, keeping: key)
        return TrustRecord(
            identityKey: key, status: .verified, previousIdentityKey: nil, devices: record.devices,
            supersededIdentityKeys: superseding(record.identityKey, in: superseded, keeping: key))
    }

    /// The record once the app accepted `key` for the user:
    ///
    /// - No record: `key` is trusted.
    /// - The key on record: ends a pending change (the key it replaced is superseded); `nil`
    ///   when nothing awaits acceptance.
    /// - While a change awaits acceptance, the key it would replace: restored, trusted (the
    ///   pending key is dropped, not superseded), as `rejecting` does.
    /// - Another key while no change awaits acceptance (a quarantined message's key, such as a
    ///   reinstall under a new device id): replaces the user's, trusted. The replaced key is
    ///   not superseded, because the user's listed devices were never seen leaving it: if they
    ///   still present it, their messages are reported (quarantined, or a change awaiting
    ///   acceptance), never silently refused. The devices stay listed.
    /// - Throws: `VerificationError.identityKeyMismatch` for a third key while a change awaits
    ///   acceptance (the key changed again since the app asked the user).
    public static func accepting(_ key: Ed25519.PublicKey, of userID: String, in record: TrustRecord?) throws(VerificationError) -> TrustRecord? {
        guard let record else { return TrustRecord(identityKey: key, status: .trusted, previousIdentityKey: nil) }
        if record.identityKey == key {
            guard record.isAwaitingAcceptance else { return nil }
            return TrustRecord(
                identityKey: key, status: .trusted, previousIdentityKey: nil, devices: record.devices,
                supersededIdentityKeys: superseding(record.previousIdentityKey, in: record.supersededIdentityKeys, keeping: key))
        }
        if record.isKeyBeforePendingChange(key) { return record.restoringKeyBeforeChange(status: .trusted) }
        guard !record.isAwaitingAcceptance else { throw .identityKeyMismatch(userID) }
        return TrustRecord(
            identityKey: key, status: .trusted, previousIdentityKey: nil, devices: record.devices,
            supersededIdentityKeys: record.supersededIdentityKeys.filter { $0 != key })
    }

    /// The record once the app rejected a pending change: the key it would replace is restored,
    /// trusted, and the pending key dropped (not superseded: if it shows up again, it is
    /// reported again). `nil` when no change awaits acceptance (nothing changes).
    /// - Throws: `VerificationError.unknownContact` when there is no record.
    public static func rejecting(of userID: String, in record: TrustRecord?) throws(VerificationError) -> TrustRecord? {
        guard let record else { throw .unknownContact(userID) }
        guard record.isAwaitingAcceptance, record.previousIdentityKey != nil else { return nil }
        return record.restoringKeyBeforeChange(status: .trusted)
    }

    /// The record with verification withdrawn (`verified` → `trusted`; `nil`: nothing changes).
    public var clearingVerification: TrustRecord? {
        guard status == .verified else { return nil }
        return TrustRecord(
            identityKey: identityKey, status: .trusted, previousIdentityKey: nil, devices: devices,
            supersededIdentityKeys: supersededIdentityKeys)
    }

    /// Whether `key` is the key a pending change would replace (`previousIdentityKey` while a
    /// change awaits acceptance).
    public func isKeyBeforePendingChange(_ key: Ed25519.PublicKey) -> Bool {
        isAwaitingAcceptance && previousIdentityKey == key
    }

    /// This record with the key before its pending change back, with `status`, the pending key
    /// dropped (not superseded) and the devices kept. Only for a record awaiting acceptance.
    private func restoringKeyBeforeChange(status: TrustStatus) -> TrustRecord {
        let restored = previousIdentityKey ?? identityKey
        return TrustRecord(
            identityKey: restored, status: status, previousIdentityKey: nil, devices: devices,
            supersededIdentityKeys: supersededIdentityKeys.filter { $0 != restored })
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
