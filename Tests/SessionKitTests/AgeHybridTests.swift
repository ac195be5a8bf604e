import Foundation
import SignalPrimitives
import XCTest
@_spi(Testing) import SessionKit
@_spi(Testing) import SessionKitAge
import SessionKitMLKEM
import TestSupport

/// The age `mlkem768x25519` recipient type of SessionKitMLKEM (`AgeHybridRecipient`,
/// `AgeHybridIdentity`): the `age.md` example key pair, round trips, the stanza checks of
/// `age.md` with the CCTV failure categories, and the rule that a post-quantum recipient is not
/// mixed with others. The CCTV `hybrid*` vectors (files written by the Go reference) run in
/// SignalVectorKitTests' AgeTestkitTests.
final class AgeHybridTests: XCTestCase {
    private static let skipMessage = "swift-crypto's X-Wing needs macOS/iOS/tvOS/watchOS/visionOS 26"

    /// The example identity and recipient of C2SP `age.md` ("The MLKEM768-X25519 (i.e. X-Wing)
    /// hybrid post-quantum recipient type").
    static let specIdentity = "AGE-SECRET-KEY-PQ-1XX76JRALNLXDMEW0CRK45QMCCH4X06SE84UN3VPM33W6HWDX0H3SK3ZQFR"
    static let specRecipient = "age1pq1x34nzsvr0rxjsgdn8zgyhfe8j7ceq5r9rdelkjuh3y235jzxshfg87pzf5zrqtzdxz95paef6caq5aapdmwjjqpjfdyxnzr2zampc3uxy0dg4z2n2gm9su72p0pc3u0jvev55l694v78snxg3yzvcl7yda0eyytqj6a0ec477lnhcy5hzpz4zq3pxanve4cn62gqj3pjy5lqj9c6kyj4v2z8alktn8zh99970x79gjkv7522hv9kfz35zsnxhsx8wwtmu9cy3ftzjgwcp4sshn3llnylnpdsyz5jm72vefv4x5vfwytrefxg4wq3mv42wcrvkj742479zrxzpvp2p3e9fed9f0739vcu80r7ma28qfhnvlv4gfzel9q654dj3zmuvvz893azhxdvs9fxd0r7jzchzcfcs5mkyyjxhw0n2z6dvp9yn9qfdp29h0azxqyjw6v7fhyuzj7zel0uq6j9rd7wgrpz7mf5dnj43jwsgvrc8qcnhy7tu6dkdujuxzkp9xj43xe8h92ktre2a3u3s8mm5mrp9nr9pwkgtz4mdlq9hgn4fps4k57ff6wddn2fy23t47sm20r8km8sd2pcyyafnet8f0dajsrlyjeah4n3mssr6aseevuuskdvq5lzguyvpgwpta742c6698vgutzqgny8usfg0w2he7kq5vyxjd0f9hqg8xk26y9e4th0gezq92q4cpp5p2y9hf5f2cje5l0c3sa3a2qxmm38pxxvhxh99yzmfz0zk7r2s64nnwjhkfgfr3gf8xnmppcgmaykvh5sh6g7vk9790rf8ws0axmr2t7z8aae5fq2029uvcn2ghgt4fu4wgwdc0k0cz52qkvwmuzj8p8k5jgf3xzk5zmrkavjekjrpeq408xz3zxazwkc6tyfmhayrkfpjhwtz5mp8j8guqe43k2q6m2kte03vrw27y3wmqyu5etmt9dnkwcnnpmu9gz9dekfhdevf42ucshphnrk38ra6hx8w5f8q5ru0xdhrjxmwqf6cused7zc5xvq43r0zscjglpwlptpwydhqw64xz7ptjdyeyzpq2zkxtmzg29gzjpvzva4d3l0cenn9xs297wf4y4ukwrunf57xj6pm7nvrkwvtrt8hwcmgv8x7ajw7258ugf9wvkmk4052ekg87tw5vnx8nq2swyzv77v8yqlwsenvamr0zssknwts8rrhfuwj7ykysnq9jxy0uv3kuyt22djszjdtvpz6d0s0kwh8ryynddzud92emeyvvyqktd0jtj7rvvg5gch25v8smlvny3kvn5gagyz475ze2y6q466xqmz2n3hs77lddeqyta2nch5k2u5yacuk9ywnwfdzvyejnucz724hj77hrrmakm7pr3kxsrxq22ejexlud9fy2kdqmkg5yncz7jm5wv2qjk5w5kvcpqsry2yqffh2la52dxfjkjq5rzhjzeyn6dupn0qwtyv7s4lwg3xdarsdlwe2y3tujy480y7z39q259fzx6jhd2j0f5hagqpcpees7hzc2yrk5cy788uk3s7qvp5cpepx24gvws3m2g433exgwppnkjscec8qu4y9z9r7vccexjcjaen42245lmgmxmuavg9alej92322gvvyy2t6267v09ch64y0m53jff0vjj96s0ypk60hr3jw4myd6m5hpn3xjstx7tl2szhpr5qe8jj08ydjc4wy2rch2fhuy3pdfjax5awe9j99ly5hkntzz9fe5zatgjvzdd0kgtxs25njnajyf6ssekp7gelxquusn4pt25czh3scj68kq79wdn5tgm6yvm9nzavrg043x3msnygf8dweknw5jmqd0uvny6ttsn09508k0c55zfnegrm9efhxpfqdkmhh6gjtqmwze9pyyzk3tlhl53k2ykx3qheyty7saeq0d3fzv49zc0k"

