import Crypto
import Foundation
@_spi(AgeRecipientKit) import SessionKitAge
import SignalPrimitives

/// An age `mlkem768x25519` identity (C2SP `age.md`): the 32-byte X-Wing seed, written
/// `AGE-SECRET-KEY-PQ-1…` (Bech32, uppercase), the form the `age` tool (1.3 and later) reads
/// and writes.
///
/// It opens the `mlkem768x25519` stanzas sealed to its ``recipient`` (HPKE OpenBase with the
/// X-Wing KEM, HKDF-SHA-256 and ChaCha20-Poly1305). The seed lives in zeroing storage;
/// `description` never shows it. ``secretKeyString`` is the one way out (to write a key file):
/// a Swift `String` that cannot be wiped. Inside swift-crypto the expanded private key lives in
/// memory that swift-crypto does not wipe.
///
/// ```swift
/// let identity = try AgeHybridIdentity()                  // AGE-SECRET-KEY-PQ-1…
/// let file = try AgeEncryptor(recipients: [identity.recipient]).encrypt(Data("hello".utf8))
/// let plaintext = try AgeDecryptor(identities: [identity]).decrypt(file)
/// ```
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
public struct AgeHybridIdentity: AgeIdentity, CustomStringConvertible, CustomDebugStringConvertible {
    /// The Bech32 human-readable part of identities.
    static let humanReadablePart = "AGE-SECRET-KEY-PQ-"

    /// The length of the seed an identity is made of.
    public static let seedByteCount = 32

    let seed: SecureBytes
    /// The recipient that encrypts to this identity.
    public let recipient: AgeHybridRecipient

    /// A new random identity: a seed from `random` (the system CSPRNG by default).
    /// - Throws: `AgeError.primitive(.kemFailure)` when swift-crypto fails.
    public init(using random: any RandomSource = SystemRandomSource()) throws(AgeError) {
        try self.init(seed: SecureBytes(count: Self.seedByteCount) { random.fill($0) })
    }

    /// The identity of a 32-byte X-Wing `seed` (it takes ownership of the storage).
    /// - Throws: `AgeError.invalidIdentity` for a seed of another length;
    ///   `AgeError.primitive(.kemFailure)` when swift-crypto fails.
    public init(seed: SecureBytes) throws(AgeError) {
        guard seed.count == Self.seedByteCount else {
            throw .invalidIdentity("an mlkem768x25519 identity holds \(Self.seedByteCount) bytes, not \(seed.count)")
        }
        self.seed = seed
        let publicKey = try Self.privateKey(seed: seed).publicKey.rawRepresentation
        recipient = try AgeHybridRecipient(rawRepresentation: Array(publicKey))
    }

    /// Parses an `AGE-SECRET-KEY-PQ-1…` string.
    /// - Throws: `AgeError.invalidIdentity` for anything but an uppercase Bech32 string with
    ///   the human-readable part `AGE-SECRET-KEY-PQ-` and 32 bytes of data.
    public init(_ string: String) throws(AgeError) {
        guard let (hrp, data) = AgeRecipientKit.bech32Decode(string) else { throw .invalidIdentity("not a valid Bech32 string") }
        guard hrp == Self.humanReadablePart else { throw .invalidIdentity("not an AGE-SECRET-KEY-PQ-1… identity") }
        try self.init(seed: data)
    }

    /// The `AGE-SECRET-KEY-PQ-1…` string. It is the secret key: show or store it only where
    /// the key itself may go.
    public var secretKeyString: String {
        seed.withUnsafeBytes { AgeRecipientKit.bech32Encode(hrp: Self.humanReadablePart, data: $0) }
    }

    /// A redacted description: no key material.
    public var description: String { "AgeHybridIdentity(mlkem768x25519, secret redacted)" }
    /// A redacted description: no key material.
    public var debugDescription: String { description }

