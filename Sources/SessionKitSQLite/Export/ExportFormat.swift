import Foundation
import SignalPrimitives
import Verification

/// The plaintext of an account export (SPEC §10): UTF-8 JSON Lines, one object per line, each
/// line ended by LF. The first line is the header
///
///     {"format":"sessionkit-export","version":1,"user":"alice","created":1764150000}
///
/// and every later line one item, told apart by its `"kind"` (see the article "Backups and Key
/// Files" for the fields of each kind):
///
///     {"kind":"identity","seed":"<base64>","publicKey":"<base64>"}
///     {"kind":"trust","user":"bob","status":"verified","identityKey":"<base64>",
///      "previousIdentityKey":"<base64>","devices":[1,2],"supersededIdentityKeys":["<base64>"]}
///     {"kind":"message","conversation":"bob","id":"m1","timestamp":1764150000123,"body":"<base64>"}
///
/// (one line each). Binary values are standard padded base64. This file holds no GRDB code,
/// so the fuzz harness `export_reader` compiles it into itself.
enum ExportFormat {
    /// The header's `format`.
    static let formatName = "sessionkit-export"
    /// The version this library writes and the highest it reads.
    static let version = 1
    /// The longest line a reader accepts (16 MiB): a longer item is skipped, never held whole.
    static let maximumLineByteCount = 16 << 20
}

/// The header line of an export.
struct ExportHeader: Sendable, Equatable {
    /// The account's user id.
    let userID: String
    /// When the export was written (Unix seconds).
    let created: Int64
}

/// One item line of an export.
enum ExportItem {
    /// The account's identity key pair (its Ed25519 seed).
    case identity(IdentityKeyPairSeed)
    /// One user's trust record.
    case trust(userID: String, record: TrustRecord)
    /// One archived message.
    case message(conversationID: String, messageID: String, timestamp: Int64, body: SecureBytes)

    /// The kind as written in `"kind"`.
    var kind: String {
        switch self {
        case .identity: return "identity"
        case .trust: return "trust"
        case .message: return "message"
        }
    }
}

/// An identity seed read from an export, with the public key the line gives for it.
struct IdentityKeyPairSeed {
    /// The 32-byte Ed25519 seed.
    let seed: SecureBytes
    /// The 32-byte Ed25519 public key written next to it.
    let publicKey: [UInt8]
}

/// Why an export's plaintext cannot be read at all (items that cannot be imported are
/// skipped one by one instead).
enum ExportFormatError: Error, Equatable {
    /// The first line is not a header object: it is missing, not JSON, or lacks a field.
    case badHeader(String)
    /// The header's `format` is not `sessionkit-export`.
    case unknownFormat(String)
    /// The header's `version` is above `ExportFormat.version`.
    case unsupportedVersion(Int)
}

// MARK: - Writing

/// Writes the lines of an export.
enum ExportLineEncoder {
    /// The header line (with its LF).
    static func header(_ header: ExportHeader) -> [UInt8] {
        var out = Array("{\"format\":".utf8)
        appendString(ExportFormat.formatName, to: &out)
        out += Array(",\"version\":\(ExportFormat.version),\"user\":".utf8)
        appendString(header.userID, to: &out)
        out += Array(",\"created\":\(header.created)}\n".utf8)
        return out
    }

    /// The identity line; the caller wipes it (`SecureMemory.zero`).
    static func identity(seed: UnsafeRawBufferPointer, publicKey: [UInt8]) -> [UInt8] {
        var out = Array("{\"kind\":\"identity\",\"seed\":\"".utf8)
        appendBase64(seed, to: &out)
        out += Array("\",\"publicKey\":\"".utf8)
        publicKey.withUnsafeBytes { appendBase64($0, to: &out) }
        out += Array("\"}\n".utf8)
        return out
    }

    /// A trust line.
    static func trust(userID: String, record: TrustRecord) -> [UInt8] {
        var out = Array("{\"kind\":\"trust\",\"user\":".utf8)
        appendString(userID, to: &out)
        out += Array(",\"status\":\"\(record.status.description)\",\"identityKey\":".utf8)
        appendKey(record.identityKey, to: &out)
        if let previous = record.previousIdentityKey {
            out += Array(",\"previousIdentityKey\":".utf8)
            appendKey(previous, to: &out)
        }
        out += Array(",\"devices\":[\(record.devices.map(String.init).joined(separator: ","))],\"supersededIdentityKeys\":[".utf8)
        for (index, key) in record.supersededIdentityKeys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendKey(key, to: &out)
        }
        out += Array("]}\n".utf8)
        return out
    }

    /// A message line; the caller wipes it.
    static func message(conversationID: String, messageID: String, timestamp: Int64, body: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(80 + conversationID.utf8.count + messageID.utf8.count + (body.count + 2) / 3 * 4)
        out += Array("{\"kind\":\"message\",\"conversation\":".utf8)
        appendString(conversationID, to: &out)
        out += Array(",\"id\":".utf8)
        appendString(messageID, to: &out)
        out += Array(",\"timestamp\":\(timestamp),\"body\":\"".utf8)
        appendBase64(body, to: &out)
        out += Array("\"}\n".utf8)
        return out
    }

    /// A JSON string: `"` and `\` escaped, control characters as `\u00XX`, the rest as UTF-8.
    static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let hex = Array("0123456789abcdef".utf8)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out += [UInt8(ascii: "\\"), byte]
            case 0x00 ..< 0x20:
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendKey(_ key: Ed25519.PublicKey, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        key.rawRepresentation.withUnsafeBytes { appendBase64($0, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// Standard padded base64 (RFC 4648 §4), written straight into `out` (no intermediate
    /// `String`, so a secret's encoding lives only in buffers the caller wipes).
    static func appendBase64(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let n = UInt32(bytes[index]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], UInt8(ascii: "="), UInt8(ascii: "=")]
        case 2:
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], UInt8(ascii: "=")]
        default:
            break
        }
    }
}

