import SessionKit

/// An address for tests (the ids used are always valid: 1–255 UTF-8 bytes).
func address(_ userID: String, _ deviceID: UInt32) -> ProtocolAddress {
    do { return try ProtocolAddress(userID: userID, deviceID: deviceID) } catch { preconditionFailure("invalid test address \(userID)") }
}

/// A group id for tests.
func groupID(_ name: String) -> GroupID {
    do { return try GroupID(name) } catch { preconditionFailure("invalid test group \(name)") }
}
