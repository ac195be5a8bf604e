#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A message as text: for chat SDKs and servers that carry text or JSON, not bytes (Stream,
/// Sendbird, Firebase, a JSON-over-WebSocket relay). Put `encodedText()` into a chat message's
/// text or custom data, and give what arrives to `SessionManager.receive(_:)`, which decodes
/// nothing itself and dispatches by `kind`.
///
/// The text is one JSON object (version 1), with the body in standard base64:
///
///     {"body":"MwjL…","kind":"message","recipient":{"device":2,"user":"bob"},
///      "sender":{"device":1,"user":"alice"},"v":1}
///
/// | field | value |
/// |---|---|
/// | `v` | 1 |
/// | `sender` | `{"user": user id, "device": device id}`, the sending device |
/// | `recipient` | the receiving device, for the pairwise kinds only |
/// | `kind` | `"message"`, `"senderKeyDistribution"`, `"groupMessage"` or `"retryNotice"` |
/// | `group` | the group id in base64, for the two group kinds only |
/// | `body` | the message's bytes in base64 (1 to `maximumBodyByteCount` bytes) |
///
/// Decoding is strict: an unknown or repeated field, a missing one, a field that does not fit
/// the kind, a base64 text that is not canonical, a number that is not a canonical integer
/// (`1.0`, `1e0`, `01`, `-0`) or a version other than 1 is an `EnvelopeError`, never a guess. The envelope is public metadata (the server sees it): it
/// holds no secret, and its `sender` is only a claim: a message re-attributed to another
/// sender does not decrypt (SPEC §3, §5).
///
/// Size: the body grows by a third (base64) plus about 110 bytes of JSON for a pairwise
/// message between short user ids (each user id's length more); a 1,024-byte ciphertext
/// becomes 1,477 bytes of text between "alice" and "bob".
public struct MessageEnvelope: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What the body holds, and so which manager call processes it.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A pairwise message (a ratchet or prekey message) from `sender` to `recipient`.
        case message
        /// A pairwise message whose plaintext is `sender`'s sender key for `group`
        /// (`SessionManager.distributeSenderKey(for:to:)`).
        case senderKeyDistribution
        /// A group (sender-key) message from `sender` to every member of `group`.
        case groupMessage
        /// A retry notice (SPEC §9) from `sender` to `recipient`: `sender` could not decrypt a
        /// message from `recipient` (`SessionManager.receive(_:)` produces and processes them).
        case retryNotice

        /// Whether the body is a pairwise message to one device.
        public var isPairwise: Bool { self != .groupMessage }
    }

    /// The envelope version this library writes and reads.
    public static let version = 1
    /// The largest body, in bytes (1 MiB).
    public static let maximumBodyByteCount = 1 << 20
    /// The longest text `init(text:)` reads, in bytes (enough for the largest body).
    public static let maximumTextByteCount = 4 * (maximumBodyByteCount / 3 + 1) + 2_048

    /// The sending device (as the sender claims; the session checks it).
    public let sender: ProtocolAddress
    /// The receiving device for the pairwise kinds, `nil` for a group message.
    public let recipient: ProtocolAddress?
    /// What the body holds.
    public let kind: Kind
    /// The group, for the two group kinds.
    public let group: GroupID?
    /// The message's bytes.
    public let body: [UInt8]

    /// An envelope for a message.
    /// - Throws: `EnvelopeError.inconsistentFields` when `group` or `recipient` does not fit
    ///   `kind` (see the type's table), `.invalidField("body")` for an empty body,
    ///   `.bodyTooLong` for one longer than `maximumBodyByteCount`.
    public init(sender: ProtocolAddress, recipient: ProtocolAddress?, kind: Kind, group: GroupID? = nil, body: [UInt8]) throws(EnvelopeError) {
        guard !body.isEmpty else { throw .invalidField("body") }
        guard body.count <= Self.maximumBodyByteCount else { throw .bodyTooLong(found: body.count) }
        switch kind {
        case .message:
            guard group == nil else { throw .inconsistentFields("a pairwise message has no group") }
            guard recipient != nil else { throw .inconsistentFields("a pairwise message needs a recipient") }
        case .senderKeyDistribution:
            guard group != nil else { throw .inconsistentFields("a sender-key distribution needs a group") }
            guard recipient != nil else { throw .inconsistentFields("a sender-key distribution needs a recipient") }
        case .groupMessage:
            guard group != nil else { throw .inconsistentFields("a group message needs a group") }
            guard recipient == nil else { throw .inconsistentFields("a group message has no recipient") }
        case .retryNotice:
            guard group == nil else { throw .inconsistentFields("a retry notice has no group") }
            guard recipient != nil else { throw .inconsistentFields("a retry notice needs a recipient") }
        }
        self.sender = sender
        self.recipient = recipient
        self.kind = kind
        self.group = group
        self.body = body
    }

    /// Decodes an envelope from its text (strictly; see the type's documentation).
    /// - Throws: `EnvelopeError`.
    public init(text: String) throws(EnvelopeError) {
        try self.init(jsonData: Data(text.utf8))
    }

    /// Decodes an envelope from the UTF-8 bytes of its text.
    /// - Throws: `EnvelopeError`.
    public init(jsonData data: Data) throws(EnvelopeError) {
        guard data.count <= Self.maximumTextByteCount else { throw .textTooLong(found: data.count) }
        do {
            try StrictJSONScanner.checkObject([UInt8](data))
        } catch let error as EnvelopeError {
            throw error
        } catch {
            throw .notAJSONObject
        }
        do {
            self = try JSONDecoder().decode(MessageEnvelope.self, from: data)
        } catch let error as EnvelopeError {
            throw error
        } catch let DecodingError.keyNotFound(key, _) {
            throw .missingField(key.stringValue)
        } catch let DecodingError.typeMismatch(_, context) {
            throw .invalidField(context.codingPath.first?.stringValue ?? "envelope")
        } catch let DecodingError.valueNotFound(_, context) {
            throw .invalidField(context.codingPath.first?.stringValue ?? "envelope")
        } catch let DecodingError.dataCorrupted(context) {
            if let field = context.codingPath.first { throw .invalidField(field.stringValue) }
            throw .notAJSONObject
        } catch {
            throw .notAJSONObject
        }
    }

    /// The envelope as compact JSON text (keys sorted), ready for a chat SDK's message text.
    public func encodedText() -> String {
        String(decoding: encodedJSON(), as: UTF8.self)
    }

    /// The UTF-8 bytes of `encodedText()`.
    public func encodedJSON() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings, integers and nested objects of strings and integers cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The sender, kind, group and body size, never the body.
    public var description: String {
        var text = "MessageEnvelope(\(kind.rawValue) from \(sender)"
        if let recipient { text += " to \(recipient)" }
        if let group { text += " in \(group)" }
        return text + ", \(body.count) bytes)"
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey {
        case version = "v", sender, recipient, kind, group, body
    }

    /// Decodes strictly (see the type's documentation); used through `init(text:)`.
    /// - Throws: `EnvelopeError` for a value that is present but wrong, `DecodingError` for a
    ///   missing field or a JSON type mismatch.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .version)
        guard version == Self.version else { throw EnvelopeError.unsupportedVersion(found: version) }
        let kindName = try container.decode(String.self, forKey: .kind)
        guard let kind = Kind(rawValue: kindName) else { throw EnvelopeError.invalidField("kind") }
        let sender = try container.decode(ProtocolAddress.self, forKey: .sender)
        let recipient = try container.decodeIfPresent(ProtocolAddress.self, forKey: .recipient)
        var group: GroupID?
        if let text = try container.decodeIfPresent(String.self, forKey: .group) {
            guard let bytes = Base64.decodeCanonical(text) else { throw EnvelopeError.invalidField("group") }
            do { group = try GroupID(rawRepresentation: bytes) } catch { throw EnvelopeError.invalidField("group") }
        }
        let bodyText = try container.decode(String.self, forKey: .body)
        guard bodyText.utf8.count <= 4 * (Self.maximumBodyByteCount / 3 + 1) else {
            throw EnvelopeError.bodyTooLong(found: bodyText.utf8.count / 4 * 3)
        }
        guard let body = Base64.decodeCanonical(bodyText) else { throw EnvelopeError.invalidField("body") }
        try self.init(sender: sender, recipient: recipient, kind: kind, group: group, body: body)
    }

    /// Encodes the fields of the type's table.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.version, forKey: .version)
        try container.encode(sender, forKey: .sender)
        try container.encodeIfPresent(recipient, forKey: .recipient)
        try container.encode(kind.rawValue, forKey: .kind)
        try container.encodeIfPresent(group.map { Data($0.rawRepresentation).base64EncodedString() }, forKey: .group)
        try container.encode(Data(body).base64EncodedString(), forKey: .body)
    }
}

