import BenchmarkHarness
import Crypto
import Foundation

/// swift-crypto's `MLKEM768` called directly, as its documentation shows: the floor of the
/// `mlkem768.*` cases (libsodium has no ML-KEM, so the floor of a KEM operation is the KEM
/// itself, without the adapter around it).
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
enum SwiftCryptoKEM {
    /// Encapsulation to an `ek` held as the bytes a bundle carries: parse (FIPS 203's input
    /// check and the matrix expansion), then encapsulate.
    static func encapsulate(_ f: ProtocolFixture) throws -> Probe {
        let k = try f.kem()
        let encapsulationKey = k.encapsulationKey
        return Probe(
            workload: .repeating {
                blackHole(try MLKEM768.PublicKey(rawRepresentation: encapsulationKey).encapsulate())
            },
            output: {
                let result = try MLKEM768.PublicKey(rawRepresentation: encapsulationKey).encapsulate()
                return KEMCheck.outcome(
                    seed: f.kemSeed, ciphertext: Array(result.encapsulated),
                    sharedSecret: result.sharedSecret.withUnsafeBytes { Array($0) })
            })
    }

    /// Decapsulation from the 64-byte seed (key generation from the seed, then decapsulation).
    static func decapsulate(_ f: ProtocolFixture) throws -> Probe {
        let k = try f.kem()
        let seed = f.kemSeed, ciphertext = k.ciphertext
        func decapsulate() throws -> SymmetricKey {
            try MLKEM768.PrivateKey(seedRepresentation: seed, publicKey: nil).decapsulate(ciphertext)
        }
        return Probe(
            workload: .repeating { blackHole(try decapsulate()) },
            output: { try decapsulate().withUnsafeBytes { Array($0) } })
    }
}
