import SignalPrimitives

/// The checks of one Wycheproof `AeadTest` test, shared by the AEAD algorithms: a valid test
/// must open `ct || tag` to `msg` and seal `msg` to exactly `ct || tag`; an invalid test must
/// fail to open; an acceptable test may fail to open but must not open to anything but `msg`.
enum AEADVectorCheck {
    /// Runs `test` with the algorithm's `open` and `seal` (key, nonce, aad, input).
    /// - Throws: `VectorFailure` for a missing or non-hex field, or a result the expectation
    ///   does not allow.
    static func run(
        _ test: VectorTest, expecting expectation: WycheproofExpectation,
        open: (_ sealed: [UInt8], _ key: SymmetricKey, _ nonce: [UInt8], _ aad: [UInt8]) throws(CryptoError) -> [UInt8],
        seal: (_ message: [UInt8], _ key: SymmetricKey, _ nonce: [UInt8], _ aad: [UInt8]) throws(CryptoError) -> [UInt8]
    ) throws -> VectorOutcome {
        let key = SymmetricKey(data: try test.hex("key"))
        let nonce = try test.hex("iv")
        let aad = try test.hex("aad")
        let message = try test.hex("msg")
        let sealed = try test.hex("ct") + test.hex("tag")

        let opened: [UInt8]?
        do throws(CryptoError) {
            opened = try open(sealed, key, nonce, aad)
        } catch {
            if expectation == .valid { throw VectorFailure("open failed (\(error))") }
            opened = nil
        }
        switch expectation {
        case .invalid:
            if let opened { throw VectorFailure("an invalid ciphertext opened (to \(Hex.encode(opened)))") }
        case .acceptable:
            if let opened { try ExpectedError.equal(opened, message, "opened plaintext") }
        case .valid:
            try ExpectedError.equal(opened ?? [], message, "opened plaintext")
            let resealed: [UInt8]
            do throws(CryptoError) {
                resealed = try seal(message, key, nonce, aad)
            } catch {
                throw VectorFailure("seal failed (\(error))")
            }
            try ExpectedError.equal(resealed, sealed, "ct || tag")
        }
        return .passed
    }
}
