import BenchmarkHarness

/// The primitive cases: SignalPrimitives against one libsodium call and against swift-crypto.
enum PrimitiveCases {
    /// library / floor ≤ 1.10 for every primitive (every row of the suite).
    static let primitiveTarget = RatioTargets(floor: 1.10)

    static var all: [BenchmarkCase] {
        [x25519KeyGeneration(), x25519Agreement(), x25519AgreementIntoBuffer(), ed25519Signing(),
         ed25519Verification(), ed25519ToX25519(), hmac(), hkdf()]
            + sha512(size: 64) + sha512(size: 1024)
            + aesGCM(size: 64, label: "64B") + aesGCM(size: 1024, label: "1KiB") + aesGCM(size: 65536, label: "64KiB")
    }

    static func x25519KeyGeneration() -> BenchmarkCase {
        let secret = Fixture.bytes(32)
        return .probing(
            name: "x25519.keygen", summary: "new random X25519 key pair (secret + public key)", group: .primitives,
            // The floor is libsodium's ladder; the library/swift-crypto ratio is reported.
            targets: primitiveTarget,
            library: { LibraryPrimitives.x25519KeyGeneration(secret: secret) },
            floor: { FloorPrimitives.x25519KeyGeneration(secret: secret) },
            swiftCrypto: { SwiftCryptoPrimitives.x25519KeyGeneration(secret: secret) })
    }

    static func x25519Agreement() -> BenchmarkCase {
        let secret = Fixture.bytes(32), peer = Fixture.bytes(32)
        return .probing(
            name: "x25519.dh", summary: "X25519 shared secret, returned as a key", group: .primitives,
            targets: primitiveTarget,
            library: { try LibraryPrimitives.x25519Agreement(secret: secret, peer: peer) },
            floor: { FloorPrimitives.x25519Agreement(secret: secret, peer: peer) },
            swiftCrypto: { try SwiftCryptoPrimitives.x25519Agreement(secret: secret, peer: peer) })
    }

    static func x25519AgreementIntoBuffer() -> BenchmarkCase {
        let secret = Fixture.bytes(32), peer = Fixture.bytes(32)
        return .probing(
            name: "x25519.dh.buffer", summary: "X25519 shared secret into a caller buffer", group: .primitives,
            targets: primitiveTarget,
            library: { try LibraryPrimitives.x25519AgreementIntoBuffer(secret: secret, peer: peer) },
            floor: { FloorPrimitives.x25519Agreement(secret: secret, peer: peer) },
            swiftCrypto: { try SwiftCryptoPrimitives.x25519Agreement(secret: secret, peer: peer) })
    }

    static func ed25519Signing() -> BenchmarkCase {
        let seed = Fixture.bytes(32), message = Fixture.bytes(64)
        return .probing(
            name: "ed25519.sign.64B", summary: "Ed25519 signature of 64 bytes", group: .primitives,
            targets: primitiveTarget,
            library: { try LibraryPrimitives.ed25519Signing(seed: seed, message: message) },
            floor: { FloorPrimitives.ed25519Signing(seed: seed, message: message) },
            swiftCrypto: { try SwiftCryptoPrimitives.ed25519Signing(seed: seed, message: message) })
    }

    static func ed25519Verification() -> BenchmarkCase {
        let seed = Fixture.bytes(32), message = Fixture.bytes(64)
        // The public key and signature come from the floor's deterministic signing.
        let material = FloorPrimitives.signedMessage(seed: seed, message: message)
        return .probing(
            name: "ed25519.verify.64B", summary: "Ed25519 verification of 64 bytes", group: .primitives,
            targets: primitiveTarget,
            library: {
                try LibraryPrimitives.ed25519Verification(
                    publicKey: material.publicKey, signature: material.signature, message: message)
            },
            floor: {
                FloorPrimitives.ed25519Verification(
                    publicKey: material.publicKey, signature: material.signature, message: message)
            },
            swiftCrypto: {
                try SwiftCryptoPrimitives.ed25519Verification(
                    publicKey: material.publicKey, signature: material.signature, message: message)
            })
    }

    static func ed25519ToX25519() -> BenchmarkCase {
        let publicKey = FloorPrimitives.signedMessage(seed: Fixture.bytes(32), message: []).publicKey
        return .probing(
            name: "ed25519-to-x25519.public", summary: "validate an Ed25519 public key and map it to X25519",
            group: .primitives, targets: primitiveTarget,
            library: { try LibraryPrimitives.ed25519ToX25519(publicKey: publicKey) },
            floor: { FloorPrimitives.ed25519ToX25519(publicKey: publicKey) },
            swiftCrypto: nil)
    }

    static func hmac() -> BenchmarkCase {
        let key = Fixture.bytes(32), message = Fixture.bytes(64)
        return .probing(
            name: "hmac-sha256.64B", summary: "HMAC-SHA256 of 64 bytes under a new 32-byte key", group: .primitives,
            targets: primitiveTarget,
            library: { LibraryPrimitives.hmac(key: key, message: message) },
            floor: { FloorPrimitives.hmac(key: key, message: message) },
            swiftCrypto: { SwiftCryptoPrimitives.hmac(key: key, message: message) })
    }

