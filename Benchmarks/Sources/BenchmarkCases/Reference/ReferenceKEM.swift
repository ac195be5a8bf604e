import Crypto
import Foundation

/// ML-KEM-768 for the naive references (the floor and the swift-crypto column alike):
/// swift-crypto's `MLKEM768` called directly, the way its documentation shows, on the bytes
/// the protocol carries. A private key is its 64-byte seed (SPEC §1), so every decapsulation
/// starts from the seed, as the library's does.
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
enum ReferenceKEM {
    /// Encapsulates to an `ek` given as bytes: parsing it is FIPS 203's input check
    /// (`invalidKey` when it fails).
    static func encapsulate(to encapsulationKey: [UInt8]) throws(ReferenceError) -> (ciphertext: [UInt8], sharedSecret: [UInt8]) {
        let result: KEM.EncapsulationResult
        do {
            result = try MLKEM768.PublicKey(rawRepresentation: encapsulationKey).encapsulate()
        } catch {
            throw .invalidKey
        }
        return (Array(result.encapsulated), result.sharedSecret.withUnsafeBytes { Array($0) })
    }

    /// Decapsulates `ciphertext` with the private key of `seed` (`d || z`).
    static func decapsulate(_ ciphertext: [UInt8], seed: [UInt8]) throws(ReferenceError) -> [UInt8] {
        guard ciphertext.count == ReferenceConstants.kemCiphertextCount else { throw .invalidMessage }
        do {
            let key = try MLKEM768.PrivateKey(seedRepresentation: seed, publicKey: nil)
            return try key.decapsulate(ciphertext).withUnsafeBytes { Array($0) }
        } catch {
            throw .invalidKey
        }
    }

    /// The encapsulation key of the key pair generated from `seed`.
    static func encapsulationKey(seed: [UInt8]) throws(ReferenceError) -> [UInt8] {
        do {
            return Array(try MLKEM768.PrivateKey(seedRepresentation: seed, publicKey: nil).publicKey.rawRepresentation)
        } catch {
            throw .invalidKey
        }
    }

    /// Whether `ek` passes FIPS 203's input check (swift-crypto parses it).
    static func isValidEncapsulationKey(_ encapsulationKey: [UInt8]) -> Bool {
        (try? MLKEM768.PublicKey(rawRepresentation: encapsulationKey)) != nil
    }
}
