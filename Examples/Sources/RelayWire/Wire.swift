import Foundation
import SessionKit

// The frames the relay server and the chat client exchange over one WebSocket, as JSON text
// frames. They carry only public prekey material and opaque envelopes: the server never sees a
// plaintext (see Examples/README.md, "Wire protocol"). Devices are SessionKit's
// `ProtocolAddress`es, which encode as `{"user": …, "device": …}`.

/// What a client sends. Requests carry an `id` that the server's answer (`ServerFrame.ok`,
/// `.failed`, `.bundles`) repeats.
public enum ClientFrame: Codable, Sendable {
    /// The first frame of a connection: the device it speaks for. (A real server authenticates
    /// the device here; this demo trusts it.) The server then delivers the queued envelopes.
    case hello(device: ProtocolAddress)
    /// Publishes prekeys: `PreKeyUpload.serialized`, base64. An upload with another identity key
    /// than the published one replaces everything (the device registered again).
    case upload(id: Int, prekeys: String)
    /// Asks for one bundle per device of `user`; each one-time prekey is handed out at most once.
    case fetch(id: Int, user: String)
    /// Queues `envelope` (opaque text: a `MessageEnvelope`'s `encodedText()`, which the relay
    /// does not read) for each of `to`; the server answers `ok` once it is queued. For what is
    /// not checked against the device list: group messages (one envelope for every member),
    /// sender keys and retry notices, each addressed to one device.
    case send(id: Int, to: [ProtocolAddress], envelope: String)
    /// Pairwise messages to the devices of `user`, checked against the relay's device directory
    /// (SPEC §9; SessionKit's `DeviceDirectory`): `devices` names each device of `user` the
    /// sender has a session with and the registration id its session recorded
    /// (`SessionManager.deviceListRequest(forUser:)`); `messages` are the envelopes, in order
    /// (several for one device are queued in that order). The server queues them only when
    /// `devices` names exactly the user's devices with their current registration ids (`ok`),
    /// and otherwise queues nothing and answers `mismatch` (Signal's 409/410).
    case sendToUser(id: Int, user: String, devices: [DeviceRegistration], messages: [DeviceEnvelope])
    /// Asks how many one-time prekeys and one-time KEM prekeys the server still holds for this
    /// device (answer: `preKeyCount`): the client replenishes from the server's count.
    case preKeyCount(id: Int)
    /// Stores an attachment's ciphertext (base64) and answers `attachmentStored` with its id. The
    /// server never gets the key: it is in the pointer, inside the message.
    case putAttachment(id: Int, ciphertext: String)
    /// Fetches the ciphertext of the attachment `attachment` (answer: `attachment`).
    case getAttachment(id: Int, attachment: String)
    /// The client processed (decrypted and persisted) the delivery `message`: the server deletes it.
    case ack(message: UInt64)
}

/// What the server sends.
public enum ServerFrame: Codable, Sendable {
    /// The answer to `hello`: how many envelopes are queued for the device (they follow).
    case welcome(queued: Int)
    /// The request `id` succeeded.
    case ok(id: Int)
    /// The request `id` failed.
    case failed(id: Int, reason: String)
    /// The answer to `fetch`: one bundle per device (none when the user has not registered).
    case bundles(id: Int, bundles: [PublishedBundle])
    /// An envelope for this device, from the connection of `from` (the server stamps the sender
    /// from the connection, never from the envelope). Delivered again on every connection until
    /// acknowledged.
    case deliver(message: UInt64, from: ProtocolAddress, envelope: String)
    /// The answer to `sendToUser` when its device list does not match the server's (nothing
    /// was queued): the devices whose registration id changed (`stale`, a reinstalled or
    /// restored device, in the manner of Signal's 410), the devices not named (`missing`) and
    /// the named ones the user no longer has (`extra`, both Signal's 409). SessionKit's
    /// `DeviceListMismatch`.
    case mismatch(id: Int, stale: [UInt32], missing: [UInt32], extra: [UInt32])
    /// The answer to `preKeyCount`.
    case preKeyCount(id: Int, oneTime: Int, oneTimeKEM: Int)
    /// The answer to `putAttachment`: the id to put in the message.
    case attachmentStored(id: Int, attachment: String)
    /// The answer to `getAttachment`: the ciphertext, base64.
    case attachment(id: Int, ciphertext: String)
}

/// A device of a user and the registration id the sender's session with it recorded (`nil`: a
/// peer that published none).
public struct DeviceRegistration: Codable, Sendable, Hashable {
    /// The device id.
    public let device: UInt32
    /// The registration id, 1 … 2^31 − 1, or `nil`.
    public let registrationID: UInt32?

    /// Creates an entry.
    public init(device: UInt32, registrationID: UInt32?) {
        self.device = device
        self.registrationID = registrationID
    }
}

/// An envelope for one device of the user a `sendToUser` is for.
public struct DeviceEnvelope: Codable, Sendable {
    /// The device id.
    public let device: UInt32
    /// A `MessageEnvelope`'s `encodedText()`.
    public let envelope: String

    /// Creates an entry.
    public init(device: UInt32, envelope: String) {
        self.device = device
        self.envelope = envelope
    }
}

/// One device's prekey bundle as the server hands it out.
public struct PublishedBundle: Codable, Sendable {
    /// The device id.
    public let device: UInt32
    /// `PreKeyBundle.serialized`, base64.
    public let bundle: String
    /// Which prekeys the server put in: for the demo's log (`"one-time prekey 3, one-time KEM
    /// prekey 4"`, `"no one-time prekey, last-resort KEM prekey 1"`). The client does not need it.
    public let note: String

    /// Creates an entry.
    public init(device: UInt32, bundle: String, note: String) {
        self.device = device
        self.bundle = bundle
        self.note = note
    }
}

/// JSON text for frames, and base64 for the bytes inside them.
public enum WireCoding {
    /// The compact JSON text of `value`.
    public static func text<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Decodes `text` as a `Value`.
    public static func decode<Value: Decodable>(_ type: Value.Type, from text: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    /// `bytes` as standard base64.
    public static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// The bytes of standard base64 `text`, or `nil` when it is not base64.
    public static func bytes(base64 text: String) -> [UInt8]? { Data(base64Encoded: text).map { Array($0) } }

    /// The largest frame either side accepts: an upload of 50 one-time KEM prekeys is about
    /// 85 KB of base64.
    public static let maximumFrameSize = 1 << 20
}
