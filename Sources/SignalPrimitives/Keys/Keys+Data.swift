#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Ed25519.PublicKey {
    /// A public key from `Data` (as iOS code often holds it); as `init(rawRepresentation:)`.
    /// - Throws: `CryptoError.invalidKeyLength` unless exactly 32 bytes are given.
    public init(rawRepresentation data: Data) throws(CryptoError) {
        try self.init(rawRepresentation: [UInt8](data))
    }

    /// The key's 32 bytes as `Data`.
    public var dataRepresentation: Data { Data(rawRepresentation) }
}

extension X25519.PublicKey {
    /// A public key from `Data`; as `init(rawRepresentation:)`.
    /// - Throws: `CryptoError.invalidKeyLength` unless exactly 32 bytes are given.
    public init(rawRepresentation data: Data) throws(CryptoError) {
        try self.init(rawRepresentation: [UInt8](data))
    }

    /// The key's 32 bytes as `Data`.
    public var dataRepresentation: Data { Data(rawRepresentation) }
}
