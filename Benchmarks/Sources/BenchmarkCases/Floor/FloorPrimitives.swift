import BenchmarkHarness
import CSodiumBench

/// The floor's side of the primitive cases: one libsodium call per operation on buffers
/// allocated once.
enum FloorPrimitives {
    static func x25519KeyGeneration(secret: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        let publicKey = RawBytes(count: 32), secretKey = RawBytes(count: 32)
        return Probe(
            workload: .repeating { crypto_box_keypair(publicKey.mutable.u8, secretKey.mutable.u8) },
            output: {
                var out = [UInt8](repeating: 0, count: 32)
                _ = crypto_scalarmult_base(&out, secret)
                return out
            })
    }

    static func x25519Agreement(secret: [UInt8], peer: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        let sk = RawBytes(secret), pk = RawBytes(peer), out = RawBytes(count: 32)
        return Probe(
            workload: .repeating {
                guard crypto_scalarmult(out.mutable.u8, sk.readable.u8, pk.readable.u8) == 0 else {
                    throw CheckFailure("crypto_scalarmult failed")
                }
            },
            output: {
                _ = crypto_scalarmult(out.mutable.u8, sk.readable.u8, pk.readable.u8)
                return out.array
            })
    }

    static func ed25519Signing(seed: [UInt8], message: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        let pk = RawBytes(count: 32), sk = RawBytes(count: 64), m = RawBytes(message), sig = RawBytes(count: 64)
        crypto_sign_seed_keypair(pk.mutable.u8, sk.mutable.u8, seed)
        func sign() { crypto_sign_detached(sig.mutable.u8, nil, m.readable.u8, UInt64(message.count), sk.readable.u8) }
        return Probe(workload: .repeating(sign), output: { sign(); return sig.array })
    }

    static func ed25519Verification(publicKey: [UInt8], signature: [UInt8], message: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        let pk = RawBytes(publicKey), m = RawBytes(message), sig = RawBytes(signature)
        func verify() -> Bool {
            crypto_sign_verify_detached(sig.readable.u8, m.readable.u8, UInt64(message.count), pk.readable.u8) == 0
        }
        return Probe(
            workload: .repeating { guard verify() else { throw CheckFailure("signature rejected") } },
            output: { [verify() ? 1 : 0] })
    }

    static func ed25519ToX25519(publicKey: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        let pk = RawBytes(publicKey), out = RawBytes(count: 32)
        func convert() throws { try SodiumBackend.ed25519PublicKeyToX25519(pk.readable, into: out.mutable) }
        return Probe(workload: .repeating(convert), output: { try convert(); return out.array })
    }

    static func hmac(key: [UInt8], message: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        let k = RawBytes(key), m = RawBytes(message), out = RawBytes(count: 32)
        func mac() { crypto_auth_hmacsha256(out.mutable.u8, m.readable.u8, UInt64(message.count), k.readable.u8) }
        return Probe(workload: .repeating(mac), output: { mac(); return out.array })
    }

    static func hkdf(salt: [UInt8], inputKeyMaterial: [UInt8], info: [UInt8], count: Int) -> Probe {
        _ = SodiumBackend.isReady
        let s = RawBytes(salt), ikm = RawBytes(inputKeyMaterial), i = RawBytes(info), out = RawBytes(count: count)
        func derive() {
            SodiumBackend.hkdfSHA256(salt: s.readable, inputKeyMaterial: ikm.readable, info: i.readable, into: out.mutable)
        }
        return Probe(workload: .repeating(derive), output: { derive(); return out.array })
    }

    static func sha512(message: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        let m = RawBytes(message), out = RawBytes(count: 64)
        func hash() { crypto_hash_sha512(out.mutable.u8, m.readable.u8, UInt64(message.count)) }
        return Probe(workload: .repeating(hash), output: { hash(); return out.array })
    }

