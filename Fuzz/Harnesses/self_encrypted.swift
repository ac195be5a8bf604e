// Harness `self_encrypted`: opening self-encrypted blobs (SPEC §6, v2:
// `0x25 || nonce (24) || XChaCha20-Poly1305(self_key, nonce, pad(plaintext), aad = 0x25 || nonce || context)`).
//
// The opener holds a fixed identity key. Input: a mode byte, a length-prefixed context, then:
//   even mode: raw blob bytes. Errors are exactly SPEC §6's: empty `invalidMessage`, first
//              byte other than 0x25 (version 1's 0x20 included) `unsupportedVersion`, shorter
//              than 41 bytes or not authentic `invalidMessage`. A blob that opens must re-seal
//              (same nonce, same context) to the same bytes.
//   odd mode:  a 24-byte nonce, then a *padded* plaintext that may or may not be valid padding;
//              the harness seals it itself from SPEC §6's formulas (self_key by HKDF from the
//              seed, XChaCha20-Poly1305 from the primitives), so the fuzzer reaches everything
//              behind the tag. `open` must succeed
//              exactly when the padding is valid (SPEC §2), with that plaintext, else throw
//              `invalidPadding`; the same blob under another context or with any byte flipped
//              fails; and sealing the plaintext with the same nonce gives the harness's bytes.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let seed = fixedBytes(32, seed: 0x5E1F)
    static let identity: Ed25519.PrivateKey = {
        guard let key = try? Ed25519.PrivateKey(seed: seed) else { fail("identity key") }
        return key
    }()
    static let opener = SelfEncryption(identityKey: identity)
    static let selfKey: SymmetricKey = {
        guard let key = try? HKDF.deriveKey(inputKeyMaterial: seed, salt: [UInt8](repeating: 0, count: 32),
                                            info: Array("SessionKit Self v2".utf8), outputByteCount: 32) else { fail("self key") }
        return SymmetricKey(data: key)
    }()

    /// SPEC §6 sealing of an already padded plaintext, from the primitives.
    static func seal(padded: [UInt8], nonce: [UInt8], context: [UInt8]) -> [UInt8] {
        let header = [0x25] + nonce
        guard let ct = try? XChaCha20Poly1305.seal(padded, using: selfKey, nonce: nonce, authenticating: header + context) else {
            fail("XChaCha20-Poly1305 failed")
        }
        return header + ct
    }

    static func reseal(_ plaintext: [UInt8], nonce: [UInt8], context: [UInt8]) -> [UInt8] {
        do {
            return try SelfEncryption(identityKey: identity, using: FixedRandomSource(bytes: nonce)).seal(plaintext, context: context)
        } catch {
            fail("seal threw \(error)")
        }
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        let context = input.chunk()
        if mode & 1 == 0 {
            let blob = input.rest()
            do {
                let plaintext = try opener.open(blob, context: context)
                invariant(reseal(plaintext, nonce: Array(blob[1 ..< 25]), context: context) == blob,
                          "an opened blob does not re-seal to its bytes")
            } catch {
                let expected: SessionError = blob.first.map { $0 == 0x25 ? .invalidMessage : .unsupportedVersion } ?? .invalidMessage
                invariant(error == expected, "open threw \(error), expected \(expected)")
            }
            return
        }
        var nonce = input.take(24)
        nonce += [UInt8](repeating: 0, count: 24 - nonce.count)
        let padded = input.rest()
        let blob = seal(padded: padded, nonce: nonce, context: context)
        let expected = try? MessagePadding.unpad(padded)
        do {
            let plaintext = try opener.open(blob, context: context)
            invariant(plaintext == expected, "opened to \(plaintext.count) bytes, padding says \(String(describing: expected?.count))")
        } catch {
            invariant(error == .invalidPadding && expected == nil, "authentic blob threw \(error)")
        }
        if let expected, let valid = try? MessagePadding.pad(expected), valid == padded {
            invariant(reseal(expected, nonce: nonce, context: context) == blob, "seal differs from SPEC §6")
        }
        do {
            _ = try opener.open(blob, context: context + [0])
            fail("opened under another context")
        } catch {
            invariant(error == .invalidMessage, "other context threw \(error)")
        }
        var flipped = blob
        let at = padded.count % blob.count
        flipped[at] ^= 0x01
        do {
            _ = try opener.open(flipped, context: context)
            fail("opened with byte \(at) flipped")
        } catch {
            invariant(error == (at == 0 ? .unsupportedVersion : .invalidMessage), "flipped byte \(at) threw \(error)")
        }
    }

    static func seeds() -> [[UInt8]] {
        let nonce = fixedBytes(24, seed: 3)
        var seeds: [[UInt8]] = []
        for (plaintext, context) in [([UInt8](), [UInt8]()), (Array("note to self".utf8), Array("conversation-1".utf8))] {
            let blob = reseal(plaintext, nonce: nonce, context: context)
            seeds.append([0] + chunk(context) + blob)
            if let padded = try? MessagePadding.pad(plaintext) { seeds.append([1] + chunk(context) + nonce + padded) }
        }
        seeds.append([1] + chunk([]) + nonce + [0x01, 0, 0, 0, 0])
        seeds.append([1] + chunk([]) + nonce + [0x02, 0, 0, 0, 0])
        seeds.append([0] + chunk([]) + [0x25] + [UInt8](repeating: 0, count: 39))
        seeds.append([0] + chunk([]) + [0x25] + [UInt8](repeating: 0, count: 40))
        seeds.append([0] + chunk([]) + [0x20] + [UInt8](repeating: 0, count: 60))
        seeds.append([0] + chunk([]) + [0x26])
        return seeds
    }
}
