import SignalPrimitives

/// Fan-out: one message to every device of a user (and to the local user's other devices),
/// each device with its own session and outcome.
extension SessionManager {
    /// Encrypts `plaintext` for the devices of `userID`, each as `encrypt(_:to:)` does,
    /// concurrently; with `includingOwnDevices`, also for this user's other devices that have a
    /// session (live copies of what the user sends, SPEC §6: keep self-encryption for what
    /// future devices must read). Returns one outcome per device, by user (the recipient
    /// first) and ascending device id, each with its `envelope`.
    ///
    /// Which devices: the manager knows only the devices it has sessions with. Pass `devices`,
    /// the user's current device list from your server, and every listed device gets an
    /// outcome: `.failure(.noSession)` for one without a session (fetch its bundle, call
    /// `processBundle(_:for:)`, encrypt to it again), while a device with a session that is not
    /// listed (removed from the account) is not encrypted to. Without `devices`, the outcomes
    /// are exactly the devices with a stored record, and a device without one is silently
    /// not reached (a device whose record holds no current session, because a retry notice
    /// archived it or because it only sent a message this device could not decrypt, gets
    /// `.failure(.noSession)`).
    ///
    /// Devices are independent: one device failing (`untrustedIdentity`, `noSession`, a store
    /// error) leaves that device's session unchanged and does not stop the others, whose
    /// sessions advance and whose messages should be sent. The app decides what to do about the
    /// failed ones (for example ask the user to accept a changed key, then encrypt again to
    /// that device only).
    /// - Throws: `SessionError.storage` only when the devices cannot be listed;
    ///   `.invalidAddress` for a user id that is not 1–255 UTF-8 bytes; `.invalidConfiguration`
    ///   for a plaintext over `maximumEnvelopePlaintextByteCount` bytes (nothing encrypted).
    public func encrypt(
        _ plaintext: [UInt8], toUser userID: String, devices: [UInt32]? = nil, includingOwnDevices: Bool = false
    ) async throws(SessionError) -> [DeviceEncryption] {
        // The user id is checked first, so that a malformed one is an error, not an empty result.
        _ = try ProtocolAddress(userID: userID, deviceID: 0)
        try Self.checkEnvelopeSize(plaintext)
        var addresses: [ProtocolAddress] = []
        let recipientDevices: [UInt32]
        if let devices { recipientDevices = Array(Set(devices)).sorted() } else { recipientDevices = try await store.deviceIDs(ofUser: userID) }
        for device in recipientDevices {
            addresses.append(try ProtocolAddress(userID: userID, deviceID: device))
        }
        if includingOwnDevices, !Array(userID.utf8).elementsEqual(localAddress.userIDBytes) {
            for device in try await store.deviceIDs(ofUser: localAddress.userID) where device != localAddress.deviceID {
                addresses.append(try ProtocolAddress(userID: localAddress.userID, deviceID: device))
            }
        } else if includingOwnDevices {
            addresses.removeAll { $0 == localAddress }
        }
        return await encryptConcurrently(to: addresses) { address async throws(SessionError) -> [UInt8] in
            try await self.encrypt(plaintext, to: address)
        }
    }

    /// Encrypts `plaintext` to every device your server lists for `userID` (`devices`) and for
    /// the local user (`ownDevices`, this device left out), starting a session from
    /// `bundle(for:)` with each listed device that has none, so that one call reaches every
    /// device, new ones included. Returns one outcome per listed device, by user (the recipient
    /// first) and ascending device id, each with its `envelope`; a device with a session that
    /// is not listed is not encrypted to.
    ///
    /// Trust per user decides who receives: a bundle or session under another key than the
    /// user's on record is `untrustedIdentity` (and for the local user's devices, any key but
    /// the local identity key is `ownDeviceIdentityMismatch`), so a device the server added
    /// with a key of its own receives nothing. Per device: `bundle` returning `nil` is
    /// `noSession` (the server has no bundle for it); `bundle` throwing is `storage` (with the
    /// error's description); the errors of `processBundle(_:for:)` and `encrypt(_:to:)`.
    /// Devices are independent: one failing leaves the others' sessions advanced and their
    /// messages to send.
    /// - Throws: `SessionError.invalidAddress` for a user id that is not 1–255 UTF-8 bytes;
    ///   `.invalidConfiguration` for a plaintext over `maximumEnvelopePlaintextByteCount` bytes
    ///   (nothing encrypted).
    public func encrypt(
        _ plaintext: [UInt8], toUser userID: String, devices: [UInt32], ownDevices: [UInt32] = [],
        fetchingBundles bundle: @escaping @Sendable (ProtocolAddress) async throws -> PreKeyBundle?
    ) async throws(SessionError) -> [DeviceEncryption] {
        _ = try ProtocolAddress(userID: userID, deviceID: 0)
        try Self.checkEnvelopeSize(plaintext)
        var addresses: [ProtocolAddress] = []
        for device in Set(devices).sorted() {
            let address = try ProtocolAddress(userID: userID, deviceID: device)
            if address != localAddress { addresses.append(address) }
        }
        if !Array(userID.utf8).elementsEqual(localAddress.userIDBytes) {
            for device in Set(ownDevices).sorted() where device != localAddress.deviceID {
                addresses.append(try ProtocolAddress(userID: localAddress.userID, deviceID: device))
            }
        }
        return await encryptConcurrently(to: addresses) { address async throws(SessionError) -> [UInt8] in
            try await self.ensureSession(with: address, fetchingBundle: bundle)
            return try await self.encrypt(plaintext, to: address)
        }
    }

    /// Runs `encryptTo` for every address concurrently (devices are independent) and returns
    /// one outcome per address, in the order of `addresses`.
    private func encryptConcurrently(
        to addresses: [ProtocolAddress], _ encryptTo: @escaping @Sendable (ProtocolAddress) async throws(SessionError) -> [UInt8]
    ) async -> [DeviceEncryption] {
        let order = Dictionary(addresses.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let sender = localAddress
        let outcomes = await withTaskGroup(of: DeviceEncryption.self) { group in
            for address in addresses {
                group.addTask {
                    do throws(SessionError) {
                        return DeviceEncryption(from: sender, to: address, group: nil, result: .success(try await encryptTo(address)))
                    } catch {
                        return DeviceEncryption(from: sender, to: address, group: nil, result: .failure(error))
                    }
                }
            }
            var outcomes: [DeviceEncryption] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        return outcomes.sorted { (order[$0.address] ?? 0) < (order[$1.address] ?? 0) }
    }

    /// Starts a session with `address` from `bundle(address)` when it has no current session.
    private func ensureSession(
        with address: ProtocolAddress, fetchingBundle bundle: @Sendable (ProtocolAddress) async throws -> PreKeyBundle?
    ) async throws(SessionError) {
        guard try await loadSession(for: address)?.remoteIdentityKey == nil else { return }
        let fetched: PreKeyBundle?
        do { fetched = try await bundle(address) } catch { throw .storage("bundle for \(address): \(error)") }
        guard let fetched else { throw .noSession }
        try await processBundle(fetched, for: address)
    }
}
