/// What a server knows of one user's devices: each device id and the registration id (SPEC §9)
/// its published prekeys carry. It checks a send request that names, for each device the
/// sender encrypted to, the registration id the sender believes the device has
/// (`SessionManager.deviceListRequest(forUser:)`), and answers what is stale, missing and extra
/// (`DeviceListMismatch`), so that a relay can refuse the message before anything is lost:
///
///     var bob = DeviceDirectory(published)                 // [device id: PublishedPreKeys] of the user
///     let mismatch = try bob.check(request, excludingSenderDevice: nil)
///     if !mismatch.isEmpty { /* refuse the message, return `mismatch` to the sender */ }
///
/// Keep it beside the `PublishedPreKeys` of each device (or build it from them per request),
/// and update it when a device registers (`register(_:registrationID:)`, also after a
/// re-registration) or is removed from the account (`remove(_:)`). A user the server does not
/// know is an empty directory: every device a request names is extra.
///
/// The registration id is routing data, not an authenticator: this check keeps honest senders
/// from encrypting to installations that no longer exist; a server that lies in it can only make
/// senders start new sessions (which trust and the post-quantum pin still check).
public struct DeviceDirectory: Sendable, Hashable, CustomStringConvertible {
    /// The most devices one request may name (`DeviceListError.tooManyDevices` beyond it), so
    /// that an answer's size is bounded by what the server holds plus this.
    public static let maximumRequestedDevices = 1_000

    /// The devices, each with the registration id it published (`nil`: none, a device that sets
    /// no flag bit 2).
    private var devices: [UInt32: RegistrationID?]

    /// A directory without devices (a user the server does not know).
    public init() { devices = [:] }

    /// The directory of a user whose devices published `published` (by device id), each with
    /// the registration id it published.
    public init(_ published: [UInt32: PublishedPreKeys]) {
        devices = published.mapValues { $0.registrationID }
    }

    /// The device ids, ascending.
    public var deviceIDs: [UInt32] { devices.keys.sorted() }

    /// Whether `device` is one of the user's devices.
    public func contains(_ device: UInt32) -> Bool { devices[device] != nil }

    /// The registration id `device` published: `nil` for a device not held or one that
    /// published none (tell them apart with `contains(_:)`).
    public func registrationID(of device: UInt32) -> RegistrationID? { devices[device] ?? nil }

    /// Adds `device`, or records its new registration id after it registered again.
    public mutating func register(_ device: UInt32, registrationID: RegistrationID?) {
        devices[device] = .some(registrationID)
    }

    /// Removes `device` (removed from the account): a request that still names it gets it back
    /// as extra.
    public mutating func remove(_ device: UInt32) {
        devices[device] = nil
    }

    /// Checks a send request for this user: `request` names each device the sender encrypted
    /// to with the registration id it believes the device has (`nil`: the sender's session
    /// recorded none). Returns what does not match (`isEmpty` when the message is to be
    /// accepted):
    /// - stale: a named device whose registration id is not the published one, and a device
    ///   named with `nil` that published one (the sender cannot show its session is with the
    ///   current installation); a device that published none is never stale;
    /// - missing: a device of the user not named, except `senderDevice`;
    /// - extra: a named device the user does not have.
    ///
    /// Pass the sending device's id as `senderDevice` when the request is for the sender's own
    /// user (the copies a device sends to its user's other devices), `nil` otherwise. The check
    /// changes nothing: asking again gives the same answer.
    /// - Throws: `DeviceListError.namesSendingDevice` when `request` names `senderDevice`,
    ///   `.tooManyDevices` when it names more than `maximumRequestedDevices` devices.
    public func check(
        _ request: [UInt32: RegistrationID?], excludingSenderDevice senderDevice: UInt32?
    ) throws(DeviceListError) -> DeviceListMismatch {
        guard request.count <= Self.maximumRequestedDevices else { throw .tooManyDevices(limit: Self.maximumRequestedDevices) }
        if let senderDevice, request[senderDevice] != nil { throw .namesSendingDevice(senderDevice) }
        var stale: [UInt32] = []
        var extra: [UInt32] = []
        for (device, believed) in request {
            guard let published = devices[device] else {
                extra.append(device)
                continue
            }
            if let published, published != believed { stale.append(device) }
        }
        let missing = devices.keys.filter { $0 != senderDevice && request[$0] == nil }
        return DeviceListMismatch(stale: stale, missing: missing, extra: extra)
    }

    /// The number of devices (device ids are routing data, registration ids are left out).
    public var description: String { "DeviceDirectory(\(devices.count) devices)" }
}
