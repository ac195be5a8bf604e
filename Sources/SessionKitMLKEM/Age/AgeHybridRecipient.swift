import Crypto
import Foundation
@_spi(AgeRecipientKit) import SessionKitAge
import SignalPrimitives

/// An age `mlkem768x25519` recipient (C2SP `age.md`): an X-Wing (ML-KEM-768 + X25519) public
/// key of 1216 bytes, written `age1pq1…` (Bech32, lowercase). Files encrypted to it stay
/// confidential against a future quantum computer, as long as X25519 or ML-KEM-768 holds.
///
/// Each file key is sealed with HPKE (RFC 9180 SealBase: the X-Wing KEM, HKDF-SHA-256,
/// ChaCha20-Poly1305, info `age-encryption.org/mlkem768x25519`, empty associated data) into one
/// stanza `-> mlkem768x25519 <enc>` whose body is the 32-byte HPKE ciphertext. Only the
/// matching ``AgeHybridIdentity`` (`AGE-SECRET-KEY-PQ-1…`) opens it; the `age` tool reads such
/// files from version 1.3.
///
/// As `age.md` asks, such a recipient is not mixed with recipients that are not post-quantum:
/// its ``labels`` are `postquantum`, and `AgeEncryptor` refuses a list that mixes it with an
/// `X25519` recipient (`AgeError.invalidRecipient`), since that recipient would undo its
/// security. Two hybrid recipients mix.
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
public struct AgeHybridRecipient: AgeRecipient, Hashable, CustomStringConvertible {
    /// The Bech32 human-readable part of recipients.
    static let humanReadablePart = "age1pq"
    /// The stanza type (its first argument).
    static let stanzaType = "mlkem768x25519"
    /// The HPKE info string (computed: a `Data` held in a static would be reported by
    /// LeakSanitizer, which cannot follow its storage).
    static var info: Data { Data("age-encryption.org/mlkem768x25519".utf8) }
    /// The HPKE ciphersuite: X-Wing, HKDF-SHA-256, ChaCha20-Poly1305.
    static let ciphersuite = HPKE.Ciphersuite(kem: .XWingMLKEM768X25519, kdf: .HKDF_SHA256, aead: .chaChaPoly)
    /// The length of the encapsulated key *enc* (the ML-KEM-768 ciphertext, 1088 bytes, then
    /// the X25519 ephemeral share, 32 bytes).
    static let encapsulatedKeyByteCount = 1120
    /// The length of the X25519 share at the end of *enc*.
    static let shareByteCount = 32
    /// The length of a stanza body: the 16-byte file key and its 16-byte tag.
    static let bodyByteCount = AgeFileKey.byteCount + 16
    /// The length of the ML-KEM-768 encapsulation key at the start of a public key.
    static let mlkemPublicKeyByteCount = 1184
    /// The label that keeps post-quantum recipients from being mixed with others.
    static let postQuantumLabel = "postquantum"

    /// The length of a public key: the ML-KEM-768 encapsulation key (1184 bytes) then the
    /// X25519 public key (32 bytes).
    public static let publicKeyByteCount = 1216

    /// The public key (1216 bytes).
    public let rawRepresentation: [UInt8]

    /// The recipient of a 1216-byte X-Wing public key.
    /// - Throws: `AgeError.invalidRecipient` for another length or an ML-KEM-768 encapsulation
    ///   key that fails FIPS 203's check.
    public init(rawRepresentation: [UInt8]) throws(AgeError) {
        guard rawRepresentation.count == Self.publicKeyByteCount else {
            throw .invalidRecipient("an mlkem768x25519 recipient holds \(Self.publicKeyByteCount) bytes, not \(rawRepresentation.count)")
        }
        do {
            // X-Wing's parser takes any bytes; ML-KEM-768's checks the encapsulation key
            // (FIPS 203's modulus check), as age's Go implementation does.
            _ = try MLKEM768.PublicKey(rawRepresentation: rawRepresentation.prefix(Self.mlkemPublicKeyByteCount))
            _ = try XWingMLKEM768X25519.PublicKey(rawRepresentation: rawRepresentation)
        } catch {
            throw .invalidRecipient("not a valid MLKEM768-X25519 public key")
        }
        self.rawRepresentation = rawRepresentation
    }

    /// Parses an `age1pq1…` recipient string.
    /// - Throws: `AgeError.invalidRecipient` for anything but a lowercase Bech32 string with the
    ///   human-readable part `age1pq` and a valid 1216-byte public key.
    public init(_ string: String) throws(AgeError) {
        guard let (hrp, data) = AgeRecipientKit.bech32Decode(string) else { throw .invalidRecipient("not a valid Bech32 string") }
        guard hrp == Self.humanReadablePart else { throw .invalidRecipient("not an age1pq1… mlkem768x25519 recipient") }
        try self.init(rawRepresentation: data.bytes)
    }

    /// The `age1pq1…` string.
    public var string: String {
        rawRepresentation.withUnsafeBytes { AgeRecipientKit.bech32Encode(hrp: Self.humanReadablePart, data: $0) }
    }

    /// The `age1pq1…` string.
    public var description: String { string }

    /// `postquantum`: the recipient is only mixed with other post-quantum recipients.
    public var labels: Set<String> { [Self.postQuantumLabel] }

    /// One `mlkem768x25519` stanza sealing `fileKey` with HPKE to this public key (swift-crypto
    /// draws the encapsulation randomness).
    /// - Throws: `AgeError.invalidRecipient` when swift-crypto refuses the key;
    ///   `AgeError.primitive(.kemFailure)` when HPKE fails.
    public func wrap(_ fileKey: AgeFileKey) throws(AgeError) -> [AgeStanza] {
        let publicKey: XWingMLKEM768X25519.PublicKey
        do {
            publicKey = try XWingMLKEM768X25519.PublicKey(rawRepresentation: rawRepresentation)
        } catch {
            throw .invalidRecipient("not a valid MLKEM768-X25519 public key")
        }
        let encapsulatedKey: Data
        let body: Data
        do {
            var sender = try HPKE.Sender(recipientKey: publicKey, ciphersuite: Self.ciphersuite, info: Self.info)
            encapsulatedKey = sender.encapsulatedKey
            body = try fileKey.withUnsafeBytes { try sender.seal($0) }
        } catch {
            throw .primitive(.kemFailure)
        }
        guard encapsulatedKey.count == Self.encapsulatedKeyByteCount, body.count == Self.bodyByteCount else {
            throw .primitive(.kemFailure)
        }
        return [try AgeStanza(arguments: [Self.stanzaType, AgeRecipientKit.base64Encode(Array(encapsulatedKey))], body: Array(body))]
    }
}