// MARK: - Reading

/// Reads an export's plaintext pushed in pieces of any size: splits it into lines (at most
/// `ExportFormat.maximumLineByteCount` bytes each are held), checks the header, and decodes
/// each item line. Decoded items, and items it skips with the reason, wait in `events` until
/// the caller takes them (`takeEvents()`): at most the items of one piece.
///
/// JSON parsing goes through Foundation's `JSONDecoder`, whose copies of the line's strings
/// cannot be wiped; the line buffer itself is wiped after each line.
struct ExportLineReader {
    /// What a line gave.
    enum Event {
        /// The header (the first line).
        case header(ExportHeader)
        /// An item, with its line number (the header is line 1).
        case item(line: Int, ExportItem)
        /// A line that holds no item this version can import, with its line number and why.
        case skipped(line: Int, kind: String?, reason: String)
    }

    private var line: [UInt8] = []
    private var overlong = false
    private var lineNumber = 0
    private var header: ExportHeader?
    private var events: [Event] = []
    /// The longest line held so far, in bytes (for the tests of bounded memory).
    private(set) var largestLineByteCount = 0
    private let maximumLineByteCount: Int

    init(maximumLineByteCount: Int = ExportFormat.maximumLineByteCount) {
        self.maximumLineByteCount = maximumLineByteCount
    }

    /// The header, once the first line was read.
    var readHeader: ExportHeader? { header }