/// Any key of a JSON object (to find unknown fields).
struct AnyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// The keyed container of a JSON object whose every key is one of `Keys`: envelopes and
    /// their addresses are decoded strictly.
    /// - Throws: `EnvelopeError.unknownField` for another key, `DecodingError` when the value is
    ///   not an object.
    func strictContainer<Keys: CodingKey>(keyedBy type: Keys.Type) throws -> KeyedDecodingContainer<Keys> {
        for key in try container(keyedBy: AnyKey.self).allKeys where Keys(stringValue: key.stringValue) == nil {
            throw EnvelopeError.unknownField(key.stringValue)
        }
        return try container(keyedBy: type)
    }
}

/// Standard base64 that decodes only its canonical form (padding present, unused bits zero),
/// so that one body has one text.
enum Base64 {
    /// The bytes of `text`, or `nil` when it is not canonical standard base64.
    static func decodeCanonical(_ text: String) -> [UInt8]? {
        guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else { return nil }
        return [UInt8](data)
    }
}

extension DecryptedMessage {
    /// The plaintext as `Data`.
    public var plaintextData: Data { Data(plaintext) }
}

extension DecryptedGroupMessage {
    /// The plaintext as `Data`.
    public var plaintextData: Data { Data(plaintext) }
}

extension GroupID {
    /// A group id from `Data` (for example a UUID's 16 bytes).
    /// - Throws: `SessionError.invalidGroupID` for an empty id or one longer than 255 bytes.
    public init(data: Data) throws(SessionError) {
        try self.init(rawRepresentation: [UInt8](data))
    }
}
