/// A device of a user: sessions and trust records exist per (user, device), and both parties'
/// addresses are bound into every session (SPEC §3's AD) and every sender-key message (§5).
///
/// The user id is compared as UTF-8 bytes, never as a Swift `String` (which equates "é" and
/// "e\u{301}"): use canonical ids assigned by your server, never user-typed text.
public struct ProtocolAddress: Hashable, Sendable, CustomStringConvertible {
    /// The longest user id, in UTF-8 bytes.
    public static let maximumUserIDByteCount = 255

    /// The stable user identifier.
    public let userID: String
    /// The device number within the user's account.
    public let deviceID: UInt32
    /// `Encode(address) = u8(len(uid)) || uid || u32(device_id)` (SPEC §1).
    @_spi(Storage) @_spi(Testing) public let encoded: [UInt8]

    /// Creates an address.
    /// - Throws: `SessionError.invalidAddress` when the user id is empty or longer than 255
    ///   UTF-8 bytes.
    public init(userID: String, deviceID: UInt32) throws(SessionError) {
        let uid = Array(userID.utf8)
        guard (1 ... Self.maximumUserIDByteCount).contains(uid.count) else { throw .invalidAddress }
        self.userID = userID
        self.deviceID = deviceID
        var encoded = [UInt8]()
        encoded.reserveCapacity(uid.count + 5)
        encoded.append(UInt8(uid.count))
        encoded.append(contentsOf: uid)
        encoded.appendBigEndian(deviceID)
        self.encoded = encoded
    }

    /// The UTF-8 bytes of the user id.
    @_spi(Storage) @_spi(Testing) public var userIDBytes: ArraySlice<UInt8> { encoded[1 ..< encoded.count - 4] }

    /// Whether `other` is a device of the same user (user ids equal as bytes).
    @_spi(Testing) public func isSameUser(as other: ProtocolAddress) -> Bool { userIDBytes == other.userIDBytes }

    /// Equality of `Encode(address)`: the user id's bytes and the device id.
    public static func == (a: ProtocolAddress, b: ProtocolAddress) -> Bool { a.encoded == b.encoded }

    /// Hashes `Encode(address)` (as raw bytes: one call, not one per byte).
    public func hash(into hasher: inout Hasher) { encoded.withUnsafeBytes { hasher.combine(bytes: $0) } }

    /// `user.device`.
    public var description: String { "\(userID).\(deviceID)" }
}
