/// The outcome of encrypting to one device when encrypting to all of a user's devices
/// (`SessionManager.encrypt(_:toUser:devices:includingOwnDevices:)`) or distributing a sender
/// key (`SessionManager.distributeSenderKey(for:to:)`).
public struct DeviceEncryption: Sendable, CustomStringConvertible {
    /// The device.
    public let address: ProtocolAddress
    /// The message to deliver to that device, or why none was produced (its session then
    /// unchanged).
    public let result: Result<[UInt8], SessionError>
    /// The message as a text envelope (`nil` when encrypting failed): its kind is
    /// `.senderKeyDistribution` for a distribution, `.message` otherwise. Built when read.
    public var envelope: MessageEnvelope? {
        guard let sender, case let .success(bytes) = result else { return nil }
        return try? MessageEnvelope(
            sender: sender, recipient: address, kind: group == nil ? .message : .senderKeyDistribution, group: group, body: bytes)
    }

    /// The sending device, when the outcome has an envelope.
    private let sender: ProtocolAddress?
    /// The group of a distribution.
    private let group: GroupID?

    /// Creates an outcome (with no envelope).
    init(address: ProtocolAddress, result: Result<[UInt8], SessionError>) {
        self.address = address
        self.result = result
        sender = nil
        group = nil
    }

    /// An outcome of `SessionManager`, with the envelope of a successful one.
    init(from sender: ProtocolAddress, to address: ProtocolAddress, group: GroupID?, result: Result<[UInt8], SessionError>) {
        self.address = address
        self.result = result
        self.sender = sender
        self.group = group
    }

    /// The message, or `nil` when encrypting to this device failed.
    public var ciphertext: [UInt8]? { try? result.get() }

    /// The error, or `nil` when encrypting to this device succeeded.
    public var error: SessionError? {
        guard case let .failure(error) = result else { return nil }
        return error
    }

    /// The address and the size or error, never the message.
    public var description: String {
        switch result {
        case let .success(bytes): return "DeviceEncryption(\(address): \(bytes.count) bytes)"
        case let .failure(error): return "DeviceEncryption(\(address): \(error))"
        }
    }
}
