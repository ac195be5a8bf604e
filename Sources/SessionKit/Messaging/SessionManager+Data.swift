#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The manager's calls for `Data`, as iOS code holds bytes. Each copies the bytes and calls the
/// `[UInt8]` form, with the same behaviour and errors.
extension SessionManager {
    /// `encrypt(_:to:)` for `Data`.
    public func encrypt(_ plaintext: Data, to address: ProtocolAddress) async throws(SessionError) -> [UInt8] {
        try await encrypt([UInt8](plaintext), to: address)
    }

    /// `encryptEnvelope(_:to:)` for `Data`.
    public func encryptEnvelope(_ plaintext: Data, to address: ProtocolAddress) async throws(SessionError) -> MessageEnvelope {
        try await encryptEnvelope([UInt8](plaintext), to: address)
    }

    /// `encrypt(_:toUser:devices:includingOwnDevices:)` for `Data`.
    public func encrypt(
        _ plaintext: Data, toUser userID: String, devices: [UInt32]? = nil, includingOwnDevices: Bool = false
    ) async throws(SessionError) -> [DeviceEncryption] {
        try await encrypt([UInt8](plaintext), toUser: userID, devices: devices, includingOwnDevices: includingOwnDevices)
    }

    /// `decrypt(_:from:)` for `Data`.
    public func decrypt(_ bytes: Data, from address: ProtocolAddress) async throws(SessionError) -> DecryptedMessage {
        try await decrypt([UInt8](bytes), from: address)
    }

    /// `groupEncrypt(_:for:)` for `Data`.
    public func groupEncrypt(_ plaintext: Data, for group: GroupID) async throws(SessionError) -> [UInt8] {
        try await groupEncrypt([UInt8](plaintext), for: group)
    }

    /// `groupEncryptEnvelope(_:for:)` for `Data`.
    public func groupEncryptEnvelope(_ plaintext: Data, for group: GroupID) async throws(SessionError) -> MessageEnvelope {
        try await groupEncryptEnvelope([UInt8](plaintext), for: group)
    }

    /// `groupDecrypt(_:for:from:)` for `Data`.
    public func groupDecrypt(_ bytes: Data, for group: GroupID, from sender: ProtocolAddress) async throws(SessionError) -> [UInt8] {
        try await groupDecrypt([UInt8](bytes), for: group, from: sender)
    }
}
