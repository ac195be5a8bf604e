import SessionKit

/// An address for tests (the ids used are always valid: 1–255 UTF-8 bytes).
public func address(_ userID: String, _ deviceID: UInt32) -> ProtocolAddress {
    do { return try ProtocolAddress(userID: userID, deviceID: deviceID) } catch { preconditionFailure("invalid test address \(userID)") }
}

/// A group id for tests (the names used are always valid).
public func groupID(_ name: String) -> GroupID {
    do { return try GroupID(name) } catch { preconditionFailure("invalid test group \(name)") }
}

/// An Ed25519 public key for tests whose 32 bytes are all `byte` (for stores that compare
/// keys and never use them as points).
public func identityKey(_ byte: UInt8) -> Ed25519.PublicKey {
    do { return try Ed25519.PublicKey(rawRepresentation: [UInt8](repeating: byte, count: 32)) } catch {
        preconditionFailure("32 bytes are an Ed25519 key")
    }
}
