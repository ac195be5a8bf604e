/// A peer's device: sessions exist per (user, device).
public struct ProtocolAddress: Hashable, Sendable, CustomStringConvertible {
    /// The stable user identifier (compared as UTF-8 bytes).
    public let userID: String
    /// The device number within the user's account.
    public let deviceID: UInt32

    /// Creates an address.
    public init(userID: String, deviceID: UInt32) {
        self.userID = userID
        self.deviceID = deviceID
    }

    /// Equality on the UTF-8 bytes of the user id (Swift `String` equality would equate
    /// canonically equivalent but different byte sequences).
    public static func == (a: ProtocolAddress, b: ProtocolAddress) -> Bool {
        a.deviceID == b.deviceID && Array(a.userID.utf8) == Array(b.userID.utf8)
    }

    /// Hashes the UTF-8 bytes of the user id and the device id.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(deviceID)
        for byte in userID.utf8 { hasher.combine(byte) }
    }

    /// `user.device`.
    public var description: String { "\(userID).\(deviceID)" }
}

/// The hook through which SessionKit asks whether a peer's identity key may be used.
///
/// The `Verification` module's trust store conforms (trust on first use); an app may supply
/// its own policy. SessionKit calls `checkIdentity` before encrypting to a device and after
/// learning a peer's identity key from a bundle or a prekey message.
public protocol IdentityTrustEvaluator: Sendable {
    /// Records `identityKey` for `address` if none is known and says whether encrypting to it
    /// is allowed now (false after a key change the app has not accepted).
    func checkIdentity(_ identityKey: [UInt8], for address: ProtocolAddress) async throws -> Bool
}
