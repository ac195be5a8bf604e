import BenchmarkHarness
import Crypto
import Foundation

/// swift-crypto's side of the primitive cases, through its public API as documented.
enum SwiftCryptoPrimitives {
    static func x25519KeyGeneration(secret: [UInt8]) -> Probe {
        Probe(
            workload: .repeating { blackHole(Curve25519.KeyAgreement.PrivateKey().publicKey) },
            output: { Array(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secret).publicKey.rawRepresentation) })
    }

    static func x25519Agreement(secret: [UInt8], peer: [UInt8]) throws -> Probe {
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secret)
        let publicKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: peer)
        return Probe(
            workload: .repeating { blackHole(try key.sharedSecretFromKeyAgreement(with: publicKey)) },
            output: { try key.sharedSecretFromKeyAgreement(with: publicKey).withUnsafeBytes { Array($0) } })
    }

    static func ed25519Signing(seed: [UInt8], message: [UInt8]) throws -> Probe {
        let key = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        return Probe(
            workload: .repeating { blackHole(try key.signature(for: message)) },
            output: { Array(try key.signature(for: message)) })
    }

    static func ed25519Verification(publicKey: [UInt8], signature: [UInt8], message: [UInt8]) throws -> Probe {
        let key = try Curve25519.Signing.PublicKey(rawRepresentation: publicKey)
        return Probe(
            workload: .repeating {
                guard key.isValidSignature(signature, for: message) else { throw CheckFailure("signature rejected") }
            },
            output: { [key.isValidSignature(signature, for: message) ? 1 : 0] })
    }

    static func hmac(key: [UInt8], message: [UInt8]) -> Probe {
        let symmetricKey = SymmetricKey(data: key)
        return Probe(
            workload: .repeating { blackHole(HMAC<SHA256>.authenticationCode(for: message, using: symmetricKey)) },
            output: { Array(HMAC<SHA256>.authenticationCode(for: message, using: symmetricKey)) })
    }

    static func hkdf(salt: [UInt8], inputKeyMaterial: [UInt8], info: [UInt8], count: Int) -> Probe {
        let ikm = SymmetricKey(data: inputKeyMaterial)
        func derive() -> SymmetricKey {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: count)
        }
        return Probe(workload: .repeating { blackHole(derive()) }, output: { derive().withUnsafeBytes { Array($0) } })
    }

    static func sha512(message: [UInt8]) -> Probe {
        Probe(workload: .repeating { blackHole(SHA512.hash(data: message)) }, output: { Array(SHA512.hash(data: message)) })
    }

    static func aesGCMSeal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8]) throws -> Probe {
        let symmetricKey = SymmetricKey(data: key)
        let gcmNonce = try AES.GCM.Nonce(data: nonce)
        return Probe(
            workload: .repeating { blackHole(try AES.GCM.seal(plaintext, using: symmetricKey, nonce: gcmNonce)) },
            output: {
                let box = try AES.GCM.seal(plaintext, using: symmetricKey, nonce: gcmNonce)
                return Array(box.ciphertext) + Array(box.tag)
            })
    }

    static func aesGCMOpen(key: [UInt8], nonce: [UInt8], ciphertext: [UInt8]) throws -> Probe {
        let symmetricKey = SymmetricKey(data: key)
        let gcmNonce = try AES.GCM.Nonce(data: nonce)
        let body = Array(ciphertext[0..<(ciphertext.count - 16)]), tag = Array(ciphertext[(ciphertext.count - 16)...])
        func open() throws -> Data {
            try AES.GCM.open(AES.GCM.SealedBox(nonce: gcmNonce, ciphertext: body, tag: tag), using: symmetricKey)
        }
        return Probe(workload: .repeating { blackHole(try open()) }, output: { Array(try open()) })
    }
}