    /// Adds plaintext bytes.
    /// - Throws: `ExportFormatError` when the first line is not a usable header.
    mutating func update(_ bytes: UnsafeRawBufferPointer) throws(ExportFormatError) {
        var start = 0
        while start < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
            if let found = rest.firstIndex(of: 0x0A) {
                let newline = start + found
                append(UnsafeRawBufferPointer(rebasing: bytes[start ..< newline]))
                try endLine()
                start = newline + 1
            } else {
                append(rest)
                start = bytes.count
            }
        }
    }

    /// Ends the plaintext: a last line without LF is read too.
    /// - Throws: `ExportFormatError.badHeader` for an empty plaintext, or as `update`.
    mutating func finish() throws(ExportFormatError) {
        if !line.isEmpty || overlong { try endLine() }
        guard header != nil else { throw .badHeader("the export is empty") }
    }

    /// The events since the last call, in order.
    mutating func takeEvents() -> [Event] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !overlong else { return }
        if line.count + bytes.count > maximumLineByteCount {
            overlong = true
            SecureMemory.zero(&line)
            line = []
            return
        }
        line.append(contentsOf: bytes)
        largestLineByteCount = max(largestLineByteCount, line.count)
    }

    private mutating func endLine() throws(ExportFormatError) {
        lineNumber += 1
        defer {
            SecureMemory.zero(&line)
            line.removeAll(keepingCapacity: true)
            overlong = false
        }
        if header == nil {
            guard !overlong else { throw .badHeader("the first line is too long") }
            let decoded = try Self.decodeHeader(line)
            header = decoded
            events.append(.header(decoded))
            return
        }
        if overlong {
            events.append(.skipped(line: lineNumber, kind: nil, reason: "the line is longer than \(maximumLineByteCount) bytes"))
            return
        }
        events.append(Self.decodeItem(line, lineNumber: lineNumber))
    }

    // MARK: Decoding

    private struct HeaderProbe: Decodable {
        let format: String?
    }

    private struct HeaderLine: Decodable {
        let version: Int
        let user: String
        let created: Int64
    }

    private struct KindProbe: Decodable {
        let kind: String
    }

    private struct IdentityLine: Decodable {
        let seed: String
        let publicKey: String
    }

    private struct TrustLine: Decodable {
        let user: String
        let status: String
        let identityKey: String
        let previousIdentityKey: String?
        let devices: [UInt32]
        let supersededIdentityKeys: [String]
    }

    private struct MessageLine: Decodable {
        let conversation: String
        let id: String
        let timestamp: Int64
        let body: String
    }

    /// The header of `line`.
    /// - Throws: `ExportFormatError`: `unknownFormat` first (whatever the rest holds), then
    ///   `unsupportedVersion`, then `badHeader` for missing or mistyped fields.
    static func decodeHeader(_ line: [UInt8]) throws(ExportFormatError) -> ExportHeader {
        let data = Data(line)
        let decoder = JSONDecoder()
        guard let probe = try? decoder.decode(HeaderProbe.self, from: data) else {
            throw .badHeader("the first line is not a JSON object")
        }
        guard let format = probe.format else { throw .badHeader("the header has no format") }
        guard format == ExportFormat.formatName else { throw .unknownFormat(String(format.prefix(64))) }
        guard let header = try? decoder.decode(HeaderLine.self, from: data) else {
            throw .badHeader("the header lacks an integer version, a string user or an integer created")
        }
        guard header.version >= 1 else { throw .badHeader("the header version \(header.version) is not a version") }
        guard header.version <= ExportFormat.version else { throw .unsupportedVersion(header.version) }
        return ExportHeader(userID: header.user, created: header.created)
    }

    /// The event of an item line.
    static func decodeItem(_ line: [UInt8], lineNumber: Int) -> Event {
        let data = Data(line)
        let decoder = JSONDecoder()
        guard let probe = try? decoder.decode(KindProbe.self, from: data) else {
            return .skipped(line: lineNumber, kind: nil, reason: "not a JSON object with a string kind")
        }
        let kind = String(probe.kind.prefix(64))
        func skip(_ reason: String) -> Event { .skipped(line: lineNumber, kind: kind, reason: reason) }
        switch probe.kind {
        case "identity":
            guard let item = try? decoder.decode(IdentityLine.self, from: data) else { return skip("an identity needs a seed and a publicKey") }
            guard var seed = Data(base64Encoded: item.seed).map([UInt8].init), seed.count == Ed25519.keyByteCount else {
                return skip("the seed is not base64 of 32 bytes")
            }
            defer { SecureMemory.zero(&seed) }
            guard let publicKey = Data(base64Encoded: item.publicKey).map([UInt8].init), publicKey.count == Ed25519.keyByteCount else {
                return skip("the publicKey is not base64 of 32 bytes")
            }
            return .item(line: lineNumber, .identity(IdentityKeyPairSeed(seed: SecureBytes(copying: seed), publicKey: publicKey)))
        case "trust":
            guard let item = try? decoder.decode(TrustLine.self, from: data) else {
                return skip("a trust record needs user, status, identityKey, devices and supersededIdentityKeys")
            }
            guard (try? TrustUserID(item.user)) != nil else { return skip("the user id is not 1 to 255 UTF-8 bytes") }
            guard let status = TrustStatus.allCases.first(where: { $0.description == item.status }) else {
                return skip("unknown status \(item.status.prefix(32))")
            }
            guard let key = publicKey(item.identityKey) else { return skip("the identityKey is not an Ed25519 public key") }
            var previous: Ed25519.PublicKey?
            if let text = item.previousIdentityKey {
                guard let key = publicKey(text) else { return skip("the previousIdentityKey is not an Ed25519 public key") }
                previous = key
            }
            guard item.devices.count <= TrustRecord.maximumDeviceCount else { return skip("more than \(TrustRecord.maximumDeviceCount) devices") }
            guard item.supersededIdentityKeys.count <= TrustRecord.maximumSupersededKeyCount else {
                return skip("more than \(TrustRecord.maximumSupersededKeyCount) superseded keys")
            }
            var superseded: [Ed25519.PublicKey] = []
            for text in item.supersededIdentityKeys {
                guard let key = publicKey(text) else { return skip("a superseded key is not an Ed25519 public key") }
                superseded.append(key)
            }
            let record = TrustRecord(
                identityKey: key, status: status, previousIdentityKey: previous, devices: item.devices, supersededIdentityKeys: superseded)
            return .item(line: lineNumber, .trust(userID: item.user, record: record))
        case "message":
            guard let item = try? decoder.decode(MessageLine.self, from: data) else {
                return skip("a message needs conversation, id, an integer timestamp and body")
            }
            guard !item.conversation.isEmpty else { return skip("the conversation id is empty") }
            let idLength = item.id.utf8.count
            guard (1 ... Int(UInt16.max)).contains(idLength) else { return skip("the message id is not 1 to 65535 UTF-8 bytes") }
            guard var body = Data(base64Encoded: item.body).map([UInt8].init) else { return skip("the body is not base64") }
            defer { SecureMemory.zero(&body) }
            return .item(
                line: lineNumber,
                .message(conversationID: item.conversation, messageID: item.id, timestamp: item.timestamp, body: SecureBytes(copying: body)))
        default:
            return skip("unknown kind")
        }
    }

    private static func publicKey(_ text: String) -> Ed25519.PublicKey? {
        guard let bytes = Data(base64Encoded: text), bytes.count == Ed25519.keyByteCount else { return nil }
        return try? Ed25519.PublicKey(rawRepresentation: [UInt8](bytes))
    }
}
