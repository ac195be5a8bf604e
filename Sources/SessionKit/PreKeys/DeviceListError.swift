#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why `DeviceDirectory.check(_:excludingSenderDevice:)` refused a send request as malformed
/// (as opposed to a request that names the wrong devices, which is a `DeviceListMismatch`).
/// A relay answers it as a bad request.
public enum DeviceListError: Error, Equatable, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// A request for the sender's own user names the sending device itself (`device`): a device
    /// never sends to itself, and the sender's device is never reported missing.
    case namesSendingDevice(UInt32)
    /// The request names more than `limit` devices (`DeviceDirectory.maximumRequestedDevices`).
    case tooManyDevices(limit: Int)

    /// A short description (device ids only).
    public var description: String {
        switch self {
        case let .namesSendingDevice(device): return "the request names the sending device \(device)"
        case let .tooManyDevices(limit): return "the request names more than \(limit) devices"
        }
    }

    /// The description as a sentence.
    public var errorDescription: String? { "Device list refused: \(description)." }
}
