/// Device lists the server can check (SPEC §9), the sending side: the request that names the
/// registration id this device believes each of a user's devices has, and what to do with the
/// server's answer (`DeviceListMismatch`).
extension SessionManager {
    /// The send request for `userID`: each device of the user with a current session (the
    /// ones `encrypt(_:to:)` can reach; this device left out), with the registration id its
    /// session recorded (`registrationID(of:)`; `nil` for a peer that sets no flag bit 2).
    /// Give it to your server with the messages; a server with a `DeviceDirectory` answers it
    /// with a `DeviceListMismatch`. A device without a current session is not named (the server
    /// reports it missing, and the app fetches its bundle).
    /// - Throws: `SessionError.invalidAddress` for a user id that is not 1–255 UTF-8 bytes,
    ///   `.damagedState(.session)` when a stored record does not load, `.storage` when the
    ///   store fails.
    public func deviceListRequest(forUser userID: String) async throws(SessionError) -> [UInt32: RegistrationID?] {
        _ = try ProtocolAddress(userID: userID, deviceID: 0)
        var request: [UInt32: RegistrationID?] = [:]
        for device in try await store.deviceIDs(ofUser: userID) {
            let address = try ProtocolAddress(userID: userID, deviceID: device)
            guard address != localAddress, let session = try await loadSession(for: address)?.currentSession else { continue }
            request[device] = .some(session.remoteRegistrationID)
        }
        return request
    }

    /// Acts on the server's answer to a send request for `userID` (`DeviceListMismatch`):
    /// archives the current session of every stale and every extra device, and returns the
    /// devices to fetch bundles for (`DeviceListMismatch.devicesToFetch`: stale and missing,
    /// ascending). Then encrypt again with
    /// `encrypt(_:toUser:devices:ownDevices:fetchingBundles:)` and the server's device list: it
    /// starts a session from a fetched bundle with each device that has none.
    ///
    /// Archiving, not deleting, as Signal does: an archived session never becomes current
    /// again (the next message to the device needs a new bundle), but it still decrypts the
    /// messages the device sent before, and the device's record keeps its post-quantum pin and
    /// its recovery limits. So an answer the server invented costs new sessions and nothing
    /// else: the new bundle is checked against the trust record and the pin as every bundle is.
    /// The local device is never touched. Archiving the same answer twice changes nothing more.
    /// - Throws: `SessionError.invalidAddress` for a user id that is not 1–255 UTF-8 bytes,
    ///   `.damagedState(.session)` when a stored record does not load, `.storage` when the
    ///   store fails (the sessions archived before stay archived; call it again).
    @discardableResult
    public func applyDeviceListMismatch(_ mismatch: DeviceListMismatch, forUser userID: String) async throws(SessionError) -> [UInt32] {
        _ = try ProtocolAddress(userID: userID, deviceID: 0)
        for device in Set(mismatch.stale + mismatch.extra).sorted() {
            let address = try ProtocolAddress(userID: userID, deviceID: device)
            guard address != localAddress else { continue }
            try await archiveCurrentSession(with: address)
        }
        return mismatch.devicesToFetch.filter { (try? ProtocolAddress(userID: userID, deviceID: $0)) != localAddress }
    }

    /// Archives the current session with `address`, under its lock (nothing when it has none).
    private func archiveCurrentSession(with address: ProtocolAddress) async throws(SessionError) {
        try await exclusive(.peer(address)) { () async throws(SessionError) in
            try await retryingStaleState { () async throws(SessionError) in
                guard var record = try await loadSession(for: address), record.currentSession != nil else { return }
                record.archiveCurrentSessionForRetryNotice()
                var commit = StoreCommit()
                commit.store(record, for: address)
                try await store.commit(commit)
            }
        }
    }
}

extension SessionManager {
    /// Everything the server's refusal of a send to `userID` calls for, in one call (SPEC §9):
    /// applies `mismatch` (archives the stale and extra devices' sessions), starts sessions
    /// from `bundle(for:)` with the stale and missing devices, and sends again, returning one
    /// outcome per message to deliver, each with its `envelope`:
    ///
    /// - to a stale device back under the key its old session had (a restore, a reinstall that
    ///   kept the identity), the messages the send log kept for the archived session, oldest
    ///   first, the refused `plaintext` among them (`takeLoggedMessages` and
    ///   `resendLoggedMessages`, which hand nothing to a device under another key);
    /// - to every other device of `devices` (the server's list for the user, this device left
    ///   out), `plaintext`, as `encrypt(_:toUser:devices:fetchingBundles:)` does: a stale device
    ///   under a new key gets it once the user accepted the key (until then its outcome is
    ///   `untrustedIdentity`), never the old key's log.
    ///
    /// Send the outcomes' envelopes with a new device-list request (`deviceListRequest(forUser:)`);
    /// a device's failure is in its outcome and leaves the others' messages to send.
    /// - Throws: `SessionError.invalidAddress` for a user id that is not 1–255 UTF-8 bytes,
    ///   `.invalidConfiguration` for a plaintext over `maximumEnvelopePlaintextByteCount`
    ///   bytes, and the errors of `applyDeviceListMismatch(_:forUser:)` (nothing was sent then).
    public func recoverFromDeviceListMismatch(
        _ mismatch: DeviceListMismatch, forUser userID: String, devices: [UInt32], resending plaintext: [UInt8],
        fetchingBundles bundle: @escaping @Sendable (ProtocolAddress) async throws -> PreKeyBundle?
    ) async throws(SessionError) -> [DeviceEncryption] {
        try Self.checkEnvelopeSize(plaintext)
        try await applyDeviceListMismatch(mismatch, forUser: userID)
        var logged: [(ProtocolAddress, [SendLogEntry])] = []
        for device in Set(mismatch.stale).intersection(devices).sorted() {
            let address = try ProtocolAddress(userID: userID, deviceID: device)
            guard address != localAddress else { continue }
            // A device whose bundle fails here is reported by the encryption below.
            guard (try? await ensureSession(with: address, fetchingBundle: bundle)) != nil else { continue }
            let entries = (try? await takeLoggedMessages(ofArchivedSessionWith: address)) ?? []
            if !entries.isEmpty { logged.append((address, entries)) }
        }
        let fromLog = Set(logged.map(\.0.deviceID))
        var outcomes = try await encrypt(
            plaintext, toUser: userID, devices: devices.filter { !fromLog.contains($0) }, fetchingBundles: bundle)
        for (address, entries) in logged { outcomes += await resendLoggedMessages(entries, to: address) }
        return outcomes
    }
}
