import CSodium

/// HKDF with SHA-256 (RFC 5869), built on libsodium's HMAC-SHA256 (libsodium 1.0.18 has no HKDF).
public enum HKDF {
    /// The largest output HKDF-SHA256 can produce: 255 × 32 bytes.
    public static let maximumOutputByteCount = 255 * 32

    /// HKDF-Extract: PRK = HMAC(salt, ikm). An empty salt means 32 zero bytes (RFC 5869 §2.2).
    public static func extract(salt: [UInt8], inputKeyMaterial ikm: [UInt8]) -> SymmetricKey {
        Extractor(salt: salt).extract(inputKeyMaterial: ikm)
    }

    /// HKDF-Expand: writes `output.count` bytes of OKM derived from `prk` and `info`.
    /// - Throws: `CryptoError.invalidOutputLength` when more than 8160 bytes are requested.
    public static func expand(
        pseudoRandomKey prk: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) {
        var keyed = HMACSHA256(key: prk)
        defer { keyed.wipe() }
        try expand(keyedState: keyed, info: info, into: output)
    }

    /// HKDF-Expand from an HMAC already keyed with the PRK (so callers can reuse the keyed state).
    /// - Throws: `CryptoError.invalidOutputLength` when more than 8160 bytes are requested.
    public static func expand(
        keyedState: HMACSHA256, info: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) {
        let length = output.count
        guard length <= maximumOutputByteCount else {
            throw .invalidOutputLength(requested: length, maximum: maximumOutputByteCount)
        }
        guard length > 0, let outBase = output.baseAddress else { return }
        var block = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        defer { withUnsafeMutableBytes(of: &block) { SecureMemory.zero($0) } }
        try withUnsafeMutableBytes(of: &block) { (t: UnsafeMutableRawBufferPointer) throws(CryptoError) in
            var produced = 0
            var counter: UInt8 = 1
            var previousLength = 0
            while produced < length {
                var mac = keyedState
                mac.update(bytes: UnsafeRawBufferPointer(start: t.baseAddress, count: previousLength))
                mac.update(bytes: info)
                withUnsafeBytes(of: &counter) { mac.update(bytes: $0) }
                try mac.finalize(into: t)
                let take = min(32, length - produced)
                UnsafeMutableRawBufferPointer(start: outBase + produced, count: take)
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: t[0..<take]))
                produced += take
                previousLength = 32
                counter &+= 1
            }
        }
    }

    /// HKDF-Expand returning a new array of `outputByteCount` bytes.
    /// - Throws: `CryptoError.invalidOutputLength` for a negative length or more than 8160 bytes.
    public static func expand(pseudoRandomKey prk: SymmetricKey, info: [UInt8], outputByteCount: Int) throws(CryptoError) -> [UInt8] {
        guard (0 ... maximumOutputByteCount).contains(outputByteCount) else {
            throw .invalidOutputLength(requested: outputByteCount, maximum: maximumOutputByteCount)
        }
        var out = ByteArrays.zeroed(outputByteCount)
        try prk.withUnsafeBytes { (p: UnsafeRawBufferPointer) throws(CryptoError) in
            try info.withBytes { (i: UnsafeRawBufferPointer) throws(CryptoError) in
                try out.withMutableBytes { (o: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                    try expand(pseudoRandomKey: p, info: i, into: o)
                }
            }
        }
        return out
    }

    /// Extract-then-expand in one call: `outputByteCount` bytes from `ikm`, `salt` and `info`.
    /// - Throws: `CryptoError.invalidOutputLength` for a negative length or more than 8160 bytes.
    public static func deriveKey(
        inputKeyMaterial ikm: [UInt8], salt: [UInt8], info: [UInt8], outputByteCount: Int
    ) throws(CryptoError) -> [UInt8] {
        try Extractor(salt: salt).deriveKey(inputKeyMaterial: ikm, info: info, outputByteCount: outputByteCount)
    }

    /// Extract-then-expand from a secret to a secret: `outputByteCount` bytes in zeroing storage,
    /// so neither the input key material nor the derived key passes through an unwiped array.
    /// - Throws: `CryptoError.invalidOutputLength` for a negative length or more than 8160 bytes.
    public static func deriveKey(
        inputKeyMaterial ikm: SymmetricKey, salt: [UInt8], info: [UInt8], outputByteCount: Int
    ) throws(CryptoError) -> SymmetricKey {
        guard (0 ... maximumOutputByteCount).contains(outputByteCount) else {
            throw .invalidOutputLength(requested: outputByteCount, maximum: maximumOutputByteCount)
        }
        let extractor = Extractor(salt: salt)
        let storage = try SecureBytes(count: outputByteCount) { (out: UnsafeMutableRawBufferPointer) throws(CryptoError) in
            try ikm.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws(CryptoError) in
                try info.withBytes { (i: UnsafeRawBufferPointer) throws(CryptoError) in
                    try extractor.deriveKey(inputKeyMaterial: k, info: i, into: out)
                }
            }
        }
        return SymmetricKey(storage: storage)
    }

    /// HKDF with a fixed salt whose HMAC key schedule is computed once.
    ///
    /// The protocol derives most keys with the same salt (32 zero bytes); keeping the keyed
    /// HMAC state saves two SHA-256 compressions per derivation.
    public struct Extractor: Sendable {
        @usableFromInline let keyed: HMACSHA256

        /// Precomputes the HMAC state for `salt` (empty means 32 zero bytes).
        public init(salt: [UInt8]) {
            if salt.isEmpty {
                keyed = HMACSHA256(key: [UInt8](repeating: 0, count: 32))
            } else {
                keyed = HMACSHA256(key: salt)
            }
        }

        /// HKDF-Extract of `ikm` under this salt.
        public func extract(inputKeyMaterial ikm: [UInt8]) -> SymmetricKey {
            ikm.withUnsafeBytes { extract(inputKeyMaterial: $0) }
        }

        /// HKDF-Extract of `ikm` under this salt.
        public func extract(inputKeyMaterial ikm: UnsafeRawBufferPointer) -> SymmetricKey {
            var mac = keyed
            mac.update(bytes: ikm)
            let storage = SecureBytes(count: 32) { (out: UnsafeMutableRawBufferPointer) in
                // The buffer is exactly 32 bytes, so finalize cannot fail.
                try? mac.finalize(into: out)
            }
            return SymmetricKey(storage: storage)
        }

        /// Extract-then-expand into `output` (at most 8160 bytes).
        /// - Throws: `CryptoError.invalidOutputLength` when `output` is longer than 8160 bytes.
        public func deriveKey(
            inputKeyMaterial ikm: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
            into output: UnsafeMutableRawBufferPointer
        ) throws(CryptoError) {
            guard output.count <= HKDF.maximumOutputByteCount else {
                throw .invalidOutputLength(requested: output.count, maximum: HKDF.maximumOutputByteCount)
            }
            var prk = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            defer { withUnsafeMutableBytes(of: &prk) { SecureMemory.zero($0) } }
            var mac = keyed
            mac.update(bytes: ikm)
            try withUnsafeMutableBytes(of: &prk) { (p: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                try mac.finalize(into: p)
                try HKDF.expand(pseudoRandomKey: UnsafeRawBufferPointer(p), info: info, into: output)
            }
        }

        /// Extract-then-expand returning a new array.
        /// - Throws: `CryptoError.invalidOutputLength` for a negative length or more than 8160 bytes.
        public func deriveKey(inputKeyMaterial ikm: [UInt8], info: [UInt8], outputByteCount: Int) throws(CryptoError) -> [UInt8] {
            guard (0 ... HKDF.maximumOutputByteCount).contains(outputByteCount) else {
                throw .invalidOutputLength(requested: outputByteCount, maximum: HKDF.maximumOutputByteCount)
            }
            var out = ByteArrays.zeroed(outputByteCount)
            try ikm.withBytes { (k: UnsafeRawBufferPointer) throws(CryptoError) in
                try info.withBytes { (i: UnsafeRawBufferPointer) throws(CryptoError) in
                    try out.withMutableBytes { (o: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                        try deriveKey(inputKeyMaterial: k, info: i, into: o)
                    }
                }
            }
            return out
        }
    }
}

extension HKDF.Extractor: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A redacted description: the salt can be a secret (the ratchet salts with the root key).
    public var description: String { "HKDF.Extractor(salt redacted)" }
    /// A redacted description.
    public var debugDescription: String { description }
    /// A mirror without children, so `dump` and debuggers do not show the keyed salt.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
