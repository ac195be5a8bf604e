import BenchmarkHarness
@_spi(Testing) import SessionKit

/// The protocol cases: SessionKit and Verification against the same protocol work composed
/// naively on libsodium (the floor) and on swift-crypto. ML-KEM-768 is swift-crypto's
/// `MLKEM768` in both references (libsodium has none), called directly.
enum ProtocolCases {
    typealias Floor = ReferenceProtocolWorkloads<SodiumBackend>
    typealias SwiftCrypto = ReferenceProtocolWorkloads<SwiftCryptoBackend>

    /// Every row: library / floor ≤ 1.10.
    static let floorTarget = RatioTargets(floor: 1.10)
    /// X3DH and PQXDH: ≤ 1.10 of the floor and of swift-crypto (X25519 stays libsodium's).
    static let handshakeTarget = RatioTargets(floor: 1.10, swiftCrypto: 1.10)
    /// The ML-KEM adapter: ≤ 1.05 of swift-crypto's `MLKEM768` called directly (the floor).
    static let kemTarget = RatioTargets(floor: 1.05)
    /// The forged message against 40 previous sessions: ≤ 2 × against none.
    static let forgedTarget = RatioTargets(
        floor: 1.10, baseline: BaselineTarget(caseName: "forged.reject.0-previous", maximum: 2.0))