    func testTheSpecExampleIdentityGivesTheSpecExampleRecipient() throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip(Self.skipMessage) }
        let identity = try AgeHybridIdentity(Self.specIdentity)
        XCTAssertEqual(identity.recipient.string, Self.specRecipient)
        XCTAssertEqual(identity.secretKeyString, Self.specIdentity)
        let recipient = try AgeHybridRecipient(Self.specRecipient)
        XCTAssertEqual(recipient, identity.recipient)
        XCTAssertEqual(recipient.rawRepresentation.count, AgeHybridRecipient.publicKeyByteCount)
        XCTAssertEqual(recipient.labels, ["postquantum"])
        // The description never shows the secret key.
        XCTAssertFalse("\(identity)".contains(Self.specIdentity))
        XCTAssertFalse(String(reflecting: identity).contains("XX76JRALNLXD"))
    }

    /// The example of SessionKitMLKEM.docc's "Post-quantum age files" is the code run here.
    func testTheDocumentationExampleRuns() throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip(Self.skipMessage) }
        // docs: begin
        let identity = try AgeHybridIdentity()                          // AGE-SECRET-KEY-PQ-1…
        let recipient = try AgeHybridRecipient(identity.recipient.string) // age1pq1…, to share
        let file = try AgeEncryptor(recipients: [recipient]).encrypt(Data("hello".utf8))
        let plaintext = try AgeDecryptor(identities: [identity]).decrypt(file)
        // docs: end
        XCTAssertEqual(plaintext, Data("hello".utf8))
        XCTAssertTrue(identity.secretKeyString.hasPrefix("AGE-SECRET-KEY-PQ-1"))
        XCTAssertTrue(recipient.string.hasPrefix("age1pq1"))
        let shown = try PackageDocuments.firstSwiftBlock(
            in: try PackageDocuments.text("Sources/SessionKitMLKEM/SessionKitMLKEM.docc/SessionKitMLKEM.md"),
            after: "## Post-quantum age files")
        let run = try PackageDocuments.lines(
            of: try PackageDocuments.text("Tests/SessionKitTests/AgeHybridTests.swift"),
            between: "        // docs: begin", and: "// docs: end", indentation: 8)
        XCTAssertEqual(shown, run)
    }

    func testRoundTripsBinaryAndArmoredAtChunkBoundaries() throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip(Self.skipMessage) }
        let identity = try AgeHybridIdentity()
        for armored in [false, true] {
            for size in [0, 1, 65536, 65537] {
                let plaintext = Data((0 ..< size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
                let file = try AgeEncryptor(recipients: [identity.recipient], armored: armored).encrypt(plaintext)
                let header = String(decoding: (armored ? Data(try AgeTesting.dearmor(Array(file))) : file).prefix(60), as: UTF8.self)
                XCTAssertTrue(header.hasPrefix("age-encryption.org/v1\n-> mlkem768x25519 "), header)
                XCTAssertEqual(try AgeDecryptor(identities: [identity]).decrypt(file), plaintext, "size \(size) armored \(armored)")
            }
        }
        // A new identity from its string decrypts the same file; a fresh seed each time.
        let file = try AgeEncryptor(recipients: [identity.recipient]).encrypt(Data("hello".utf8))
        XCTAssertEqual(try AgeDecryptor(identities: [try AgeHybridIdentity(identity.secretKeyString)]).decrypt(file), Data("hello".utf8))
        XCTAssertNotEqual(try AgeHybridIdentity().secretKeyString, identity.secretKeyString)
    }

    func testTwoHybridRecipientsMixButNotWithX25519() throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip(Self.skipMessage) }
        let first = try AgeHybridIdentity(), second = try AgeHybridIdentity()
        let file = try AgeEncryptor(recipients: [first.recipient, second.recipient]).encrypt(Data("both".utf8))
        XCTAssertEqual(try AgeDecryptor(identities: [second]).decrypt(file), Data("both".utf8))
        XCTAssertEqual(try AgeDecryptor(identities: [first]).decrypt(file), Data("both".utf8))

        let classic = try AgeX25519Identity()
        for recipients: [any AgeRecipient] in [[first.recipient, classic.recipient], [classic.recipient, first.recipient]] {
            XCTAssertThrowsError(try AgeEncryptor(recipients: recipients).encrypt(Data("x".utf8))) { error in
                guard case .invalidRecipient(let why)? = error as? AgeError else { return XCTFail("\(error)") }
                XCTAssertTrue(why.contains("incompatible"), why)
            }
        }
        let scrypt = try AgeScryptRecipient(passphrase: "a passphrase", workFactor: 10)
        XCTAssertThrowsError(try AgeEncryptor(recipients: [first.recipient, scrypt]).encrypt(Data("x".utf8)))
    }

    func testTheWrongIdentityIsNoMatch() throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip(Self.skipMessage) }
        let identity = try AgeHybridIdentity(), other = try AgeHybridIdentity()
        let file = try AgeEncryptor(recipients: [identity.recipient]).encrypt(Data("secret".utf8))
        XCTAssertEqual(Self.error { try AgeDecryptor(identities: [other]).decrypt(file) }, .noMatch)
        // An X25519 identity ignores the mlkem768x25519 stanza, and the hybrid identity an
        // X25519 one.
        XCTAssertEqual(Self.error { try AgeDecryptor(identities: [try AgeX25519Identity()]).decrypt(file) }, .noMatch)
        let classic = try AgeX25519Identity()
        let classicFile = try AgeEncryptor(recipients: [classic.recipient]).encrypt(Data("secret".utf8))
        XCTAssertEqual(Self.error { try AgeDecryptor(identities: [identity]).decrypt(classicFile) }, .noMatch)
        XCTAssertEqual(try AgeDecryptor(identities: [other, identity]).decrypt(file), Data("secret".utf8))
    }

    /// Each way of damaging the stanza, with the category `age.md` and the CCTV vectors give it.
    func testTamperedStanzas() throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip(Self.skipMessage) }
        let identity = try AgeHybridIdentity()
        let file = Array(try AgeEncryptor(recipients: [identity.recipient]).encrypt(Data("payload".utf8)))
        let (stanzas, mac, length) = try AgeTesting.parseHeader(file)
        XCTAssertEqual(stanzas.count, 1)
        let stanza = try XCTUnwrap(stanzas.first)
        XCTAssertEqual(stanza.arguments.count, 2)
        XCTAssertEqual(stanza.body.count, 32)
        let enc = try XCTUnwrap(Self.base64Decode(stanza.arguments[1]))
        XCTAssertEqual(enc.count, 1120)

        func outcome(_ arguments: [String], _ body: [UInt8]) throws -> AgeError? {
            let tampered = AgeTesting.encodeHeader([try AgeStanza(arguments: arguments, body: body)], mac: mac) + file[length...]
            return Self.error { try AgeDecryptor(identities: [identity]).decrypt(Data(tampered)) }
        }
        // Unchanged, it decrypts (the rebuilt header is the same bytes).
        XCTAssertNil(try outcome(stanza.arguments, stanza.body))

        var flippedBody = stanza.body
        flippedBody[3] ^= 0x01
        XCTAssertEqual(try outcome(stanza.arguments, flippedBody), .noMatch, "a body whose tag fails")
        var flippedKEM = enc
        flippedKEM[100] ^= 0x01
        XCTAssertEqual(try outcome(["mlkem768x25519", Self.base64(flippedKEM)], stanza.body), .noMatch,
                       "ML-KEM rejects implicitly: another shared secret, then the tag fails")
        var flippedShare = enc
        flippedShare[1100] ^= 0x01
        XCTAssertEqual(try outcome(["mlkem768x25519", Self.base64(flippedShare)], stanza.body), .noMatch)
        XCTAssertEqual(try outcome(["MLKEM768X25519", stanza.arguments[1]], stanza.body), .noMatch, "another type is ignored")

        func isHeader(_ error: AgeError?) -> Bool { if case .header? = error { return true } else { return false } }
        XCTAssertTrue(isHeader(try outcome(stanza.arguments, stanza.body + [0])), "a 33-byte body")
        XCTAssertTrue(isHeader(try outcome(stanza.arguments, Array(stanza.body.dropLast()))), "a 31-byte body")
        XCTAssertTrue(isHeader(try outcome(stanza.arguments + ["extra"], stanza.body)), "an extra argument")
        XCTAssertTrue(isHeader(try outcome(["mlkem768x25519"], stanza.body)), "no enc")
        XCTAssertTrue(isHeader(try outcome(["mlkem768x25519", Self.base64(Array(enc.dropLast()))], stanza.body)), "a 1119-byte enc")
        XCTAssertTrue(isHeader(try outcome(["mlkem768x25519", Self.base64(enc + [0])], stanza.body)), "a 1121-byte enc")
        // 1120 bytes end on a 2-character group: its last character carries 4 unused bits.
        var text = Array(stanza.arguments[1].utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let last = try XCTUnwrap(alphabet.firstIndex(of: text[text.count - 1]))
        text[text.count - 1] = alphabet[last | 1]
        XCTAssertTrue(isHeader(try outcome(["mlkem768x25519", String(decoding: text, as: UTF8.self)], stanza.body)), "non-canonical base64")
        // An X25519 share of small order (here zero, then the order-8 point of RFC 7748's
        // list) would give an all-zero X25519 secret: age.md's abort, a header failure.
        for point in [[UInt8](repeating: 0, count: 32),
                      Self.hex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800")] {
            XCTAssertTrue(isHeader(try outcome(["mlkem768x25519", Self.base64(Array(enc.prefix(1088)) + point)], stanza.body)))
        }
        // A malformed stanza of the hybrid type is a header failure for any hybrid identity,
        // including one it is not for.
        let other = try AgeHybridIdentity()
        let extra = AgeTesting.encodeHeader([try AgeStanza(arguments: stanza.arguments + ["extra"], body: stanza.body)], mac: mac) + file[length...]
        XCTAssertTrue(isHeader(Self.error { try AgeDecryptor(identities: [other]).decrypt(Data(extra)) }))
    }

    func testRecipientAndIdentityStringsAreChecked() throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw XCTSkip(Self.skipMessage) }
        let classic = try AgeX25519Identity()
        func recipientError(_ text: String) -> Bool {
            do { _ = try AgeHybridRecipient(text); return false } catch { if case .invalidRecipient = error { return true } else { return false } }
        }
        func identityError(_ text: String) -> Bool {
            do { _ = try AgeHybridIdentity(text); return false } catch { if case .invalidIdentity = error { return true } else { return false } }
        }
        XCTAssertTrue(recipientError(classic.recipient.string), "an X25519 recipient")
        XCTAssertTrue(recipientError(Self.specRecipient.uppercased()), "an uppercase recipient has another HRP")
        XCTAssertTrue(recipientError(String(Self.specRecipient.dropLast()) + "q"), "a wrong checksum")
        XCTAssertTrue(recipientError(""))
        XCTAssertTrue(identityError(classic.secretKeyString), "an X25519 identity")
        XCTAssertTrue(identityError(Self.specIdentity.lowercased()), "a lowercase identity has another HRP")
        XCTAssertTrue(identityError(AgeTesting.bech32Encode(hrp: "AGE-SECRET-KEY-PQ-", data: [UInt8](repeating: 7, count: 31))), "31 bytes")
        XCTAssertTrue(identityError(AgeTesting.bech32Encode(hrp: "AGE-SECRET-KEY-PQ-", data: [UInt8](repeating: 7, count: 64))), "64 bytes")
        XCTAssertThrowsError(try AgeHybridRecipient(rawRepresentation: [UInt8](repeating: 0, count: 1215)))
        // An ML-KEM encapsulation key with a coefficient not reduced mod q (0xFFF) fails FIPS 203's check.
        var raw = try AgeHybridRecipient(Self.specRecipient).rawRepresentation
        raw[0] = 0xFF
        raw[1] |= 0x0F
        XCTAssertThrowsError(try AgeHybridRecipient(rawRepresentation: raw))
        // A seed from a fixed source gives a fixed identity.
        let seeded = try AgeHybridIdentity(seed: SecureBytes(copying: [UInt8](repeating: 0x42, count: 32)))
        XCTAssertEqual(seeded.secretKeyString, AgeTesting.bech32Encode(hrp: "AGE-SECRET-KEY-PQ-", data: [UInt8](repeating: 0x42, count: 32)))
        XCTAssertEqual(seeded.recipient, try AgeHybridIdentity(seeded.secretKeyString).recipient)
    }

    // MARK: - Helpers

    static func error(_ body: () throws -> Data) -> AgeError? {
        do {
            _ = try body()
            return nil
        } catch let error as AgeError {
            return error
        } catch {
            XCTFail("not an AgeError: \(error)")
            return nil
        }
    }

    static func base64(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    static func base64Decode(_ text: String) -> [UInt8]? {
        var padded = text
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded).map { Array($0) }
    }

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index ..< next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }
}