    static func hkdf() -> BenchmarkCase {
        // The shape of KDF_RK: a 32-byte salt (the root key), 32 bytes of DH output, 64 bytes out.
        let salt = Fixture.bytes(32), ikm = Fixture.bytes(32), info = Array("SessionKit Ratchet v2".utf8)
        return .probing(
            name: "hkdf-sha256.64B", summary: "HKDF-SHA256 extract and expand to 64 bytes (KDF_RK's shape)",
            group: .primitives, targets: primitiveTarget,
            library: { LibraryPrimitives.hkdf(salt: salt, inputKeyMaterial: ikm, info: info, count: 64) },
            floor: { FloorPrimitives.hkdf(salt: salt, inputKeyMaterial: ikm, info: info, count: 64) },
            swiftCrypto: { SwiftCryptoPrimitives.hkdf(salt: salt, inputKeyMaterial: ikm, info: info, count: 64) })
    }

    /// SHA-512 through the array call and through the caller-buffer call.
    static func sha512(size: Int) -> [BenchmarkCase] {
        let message = Fixture.bytes(size)
        let label = size >= 1024 ? "\(size / 1024)KiB" : "\(size)B"
        return [
            .probing(
                name: "sha512.\(label)", summary: "SHA-512 of \(label), returning a new array", group: .primitives,
                targets: primitiveTarget,
                library: { LibraryPrimitives.sha512(message: message) },
                floor: { FloorPrimitives.sha512Array(message: message) },
                swiftCrypto: { SwiftCryptoPrimitives.sha512(message: message) }),
            .probing(
                name: "sha512.\(label).buffer", summary: "SHA-512 of \(label) into a caller buffer", group: .primitives,
                targets: primitiveTarget,
                library: { LibraryPrimitives.sha512IntoBuffer(message: message) },
                floor: { FloorPrimitives.sha512(message: message) },
                swiftCrypto: { SwiftCryptoPrimitives.sha512(message: message) }),
        ]
    }

    /// Seal and open, each through the array API and the caller-buffer API.
    static func aesGCM(size: Int, label: String) -> [BenchmarkCase] {
        let key = Fixture.bytes(32), nonce = Fixture.bytes(12), plaintext = Fixture.bytes(size)
        let ciphertext = FloorPrimitives.sealed(key: key, nonce: nonce, plaintext: plaintext)
        let target = primitiveTarget
        return [
            .probing(
                name: "aes256gcm.seal.\(label)", summary: "AES-256-GCM seal of \(label), returning a new array",
                group: .primitives, targets: target,
                library: { LibraryPrimitives.aesGCMSeal(key: key, nonce: nonce, plaintext: plaintext) },
                floor: { FloorPrimitives.aesGCMSealArray(key: key, nonce: nonce, plaintext: plaintext) },
                swiftCrypto: { try SwiftCryptoPrimitives.aesGCMSeal(key: key, nonce: nonce, plaintext: plaintext) }),
            .probing(
                name: "aes256gcm.seal.\(label).buffer", summary: "AES-256-GCM seal of \(label) into a caller buffer",
                group: .primitives, targets: target,
                library: { LibraryPrimitives.aesGCMSealIntoBuffer(key: key, nonce: nonce, plaintext: plaintext) },
                floor: { FloorPrimitives.aesGCMSeal(key: key, nonce: nonce, plaintext: plaintext) },
                swiftCrypto: { try SwiftCryptoPrimitives.aesGCMSeal(key: key, nonce: nonce, plaintext: plaintext) }),
            .probing(
                name: "aes256gcm.open.\(label)", summary: "AES-256-GCM open of \(label), returning a new array",
                group: .primitives, targets: target,
                library: { LibraryPrimitives.aesGCMOpen(key: key, nonce: nonce, ciphertext: ciphertext) },
                floor: { FloorPrimitives.aesGCMOpenArray(key: key, nonce: nonce, ciphertext: ciphertext) },
                swiftCrypto: { try SwiftCryptoPrimitives.aesGCMOpen(key: key, nonce: nonce, ciphertext: ciphertext) }),
            .probing(
                name: "aes256gcm.open.\(label).buffer", summary: "AES-256-GCM open of \(label) into a caller buffer",
                group: .primitives, targets: target,
                library: { LibraryPrimitives.aesGCMOpenIntoBuffer(key: key, nonce: nonce, ciphertext: ciphertext) },
                floor: { FloorPrimitives.aesGCMOpen(key: key, nonce: nonce, ciphertext: ciphertext) },
                swiftCrypto: { try SwiftCryptoPrimitives.aesGCMOpen(key: key, nonce: nonce, ciphertext: ciphertext) }),
        ]
    }
}