    static var all: [BenchmarkCase] {
        // The fixture draws random keys; should that ever fail, the cases report it one by one.
        let fixture = Result { try ProtocolFixture() }
        func f() throws -> ProtocolFixture { try fixture.get() }
        var cases: [BenchmarkCase] = [
            .probing(
                name: "x3dh.initiate",
                summary: "X3DH as initiator, bundle with a one-time prekey: verify spk_sig, new EK, P, 4 DH, SHA-256(P), HKDF",
                group: .protocol, targets: handshakeTarget,
                library: { try LibraryProtocol.x3dhInitiate(try f()) },
                floor: { try Floor.x3dhInitiate(try f()) },
                swiftCrypto: { try SwiftCrypto.x3dhInitiate(try f()) }),
            .probing(
                name: "x3dh.respond", summary: "X3DH as responder with a one-time prekey: 4 DH, SHA-256(P), HKDF",
                group: .protocol, targets: handshakeTarget,
                library: { try LibraryProtocol.x3dhRespond(try f()) },
                floor: { try Floor.x3dhRespond(try f()) },
                swiftCrypto: { try SwiftCrypto.x3dhRespond(try f()) }),
        ]
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) { cases += postQuantum(f) }
        cases += [
            .probing(
                name: "ratchet.roundtrip.64B", summary: "Double Ratchet: encrypt and decrypt 64 bytes on one chain",
                group: .protocol, targets: RatioTargets(floor: 0.85, swiftCrypto: 0.50),
                library: { try LibraryProtocol.ratchetRoundTrip(try f()) },
                floor: { try Floor.ratchetRoundTrip(try f()) },
                swiftCrypto: { try SwiftCrypto.ratchetRoundTrip(try f()) }),
            .probing(
                name: "ratchet.dh-step.64B", summary: "ping-pong: one 64-byte message each way in turn, a DH ratchet step each",
                group: .protocol, targets: floorTarget,
                library: { try LibraryProtocol.ratchetPingPong(try f()) },
                floor: { try Floor.ratchetPingPong(try f()) },
                swiftCrypto: { try SwiftCrypto.ratchetPingPong(try f()) }),
            .probing(
                name: "forged.reject.0-previous",
                summary: "forged ratchet message (unknown ratchet key, pn = n = 256) via SessionRecord.decrypt, no previous session",
                group: .protocol, targets: floorTarget,
                library: { try LibraryProtocol.forgedReject(try f(), previous: 0) },
                floor: { try Floor.forgedReject(try f(), previous: 0) },
                swiftCrypto: { try SwiftCrypto.forgedReject(try f(), previous: 0) }),
            .probing(
                name: "forged.reject.40-previous",
                summary: "the same forged message against a record with 40 previous sessions (the bound's worst case)",
                group: .protocol, targets: forgedTarget,
                library: { try LibraryProtocol.forgedReject(try f(), previous: 40) },
                floor: { try Floor.forgedReject(try f(), previous: 40) },
                swiftCrypto: { try SwiftCrypto.forgedReject(try f(), previous: 40) }),
            .probing(
                name: "senderkey.encrypt.64B",
                summary: "sender-key message of 64 bytes (KDF_CK, HKDF to 76 bytes, AES-GCM, Ed25519 sign over group and sender)",
                group: .protocol, targets: floorTarget,
                library: { try LibraryProtocol.senderKeyEncrypt(try f()) },
                floor: { try Floor.senderKeyEncrypt(try f()) },
                swiftCrypto: { try SwiftCrypto.senderKeyEncrypt(try f()) }),
            .probing(
                name: "senderkey.decrypt.64B",
                summary: "sender-key message of 64 bytes: verify, KDF_CK, HKDF, commitment, AES-GCM open",
                group: .protocol, targets: floorTarget,
                library: { try LibraryProtocol.senderKeyDecrypt(try f()) },
                floor: { try Floor.senderKeyDecrypt(try f()) },
                swiftCrypto: { try SwiftCrypto.senderKeyDecrypt(try f()) }),
            // swift-crypto has no XChaCha20-Poly1305: no swift-crypto column.
            .probing(
                name: "selfencryption.seal.1KiB",
                summary: "self-encryption of 1 KiB: random 24-byte nonce, pad to 2 KiB, XChaCha20-Poly1305",
                group: .protocol, targets: floorTarget,
                library: { try LibraryProtocol.selfSeal(try f()) },
                floor: { Floor.selfSeal(try f()) },
                swiftCrypto: nil),
            .probing(
                name: "selfencryption.open.1KiB", summary: "open a self-encrypted 1 KiB blob (XChaCha20-Poly1305, unpad)",
                group: .protocol, targets: floorTarget,
                library: { try LibraryProtocol.selfOpen(try f()) },
                floor: { try Floor.selfOpen(try f()) },
                swiftCrypto: nil),
            sessionSave(f),
            sessionLoad(f),
            PublishedPreKeysCase.merge,
            .probing(
                name: "safety-number", summary: "60-digit safety number and scannable form, 5200 iterations per party",
                group: .protocol, targets: RatioTargets(floor: 1.05),
                library: { LibraryProtocol.safetyNumber(try f()) },
                floor: { Floor.safetyNumber(try f()) },
                swiftCrypto: { SwiftCrypto.safetyNumber(try f()) }),
        ]
        return cases
    }

    /// PQXDH and the ML-KEM-768 adapter (`SessionKitMLKEM`).
    @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    static func postQuantum(_ f: @escaping () throws -> ProtocolFixture) -> [BenchmarkCase] {
        [
            .probing(
                name: "pqxdh.initiate",
                summary: "PQXDH as initiator: verify spk_sig and kem_sig, check ek, ML-KEM encaps, new EK, 4 DH, SHA-256(P), HKDF",
                group: .protocol, targets: handshakeTarget,
                library: { try LibraryKEM.pqxdhInitiate(try f()) },
                floor: { try Floor.pqxdhInitiate(try f()) },
                swiftCrypto: { try SwiftCrypto.pqxdhInitiate(try f()) }),
            .probing(
                name: "pqxdh.respond",
                summary: "PQXDH as responder with a one-time prekey: ML-KEM decaps from the seed, 4 DH, SHA-256(P), HKDF",
                group: .protocol, targets: handshakeTarget,
                library: { try LibraryKEM.pqxdhRespond(try f()) },
                floor: { try Floor.pqxdhRespond(try f()) },
                swiftCrypto: { try SwiftCrypto.pqxdhRespond(try f()) }),
            // The floor of the adapter is swift-crypto's MLKEM768 called directly.
            .probing(
                name: "mlkem768.encapsulate",
                summary: "ML-KEM-768 encapsulation to a 1184-byte ek: SwiftCryptoMLKEM768 vs MLKEM768 direct (parse + encaps)",
                group: .protocol, targets: kemTarget,
                library: { try LibraryKEM.encapsulate(try f()) },
                floor: { try SwiftCryptoKEM.encapsulate(try f()) },
                swiftCrypto: nil),
            .probing(
                name: "mlkem768.decapsulate",
                summary: "ML-KEM-768 decapsulation from the 64-byte seed: SwiftCryptoMLKEM768 vs MLKEM768 direct",
                group: .protocol, targets: kemTarget,
                library: { try LibraryKEM.decapsulate(try f()) },
                floor: { try SwiftCryptoKEM.decapsulate(try f()) },
                swiftCrypto: nil),
        ]
    }

    /// Saving an established session. The check loads the library's blob with the floor's
    /// codec and saves it again: the bytes must not change (the floor writes the same format).
    static func sessionSave(_ f: @escaping () throws -> ProtocolFixture) -> BenchmarkCase {
        BenchmarkCase(
            name: "session.save", summary: "serialize an established session (SessionKit's persisted layout, version 5)",
            group: .protocol, targets: floorTarget,
            library: { try LibraryProtocol.sessionSave(try f()).probe.workload },
            floor: { try Floor.sessionSave(try f()).workload },
            swiftCrypto: nil,
            check: {
                let blob = try LibraryProtocol.sessionSave(try f()).session.serialized()
                let reloaded = try ReferenceSessionCodec<SodiumBackend>.load(blob, keySource: SodiumBackend.newAgreementKey)
                try CheckFailure.expect(
                    hex(ReferenceSessionCodec<SodiumBackend>.save(reloaded)), equals: hex(blob),
                    "session.save: the floor's codec does not reproduce the library's blob")
            })
    }

    /// Loading an established session; the check loads each side's blob with the other's code.
    static func sessionLoad(_ f: @escaping () throws -> ProtocolFixture) -> BenchmarkCase {
        BenchmarkCase(
            name: "session.load", summary: "load an established session (strict parse, DHs public key recomputed)",
            group: .protocol, targets: floorTarget,
            library: { LibraryProtocol.sessionLoad(blob: try LibraryProtocol.sessionSave(try f()).session.serialized()).workload },
            floor: { try Floor.sessionLoad(try f()).workload },
            swiftCrypto: nil,
            check: {
                let libraryBlob = try LibraryProtocol.sessionSave(try f()).session.serialized()
                let floorBlob = try Floor.sessionSave(try f()).output()
                try CheckFailure.expect(
                    hex(try LibraryProtocol.sessionLoad(blob: floorBlob).output()), equals: hex(floorBlob),
                    "session.load: the library does not load the floor's blob to the same state")
                try CheckFailure.expect(
                    hex(ReferenceSessionCodec<SodiumBackend>.save(
                        try ReferenceSessionCodec<SodiumBackend>.load(libraryBlob, keySource: SodiumBackend.newAgreementKey))),
                    equals: hex(libraryBlob), "session.load: the floor does not load the library's blob to the same state")
            })
    }
}
