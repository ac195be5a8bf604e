import Crypto
import Foundation
import SessionKit
import SignalPrimitives

/// ML-KEM-768 (FIPS 203) from apple/swift-crypto, as SessionKit's `KeyEncapsulationMechanism`.
///
/// On Linux swift-crypto runs BoringSSL's ML-KEM; on Apple platforms it forwards to CryptoKit,
/// whose `MLKEM768` needs macOS, iOS, tvOS, watchOS and visionOS 26. Import this module (its
/// library product is `SessionKitMLKEM`) only in an app that wants post-quantum sessions: an
/// app that imports SignalPrimitives, SessionKit and Verification alone builds no BoringSSL.
///
/// Private keys are kept as seeds (SPEC §3): `decapsulate` expands the seed for each call.
/// Inside swift-crypto the expanded key and a copy of the seed live in memory that swift-crypto
/// does not wipe; the library's own copies are wiped.
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
public struct SwiftCryptoMLKEM768: KeyEncapsulationMechanism {
    /// Creates the adapter (it holds no state).
    public init() {}

    /// The encapsulation key of the key pair generated from `seed` (`d || z`).
    /// - Throws: `SessionError.invalidKey` for a seed that is not 64 bytes,
    ///   `SessionError.primitive(.kemFailure)` when swift-crypto fails.
    public func encapsulationKey(fromSeed seed: SecureBytes) throws(SessionError) -> KEMEncapsulationKey {
        let privateKey = try Self.privateKey(seed: seed)
        return try KEMEncapsulationKey(rawRepresentation: Array(privateKey.publicKey.rawRepresentation))
    }

    /// Encapsulates a fresh shared secret to `key` (swift-crypto draws the randomness).
    /// - Throws: `SessionError.invalidKey` when swift-crypto refuses the key,
    ///   `SessionError.primitive(.kemFailure)` when it fails.
    public func encapsulate(to key: KEMEncapsulationKey) throws(SessionError) -> KEMEncapsulation {
        let publicKey: MLKEM768.PublicKey
        do { publicKey = try MLKEM768.PublicKey(rawRepresentation: key.rawRepresentation) } catch { throw .invalidKey }
        let result: KEM.EncapsulationResult
        do { result = try publicKey.encapsulate() } catch { throw .primitive(.kemFailure) }
        let secret = result.sharedSecret.withUnsafeBytes { SecureBytes(copying: $0) }
        return try KEMEncapsulation(ciphertext: Array(result.encapsulated), sharedSecret: secret)
    }

    /// Decapsulates `ciphertext` with the private key generated from `seed`.
    /// - Throws: `SessionError.invalidMessage` for a ciphertext that is not 1088 bytes,
    ///   `SessionError.invalidKey` for a seed that is not 64 bytes,
    ///   `SessionError.primitive(.kemFailure)` when swift-crypto fails.
    public func decapsulate(_ ciphertext: [UInt8], seed: SecureBytes) throws(SessionError) -> SecureBytes {
        guard ciphertext.count == KEMEncapsulation.ciphertextByteCount else { throw .invalidMessage }
        let privateKey = try Self.privateKey(seed: seed)
        let secret: Crypto.SymmetricKey
        do { secret = try privateKey.decapsulate(ciphertext) } catch { throw .primitive(.kemFailure) }
        return secret.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    private static func privateKey(seed: SecureBytes) throws(SessionError) -> MLKEM768.PrivateKey {
        guard seed.count == KEMSeed.byteCount else { throw .invalidKey }
        do {
            return try seed.withUnsafeBytes { try MLKEM768.PrivateKey(seedRepresentation: $0, publicKey: nil) }
        } catch {
            throw .primitive(.kemFailure)
        }
    }
}