    static func aesGCMSeal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        let k = RawBytes(key), n = RawBytes(nonce), p = RawBytes(plaintext), out = RawBytes(count: plaintext.count + 16)
        func seal() throws {
            var written: UInt64 = 0
            guard crypto_aead_aes256gcm_encrypt(
                out.mutable.u8, &written, p.readable.u8, UInt64(plaintext.count), emptyBytes.u8, 0, nil,
                n.readable.u8, k.readable.u8) == 0
            else { throw CheckFailure("crypto_aead_aes256gcm_encrypt failed") }
        }
        return Probe(workload: .repeating(seal), output: { try seal(); return out.array })
    }

    static func aesGCMOpen(key: [UInt8], nonce: [UInt8], ciphertext: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        let k = RawBytes(key), n = RawBytes(nonce), c = RawBytes(ciphertext), out = RawBytes(count: ciphertext.count - 16)
        func open() throws {
            var written: UInt64 = 0
            guard crypto_aead_aes256gcm_decrypt(
                out.mutable.u8, &written, nil, c.readable.u8, UInt64(ciphertext.count), emptyBytes.u8, 0,
                n.readable.u8, k.readable.u8) == 0
            else { throw CheckFailure("crypto_aead_aes256gcm_decrypt failed") }
        }
        return Probe(workload: .repeating(open), output: { try open(); return out.array })
    }
}

/// The floor of the array-returning calls: the same libsodium call, composed the naive way a
/// Swift caller returns a new array (`[UInt8](repeating: 0, count: n)`, then the C call into
/// it). The result is allocated on every operation, as the library's array calls must do;
/// the `.buffer` rows compare the caller-buffer calls with the floors above, which write into
/// a buffer allocated once.
extension FloorPrimitives {
    static func sha512Array(message: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        func hash() -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 64)
            crypto_hash_sha512(&out, message, UInt64(message.count))
            return out
        }
        return Probe(workload: .repeating { blackHole(hash()) }, output: hash)
    }

    static func aesGCMSealArray(key: [UInt8], nonce: [UInt8], plaintext: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        func seal() throws -> [UInt8] {
            var out = [UInt8](repeating: 0, count: plaintext.count + 16)
            var written: UInt64 = 0
            guard crypto_aead_aes256gcm_encrypt(
                &out, &written, plaintext, UInt64(plaintext.count), nil, 0, nil, nonce, key) == 0
            else { throw CheckFailure("crypto_aead_aes256gcm_encrypt failed") }
            return out
        }
        return Probe(workload: .repeating { blackHole(try seal()) }, output: seal)
    }

    static func aesGCMOpenArray(key: [UInt8], nonce: [UInt8], ciphertext: [UInt8]) -> Probe {
        _ = SodiumBackend.isReady
        func open() throws -> [UInt8] {
            var out = [UInt8](repeating: 0, count: ciphertext.count - 16)
            var written: UInt64 = 0
            guard crypto_aead_aes256gcm_decrypt(
                &out, &written, nil, ciphertext, UInt64(ciphertext.count), nil, 0, nonce, key) == 0
            else { throw CheckFailure("crypto_aead_aes256gcm_decrypt failed") }
            return out
        }
        return Probe(workload: .repeating { blackHole(try open()) }, output: open)
    }
}

extension FloorPrimitives {
    /// An Ed25519 public key and the signature of `message` under `seed` (inputs for other cases).
    static func signedMessage(seed: [UInt8], message: [UInt8]) -> (publicKey: [UInt8], signature: [UInt8]) {
        _ = SodiumBackend.isReady
        var publicKey = [UInt8](repeating: 0, count: 32), secretKey = [UInt8](repeating: 0, count: 64)
        crypto_sign_seed_keypair(&publicKey, &secretKey, seed)
        var signature = [UInt8](repeating: 0, count: 64)
        crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey)
        return (publicKey, signature)
    }

    /// ciphertext || tag of `plaintext` (an input for the open cases).
    static func sealed(key: [UInt8], nonce: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        _ = SodiumBackend.isReady
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var written: UInt64 = 0
        crypto_aead_aes256gcm_encrypt(&out, &written, plaintext, UInt64(plaintext.count), nil, 0, nil, nonce, key)
        return out
    }
}
