import BenchmarkHarness
import SignalPrimitives

/// The library's side of the primitive cases: SignalPrimitives' public API as an app calls it.
enum LibraryPrimitives {
    static func x25519KeyGeneration(secret: [UInt8]) -> Probe {
        let random = SystemRandomSource()
        return Probe(
            workload: .repeating { blackHole(try X25519.PrivateKey(using: random).publicKey) },
            output: { try X25519.PrivateKey(rawRepresentation: secret).publicKey.rawRepresentation })
    }

    static func x25519Agreement(secret: [UInt8], peer: [UInt8]) throws -> Probe {
        let key = try X25519.PrivateKey(rawRepresentation: secret)
        let publicKey = try X25519.PublicKey(rawRepresentation: peer)
        return Probe(
            workload: .repeating { blackHole(try key.sharedSecret(with: publicKey)) },
            output: { try key.sharedSecret(with: publicKey).storage.bytes })
    }

    static func x25519AgreementIntoBuffer(secret: [UInt8], peer: [UInt8]) throws -> Probe {
        let key = try X25519.PrivateKey(rawRepresentation: secret)
        let publicKey = try X25519.PublicKey(rawRepresentation: peer)
        let output = RawBytes(count: 32)
        return Probe(
            workload: .repeating { try key.sharedSecret(with: publicKey, into: output.mutable) },
            output: {
                try key.sharedSecret(with: publicKey, into: output.mutable)
                return output.array
            })
    }

    static func ed25519Signing(seed: [UInt8], message: [UInt8]) throws -> Probe {
        let key = try Ed25519.PrivateKey(seed: seed)
        return Probe(
            workload: .repeating { blackHole(key.signature(for: message)) },
            output: { key.signature(for: message) })
    }

    static func ed25519Verification(publicKey: [UInt8], signature: [UInt8], message: [UInt8]) throws -> Probe {
        let key = try Ed25519.PublicKey(rawRepresentation: publicKey)
        return Probe(
            workload: .repeating {
                guard key.isValidSignature(signature, for: message) else { throw CheckFailure("signature rejected") }
            },
            output: { [key.isValidSignature(signature, for: message) ? 1 : 0] })
    }

    static func ed25519ToX25519(publicKey: [UInt8]) throws -> Probe {
        let key = try Ed25519.PublicKey(rawRepresentation: publicKey)
        return Probe(
            workload: .repeating { blackHole(try key.convertToX25519()) },
            output: { try key.convertToX25519().rawRepresentation })
    }

    static func hmac(key: [UInt8], message: [UInt8]) -> Probe {
        Probe(
            workload: .repeating { blackHole(HMACSHA256.authenticationCode(for: message, using: key)) },
            output: { HMACSHA256.authenticationCode(for: message, using: key) })
    }

    static func hkdf(salt: [UInt8], inputKeyMaterial: [UInt8], info: [UInt8], count: Int) -> Probe {
        Probe(
            workload: .repeating {
                blackHole(try HKDF.deriveKey(inputKeyMaterial: inputKeyMaterial, salt: salt, info: info, outputByteCount: count))
            },
            output: { try HKDF.deriveKey(inputKeyMaterial: inputKeyMaterial, salt: salt, info: info, outputByteCount: count) })
    }

    static func sha512(message: [UInt8]) -> Probe {
        Probe(workload: .repeating { blackHole(SHA512.hash(message)) }, output: { SHA512.hash(message) })
    }

    static func sha512IntoBuffer(message: [UInt8]) -> Probe {
        let output = RawBytes(count: SHA512.byteCount)
        func hash() throws { try message.withUnsafeBytes { try SHA512.hash(bytes: $0, into: output.mutable) } }
        return Probe(workload: .repeating(hash), output: { try hash(); return output.array })
    }

    static func aesGCMSeal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8]) -> Probe {
        let symmetricKey = SymmetricKey(data: key)
        return Probe(
            workload: .repeating { blackHole(try AES256GCM.seal(plaintext, using: symmetricKey, nonce: nonce)) },
            output: { try AES256GCM.seal(plaintext, using: symmetricKey, nonce: nonce) })
    }

    static func aesGCMOpen(key: [UInt8], nonce: [UInt8], ciphertext: [UInt8]) -> Probe {
        let symmetricKey = SymmetricKey(data: key)
        return Probe(
            workload: .repeating { blackHole(try AES256GCM.open(ciphertext, using: symmetricKey, nonce: nonce)) },
            output: { try AES256GCM.open(ciphertext, using: symmetricKey, nonce: nonce) })
    }

    /// Seal through the caller-buffer call: the app owns the output buffer.
    static func aesGCMSealIntoBuffer(key: [UInt8], nonce: [UInt8], plaintext: [UInt8]) -> Probe {
        let symmetricKey = SymmetricKey(data: key)
        let output = RawBytes(count: plaintext.count + AES256GCM.tagByteCount)
        func seal() throws {
            try symmetricKey.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws in
                try plaintext.withUnsafeBytes { p in
                    try nonce.withUnsafeBytes { n in
                        _ = try AES256GCM.seal(p, key: k, nonce: n, authenticating: emptyBytes, into: output.mutable)
                    }
                }
            }
        }
        return Probe(
            workload: .repeating(seal),
            output: {
                try seal()
                return output.array
            })
    }

    /// Open through the caller-buffer call.
    static func aesGCMOpenIntoBuffer(key: [UInt8], nonce: [UInt8], ciphertext: [UInt8]) -> Probe {
        let symmetricKey = SymmetricKey(data: key)
        let output = RawBytes(count: ciphertext.count - AES256GCM.tagByteCount)
        func open() throws {
            try symmetricKey.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws in
                try ciphertext.withUnsafeBytes { c in
                    try nonce.withUnsafeBytes { n in
                        _ = try AES256GCM.open(c, key: k, nonce: n, authenticating: emptyBytes, into: output.mutable)
                    }
                }
            }
        }
        return Probe(
            workload: .repeating(open),
            output: {
                try open()
                return output.array
            })
    }
}
