import BenchmarkHarness
@_spi(Testing) import SessionKit
import SessionKitMLKEM
import SignalPrimitives

/// The library's side of the post-quantum cases: PQXDH with SessionKitMLKEM's
/// `SwiftCryptoMLKEM768`, and the adapter itself.
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
enum LibraryKEM {
    /// Bob's bundle with his one-time prekey and his KEM prekey (spk_sig with `kem` = 1).
    static func kemBundle(_ f: ProtocolFixture, _ k: KEMFixture) throws -> PreKeyBundle {
        try PreKeyBundle(
            identityKey: try Ed25519.PublicKey(rawRepresentation: f.bobIdentityKey), signedPreKeyID: f.signedPreKeyID,
            signedPreKey: try X25519.PublicKey(rawRepresentation: f.signedPreKeyPublic),
            signedPreKeySignature: f.kemSignedPreKeySignature,
            oneTimePreKey: .init(id: f.oneTimePreKeyID, publicKey: try X25519.PublicKey(rawRepresentation: f.oneTimePreKeyPublic)),
            kemPreKey: try .init(id: f.kemPreKeyID, publicKey: k.encapsulationKey, signature: k.signature))
    }

    /// Alice's PQXDH as `SessionState(initiatingWith:…, kem:)` runs it, without the ratchet:
    /// the bundle's checks (both signatures, the `ek` input check), the encapsulation through
    /// the adapter, a fresh ephemeral key, the prefix P (with CT), then X3DH with SS.
    static func pqxdhInitiate(_ f: ProtocolFixture) throws -> Probe {
        let k = try f.kem()
        let kem = SwiftCryptoMLKEM768()
        let identity = try IdentityKeyPair(seed: f.aliceSeed)
        let bundle = try kemBundle(f, k)
        let local = try LibraryProtocol.address(f.aliceAddress), remote = try LibraryProtocol.address(f.bobAddress)
        let fixedEphemeral = try X25519.PrivateKey(rawRepresentation: f.ephemeralSecret)
        let fixedEncapsulation = try KEMEncapsulation(ciphertext: k.ciphertext, sharedSecret: SecureBytes(copying: k.sharedSecret))
        func initiate(
            _ ephemeral: () throws -> X25519.PrivateKey, _ encapsulate: (KEMEncapsulationKey) throws -> KEMEncapsulation
        ) throws -> X3DHAgreement {
            guard let kemKey = try X3DH.checkBundle(bundle), let kemPreKey = bundle.kemPreKey else {
                throw CheckFailure("the bundle lost its KEM prekey")
            }
            let encapsulation = try encapsulate(kemKey)
            let ephemeralKey = try ephemeral()
            let prefix = PreKeyMessage.Prefix(
                identityKey: identity.publicKey, baseKey: ephemeralKey.publicKey, signedPreKeyID: bundle.signedPreKeyID,
                oneTimePreKeyID: bundle.oneTimePreKey?.id,
                kem: try .init(preKeyID: kemPreKey.id, ciphertext: encapsulation.ciphertext))
            return try X3DH.initiate(
                identity: identity, localAddress: local, remoteAddress: remote, bundle: bundle, ephemeralKey: ephemeralKey,
                prefix: prefix, kemSharedSecret: encapsulation.sharedSecret)
        }
        return Probe(
            workload: .repeating {
                blackHole(try initiate({ try X25519.PrivateKey() }, { try kem.encapsulate(to: $0) }))
            },
            output: { LibraryProtocol.output(try initiate({ fixedEphemeral }, { _ in fixedEncapsulation })) })
    }

    /// Bob's PQXDH from Alice's prefix: decapsulation through the adapter from the 64-byte
    /// seed, then X3DH with SS.
    static func pqxdhRespond(_ f: ProtocolFixture) throws -> Probe {
        let k = try f.kem()
        let kem = SwiftCryptoMLKEM768()
        let identity = try IdentityKeyPair(seed: f.bobSeed)
        let signedPreKey = try SignedPreKey(
            id: f.signedPreKeyID, privateKey: f.signedPreKeySecret, signature: f.kemSignedPreKeySignature, signsKEMPreKeys: true)
        let oneTimePreKey = try OneTimePreKey(id: f.oneTimePreKeyID, privateKey: f.oneTimePreKeySecret)
        let seed = SecureBytes(copying: f.kemSeed)
        let local = try LibraryProtocol.address(f.bobAddress), remote = try LibraryProtocol.address(f.aliceAddress)
        let part = try PreKeyMessage.Prefix.KEMPart(preKeyID: f.kemPreKeyID, ciphertext: k.ciphertext)
        let prefix = PreKeyMessage.Prefix(
            identityKey: try Ed25519.PublicKey(rawRepresentation: f.aliceIdentityKey),
            baseKey: try X25519.PublicKey(rawRepresentation: f.ephemeralPublic), signedPreKeyID: f.signedPreKeyID,
            oneTimePreKeyID: f.oneTimePreKeyID, kem: part)
        func respond() throws -> X3DHAgreement {
            let sharedSecret = try kem.decapsulate(part.ciphertext, seed: seed)
            return try X3DH.respond(
                identity: identity, localAddress: local, remoteAddress: remote, prefix: prefix, signedPreKey: signedPreKey,
                oneTimePreKey: oneTimePreKey, kemSharedSecret: sharedSecret)
        }
        return Probe(workload: .repeating { blackHole(try respond()) }, output: { LibraryProtocol.output(try respond()) })
    }

    /// The adapter's encapsulation to a checked encapsulation key (a bundle's, after
    /// `X3DH.checkBundle`). The output: whether decapsulating the ciphertext with the seed
    /// gives the shared secret, and the ciphertext's length.
    static func encapsulate(_ f: ProtocolFixture) throws -> Probe {
        let k = try f.kem()
        let kem = SwiftCryptoMLKEM768()
        let key = try KEMEncapsulationKey(rawRepresentation: k.encapsulationKey)
        return Probe(
            workload: .repeating { blackHole(try kem.encapsulate(to: key)) },
            output: {
                let encapsulation = try kem.encapsulate(to: key)
                return KEMCheck.outcome(
                    seed: f.kemSeed, ciphertext: encapsulation.ciphertext, sharedSecret: encapsulation.sharedSecret.bytes)
            })
    }

    /// The adapter's decapsulation from the 64-byte seed.
    static func decapsulate(_ f: ProtocolFixture) throws -> Probe {
        let k = try f.kem()
        let kem = SwiftCryptoMLKEM768()
        let seed = SecureBytes(copying: f.kemSeed)
        let ciphertext = k.ciphertext
        return Probe(
            workload: .repeating { blackHole(try kem.decapsulate(ciphertext, seed: seed)) },
            output: { try kem.decapsulate(ciphertext, seed: seed).bytes })
    }
}

/// The check of an encapsulation: `[1]` when decapsulating `ciphertext` with the private key
/// of `seed` (swift-crypto, directly) gives `sharedSecret`, then the ciphertext's length.
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
enum KEMCheck {
    static func outcome(seed: [UInt8], ciphertext: [UInt8], sharedSecret: [UInt8]) -> [UInt8] {
        let matches = (try? ReferenceKEM.decapsulate(ciphertext, seed: seed)) == sharedSecret
        var out: [UInt8] = [matches ? 1 : 0]
        out.appendU32(UInt32(ciphertext.count))
        return out
    }
}
