import SignalPrimitives

/// The key schedule of age v1 (`age.md`): wrapping a file key in a stanza body, the header
/// MAC key and the payload key.
enum AgeKeyWrap {
    /// The body length of a native stanza: a 16-byte file key and a 16-byte tag.
    static let wrappedKeyByteCount = AgeFileKey.byteCount + ChaCha20Poly1305.tagByteCount
    private static let zeroNonce = [UInt8](repeating: 0, count: ChaCha20Poly1305.nonceByteCount)

    /// ChaCha20-Poly1305(key = wrapKey, nonce = 12 zero bytes, plaintext = file key).
    static func wrap(_ fileKey: AgeFileKey, under wrapKey: SymmetricKey) throws(AgeError) -> [UInt8] {
        do {
            return try fileKey.withUnsafeBytes { (key: UnsafeRawBufferPointer) throws(CryptoError) in
                try wrapKey.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws(CryptoError) in
                    try zeroNonce.withBytes { (n: UnsafeRawBufferPointer) throws(CryptoError) in
                        try [UInt8](uninitializedCount: wrappedKeyByteCount) { (out: UnsafeMutableRawBufferPointer) throws(CryptoError) in
                            try ChaCha20Poly1305.seal(key, key: k, nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0), into: out)
                        }
                    }
                }
            }
        } catch {
            throw .primitive(error)
        }
    }

    /// Opens a stanza body (already checked to be 32 bytes) under `wrapKey`; `nil` when the tag
    /// fails (the stanza is for another key).
    static func unwrap(_ body: [UInt8], under wrapKey: SymmetricKey) throws(AgeError) -> AgeFileKey? {
        var failure: CryptoError?
        let storage = SecureBytes(count: AgeFileKey.byteCount) { (out: UnsafeMutableRawBufferPointer) in
            do throws(CryptoError) {
                _ = try wrapKey.withUnsafeBytes { (k: UnsafeRawBufferPointer) throws(CryptoError) in
                    try body.withBytes { (c: UnsafeRawBufferPointer) throws(CryptoError) in
                        try zeroNonce.withBytes { (n: UnsafeRawBufferPointer) throws(CryptoError) in
                            try ChaCha20Poly1305.open(c, key: k, nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0), into: out)
                        }
                    }
                }
            } catch {
                failure = error
            }
        }
        switch failure {
        case nil: return try AgeFileKey(bytes: storage)
        case .authenticationFailure?: return nil
        case let other?: throw .primitive(other)
        }
    }

    /// HKDF-SHA-256(ikm = file key, salt, info), 32 bytes.
    static func derive(from fileKey: AgeFileKey, salt: [UInt8], info: String) throws(AgeError) -> SymmetricKey {
        do {
            return try HKDF.deriveKey(inputKeyMaterial: SymmetricKey(storage: fileKey.storage), salt: salt,
                                      info: Array(info.utf8), outputByteCount: 32)
        } catch {
            throw .primitive(error)
        }
    }

    /// The header MAC key: HKDF(ikm = file key, salt = empty, info = "header").
    static func headerMACKey(_ fileKey: AgeFileKey) throws(AgeError) -> SymmetricKey {
        try derive(from: fileKey, salt: [], info: "header")
    }

    /// HMAC-SHA-256 of the header bytes up to and including `---`.
    static func headerMAC(_ fileKey: AgeFileKey, over header: [UInt8]) throws(AgeError) -> [UInt8] {
        let key = try headerMACKey(fileKey)
        return key.withUnsafeBytes { k in
            var mac = HMACSHA256(key: k)
            defer { mac.wipe() }
            header.withUnsafeBytes { mac.update(bytes: $0) }
            return mac.finalize()
        }
    }
}
