import CSodium

/// X25519 public keys through libsodium's Ed25519 fixed-base table.
///
/// X25519(s, 9) is the u-coordinate of [clamp(s)]·B, where B is the Ed25519 base point: the
/// birational map u = (1 + y)/(1 − y) sends B to the Montgomery base point u = 9 and commutes
/// with scalar multiplication. libsodium's `crypto_scalarmult_base` runs a full Montgomery
/// ladder (sandy2x on x86-64); its Ed25519 fixed-base multiplication uses precomputed tables
/// and is about twice as fast. So the public key is computed as:
///
/// 1. c = clamp(s) (c[0] &= 248, c[31] &= 127, c[31] |= 64), exactly as X25519 clamps;
/// 2. r = c mod L, with `crypto_core_ed25519_scalar_reduce` on c zero-extended to 64 bytes:
///    B has order L, so [c]B = [r]B, and a canonical scalar suits every libsodium version of
///    step 3 (1.0.18 accepts any scalar below 2^255, later versions might not);
/// 3. P = [r]B with `crypto_scalarmult_ed25519_base_noclamp`;
/// 4. u = (1 + y)/(1 − y) with this library's GF(2^255 − 19) arithmetic.
///
/// P is never the identity, where u would be undefined: c = 8k with 2^251 ≤ k < 2^252 < L and
/// gcd(8, L) = 1, so c ≢ 0 (mod L). libsodium still reports an identity result (or r = 0) as
/// an error, and then the caller falls back to the ladder. The clamped and reduced scalars live
/// in a stack buffer that is wiped before returning.
enum X25519FixedBase {
    /// Writes X25519(secret, 9) into `output` (32 bytes) through the Edwards route. Returns
    /// false, with `output` unspecified, when libsodium refused the scalar multiplication.
    static func publicKey(secret: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard secret.count == 32, output.count >= 32, Sodium.isInitialized else { return false }
        // 64 bytes: the zero-extended clamped scalar; 32 bytes: the reduced scalar;
        // 32 bytes: the Edwards point.
        return withUnsafeTemporaryAllocation(byteCount: 128, alignment: 16) { scratch -> Bool in
            guard let base = scratch.baseAddress else { return false }
            let wide = base.assumingMemoryBound(to: UInt8.self)
            let reduced = wide + 64
            let point = wide + 96
            defer { sodium_memzero(base, 128) }
            wide.initialize(repeating: 0, count: 128)
            for index in 0..<32 { wide[index] = secret[index] }
            wide[0] &= 248
            wide[31] &= 127
            wide[31] |= 64
            crypto_core_ed25519_scalar_reduce(reduced, wide)
            guard crypto_scalarmult_ed25519_base_noclamp(point, reduced) == 0 else { return false }
            let y = FieldElement(bytes: UnsafeRawBufferPointer(start: point, count: 32))
            FieldElement.montgomeryU(fromEdwardsY: y).encode(into: output)
            return true
        }
    }
}
