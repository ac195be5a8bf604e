/// An address as JSON: `{"user": user id, "device": device id}`, decoded strictly (no other
/// field; the user id 1–255 UTF-8 bytes; the device id a `UInt32`).
extension ProtocolAddress: Codable {
    private enum CodingKeys: String, CodingKey {
        case user, device
    }

    /// Decodes `{"user": …, "device": …}`.
    /// - Throws: `EnvelopeError.unknownField` for another field, `.invalidField` for an invalid
    ///   user id or a device id outside `UInt32`, `DecodingError` for a missing field or a wrong JSON type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        let user = try container.decode(String.self, forKey: .user)
        let device = try container.decode(Int64.self, forKey: .device)
        guard let deviceID = UInt32(exactly: device) else { throw EnvelopeError.invalidField("device") }
        do { try self.init(userID: user, deviceID: deviceID) } catch { throw EnvelopeError.invalidField("user") }
    }

    /// Encodes `{"user": …, "device": …}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userID, forKey: .user)
        try container.encode(deviceID, forKey: .device)
    }
}
