/// A server's answer to a send request that names the devices of a user and the registration
/// id the sender believes each has (SPEC §9), as `DeviceDirectory.check(_:excludingSenderDevice:)`
/// gives it: which devices the sender must deal with before the message is accepted, in the
/// manner of Signal's 409 (missing, extra) and 410 (stale) answers.
///
/// A relay refuses the message when it is not `isEmpty` and hands the answer to the sender,
/// whose `SessionManager.applyDeviceListMismatch(_:forUser:)` archives the sessions of the stale
/// and extra devices and returns the devices to fetch bundles for. Every list is ascending and
/// holds each device id once; a device is in at most one list.
public struct DeviceListMismatch: Sendable, Hashable, CustomStringConvertible {
    /// Devices the sender named with another registration id than the one the device
    /// published: the device was reinstalled or restored, and the sender's session with it is
    /// with an installation that no longer exists.
    public let stale: [UInt32]
    /// Devices of the user that the sender did not name (a new device, or one the sender has no
    /// session with).
    public let missing: [UInt32]
    /// Devices the sender named that the user no longer has (removed from the account).
    public let extra: [UInt32]

    /// An answer with these lists (as a relay's client decodes it from the relay's reply):
    /// each list sorted and without repeats. A device id in several lists is kept in the first
    /// of stale, missing, extra.
    public init(stale: [UInt32] = [], missing: [UInt32] = [], extra: [UInt32] = []) {
        let staleSet = Set(stale)
        let missingSet = Set(missing).subtracting(staleSet)
        self.stale = staleSet.sorted()
        self.missing = missingSet.sorted()
        self.extra = Set(extra).subtracting(staleSet).subtracting(missingSet).sorted()
    }

    /// Whether the request named exactly the user's devices with their current registration
    /// ids: the relay accepts the message.
    public var isEmpty: Bool { stale.isEmpty && missing.isEmpty && extra.isEmpty }

    /// The devices the sender must fetch a bundle for and start a new session with: the stale
    /// and the missing ones, ascending.
    public var devicesToFetch: [UInt32] { Set(stale + missing).sorted() }

    /// The lists (device ids are routing data, not secrets).
    public var description: String { "DeviceListMismatch(stale: \(stale), missing: \(missing), extra: \(extra))" }
}