    /// Unwraps the first `mlkem768x25519` stanza sealed to this identity; stanzas of other
    /// types are ignored.
    /// - Throws: `AgeError.header` for an `mlkem768x25519` stanza with other than one argument
    ///   after its type, an *enc* that is not canonical base64 of 1120 bytes, a body that is not
    ///   32 bytes, or an *enc* whose X25519 share is of small order (the X25519 shared secret
    ///   would be all zeros) or that X-Wing refuses; `AgeError.primitive(.kemFailure)` when
    ///   swift-crypto fails to expand the seed.
    public func unwrap(_ stanzas: [AgeStanza]) throws(AgeError) -> AgeFileKey? {
        var privateKey: XWingMLKEM768X25519.PrivateKey?
        for stanza in stanzas where stanza.type == AgeHybridRecipient.stanzaType {
            guard stanza.arguments.count == 2 else {
                throw .header("an mlkem768x25519 stanza has exactly one argument after its type")
            }
            guard let enc = AgeRecipientKit.base64DecodeCanonical(stanza.arguments[1]),
                  enc.count == AgeHybridRecipient.encapsulatedKeyByteCount else {
                throw .header("an mlkem768x25519 enc must be canonical base64 of \(AgeHybridRecipient.encapsulatedKeyByteCount) bytes")
            }
            // Checked before decrypting anything (age.md: against partitioning oracles).
            guard stanza.body.count == AgeHybridRecipient.bodyByteCount else {
                throw .header("an mlkem768x25519 stanza body must be 32 bytes (a sealed 16-byte file key)")
            }
            try Self.checkShare(Array(enc.suffix(AgeHybridRecipient.shareByteCount)))
            let key: XWingMLKEM768X25519.PrivateKey
            if let privateKey {
                key = privateKey
            } else {
                key = try Self.privateKey(seed: seed)
                privateKey = key
            }
            var opener: HPKE.Recipient
            do {
                opener = try HPKE.Recipient(privateKey: key, ciphersuite: AgeHybridRecipient.ciphersuite,
                                            info: AgeHybridRecipient.info, encapsulatedKey: Data(enc))
            } catch {
                // X-Wing decapsulation rejects implicitly: a well-formed enc for another key
                // does not fail here but at `open`.
                throw .header("X-Wing refuses the mlkem768x25519 enc")
            }
            guard var fileKey = try? opener.open(stanza.body) else { continue }
            defer { fileKey.resetBytes(in: 0 ..< fileKey.count) }
            guard fileKey.count == AgeFileKey.byteCount else { continue }
            return try AgeFileKey(bytes: fileKey.withUnsafeBytes { SecureBytes(copying: $0) })
        }
        return nil
    }

    /// The X25519 half of X-Wing must not give an all-zero shared secret: `share` must not be of
    /// small order. Any clamped scalar is a multiple of 8, so a fresh one gives zero exactly
    /// for those points, whatever the identity's own X25519 key (this does not depend on the
    /// KEM implementation rejecting them).
    /// - Throws: `AgeError.header` for a small-order share; `AgeError.primitive` when libsodium
    ///   is unusable.
    static func checkShare(_ share: [UInt8]) throws(AgeError) {
        do {
            let probe = try SignalPrimitives.X25519.PrivateKey()
            _ = try probe.sharedSecret(with: SignalPrimitives.X25519.PublicKey(rawRepresentation: share))
        } catch .invalidKey {
            throw .header("the X25519 share of an mlkem768x25519 enc gives an all-zero shared secret")
        } catch {
            throw .primitive(error)
        }
    }

    /// The X-Wing private key expanded from `seed`.
    static func privateKey(seed: SecureBytes) throws(AgeError) -> XWingMLKEM768X25519.PrivateKey {
        do {
            return try seed.withUnsafeBytes { try XWingMLKEM768X25519.PrivateKey(seedRepresentation: $0, publicKey: nil) }
        } catch {
            throw .primitive(.kemFailure)
        }
    }
}
