import BenchmarkHarness
import CSodiumBench
import SessionKit
import SignalPrimitives

/// `age.scrypt.wrap-unwrap.logN18` (SPEC §10, issue 20): one passphrase recipient at age's
/// default work factor (N = 2^18, r = 8, p = 1: 256 MiB and most of a second per derivation),
/// a file key wrapped (`AgeScryptRecipient.wrap`: a new 16-byte salt, scrypt through the
/// library's `Scrypt`, ChaCha20-Poly1305 with a zero nonce) and unwrapped again
/// (`AgeScryptIdentity.unwrap`: the stanza checked, scrypt again, the tag opened). The floor
/// makes the same two `crypto_pwhash_scryptsalsa208sha256_ll` calls with the same parameters
/// and salt layout ("age-encryption.org/v1/scrypt" ‖ salt) and the two ChaCha20-Poly1305
/// calls. Target: ≤ 1.10 of the floor (scrypt is all of it). In the smoke run (`BENCH_QUICK`)
/// the work factor is 10 (`…logN10`).
enum AgeScryptCases {
    static let target = RatioTargets(floor: 1.10)
    static let passphrase = "correct horse battery staple"
    static let saltLabel = Array("age-encryption.org/v1/scrypt".utf8)

    static var all: [BenchmarkCase] {
        let workFactor = FileRowSizes.scryptWorkFactor
        let fileKey: [UInt8] = (0 ..< 16).map { UInt8($0 &* 11 &+ 5) }
        return [
            BenchmarkCase(
                name: "age.scrypt.wrap-unwrap.logN\(workFactor)",
                summary: "wrap a file key for a passphrase at scrypt work factor \(workFactor) (r = 8, p = 1) and unwrap it (two scrypt derivations)",
                group: .protocol, targets: target, maximumRounds: 9,
                library: {
                    let (recipient, identity, key) = try libraryParts(workFactor: workFactor, fileKey: fileKey)
                    return .repeating { blackHole(try identity.unwrap(try recipient.wrap(key))) }
                },
                floor: { .repeating { blackHole(try Floor.unwrap(Floor.wrap(fileKey, workFactor: workFactor))) } },
                swiftCrypto: nil,
                check: {
                    // Each side unwraps the other's stanza to the file key.
                    let (recipient, identity, key) = try libraryParts(workFactor: workFactor, fileKey: fileKey)
                    let stanza = try recipient.wrap(key)
                    try CheckFailure.expect(stanza.count, equals: 1, "one scrypt stanza")
                    try CheckFailure.expect(stanza[0].arguments.count, equals: 3, "scrypt stanza arguments")
                    guard let salt = Floor.decodeBase64(stanza[0].arguments[1]) else { throw CheckFailure("the library's salt") }
                    try CheckFailure.expect(stanza[0].arguments[2], equals: String(workFactor), "work factor")
                    let openedByFloor = try Floor.unwrap((salt: salt, body: stanza[0].body, workFactor: workFactor))
                    try CheckFailure.expect(hex(openedByFloor), equals: hex(fileKey), "the library's stanza opened by the floor")
                    let floorWrapped = try Floor.wrap(fileKey, workFactor: workFactor)
                    let floorStanza = try AgeStanza(
                        arguments: ["scrypt", Floor.encodeBase64(floorWrapped.salt), String(workFactor)], body: floorWrapped.body)
                    guard let opened = try identity.unwrap([floorStanza]) else { throw CheckFailure("the floor's stanza: no match") }
                    try CheckFailure.expect(
                        hex(opened.withUnsafeBytes { [UInt8]($0) }), equals: hex(fileKey), "the floor's stanza opened by the library")
                })
        ]
    }

    static func libraryParts(workFactor: Int, fileKey: [UInt8]) throws -> (AgeScryptRecipient, AgeScryptIdentity, AgeFileKey) {
        (try AgeScryptRecipient(passphrase: passphrase, workFactor: workFactor),
         try AgeScryptIdentity(passphrase: passphrase),
         try AgeFileKey(bytes: SecureBytes(copying: fileKey)))
    }

    /// The floor: libsodium's scrypt and ChaCha20-Poly1305, one call per step.
    enum Floor {
        static func wrapKey(salt: [UInt8], workFactor: Int) throws -> [UInt8] {
            _ = SodiumBackend.isReady
            let password = Array(passphrase.utf8)
            let fullSalt = saltLabel + salt
            var key = [UInt8](repeating: 0, count: 32)
            guard crypto_pwhash_scryptsalsa208sha256_ll(
                password, password.count, fullSalt, fullSalt.count, UInt64(1) << UInt64(workFactor), 8, 1, &key, key.count) == 0
            else { throw CheckFailure("scrypt failed") }
            return key
        }

        static func wrap(_ fileKey: [UInt8], workFactor: Int) throws -> (salt: [UInt8], body: [UInt8], workFactor: Int) {
            var salt = [UInt8](repeating: 0, count: 16)
            randombytes_buf(&salt, 16)
            let key = try wrapKey(salt: salt, workFactor: workFactor)
            var body = [UInt8](repeating: 0, count: 32)
            let nonce = [UInt8](repeating: 0, count: 12)
            crypto_aead_chacha20poly1305_ietf_encrypt(&body, nil, fileKey, UInt64(fileKey.count), nil, 0, nil, nonce, key)
            return (salt, body, workFactor)
        }

        static func unwrap(_ stanza: (salt: [UInt8], body: [UInt8], workFactor: Int)) throws -> [UInt8] {
            let key = try wrapKey(salt: stanza.salt, workFactor: stanza.workFactor)
            var fileKey = [UInt8](repeating: 0, count: 16)
            let nonce = [UInt8](repeating: 0, count: 12)
            guard crypto_aead_chacha20poly1305_ietf_decrypt(
                &fileKey, nil, nil, stanza.body, UInt64(stanza.body.count), nil, 0, nonce, key) == 0
            else { throw CheckFailure("the wrapped file key does not open") }
            return fileKey
        }

        /// Unpadded standard base64 (age's encoding of stanza arguments).
        static func encodeBase64(_ bytes: [UInt8]) -> String {
            let variant = sodium_base64_VARIANT_ORIGINAL_NO_PADDING
            var out = [CChar](repeating: 0, count: sodium_base64_encoded_len(bytes.count, variant))
            _ = sodium_bin2base64(&out, out.count, bytes, bytes.count, variant)
            return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        static func decodeBase64(_ text: String) -> [UInt8]? {
            let input = Array(text.utf8CString.dropLast())
            var out = [UInt8](repeating: 0, count: input.count)
            var length = 0
            guard sodium_base642bin(&out, out.count, input, input.count, nil, &length, nil,
                                    sodium_base64_VARIANT_ORIGINAL_NO_PADDING) == 0 else { return nil }
            return Array(out[0 ..< length])
        }
    }
}
