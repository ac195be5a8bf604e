import BenchmarkHarness

/// The protocol cases: SessionKit and Verification against the same protocol work composed
/// naively on libsodium (the floor) and on swift-crypto.
enum ProtocolCases {
    typealias Floor = ReferenceProtocolWorkloads<SodiumBackend>
    typealias SwiftCrypto = ReferenceProtocolWorkloads<SwiftCryptoBackend>

    static var all: [BenchmarkCase] {
        // The fixture draws random keys; should that ever fail, the cases report it one by one.
        let fixture = Result { try ProtocolFixture() }
        func f() throws -> ProtocolFixture { try fixture.get() }
        return [
            .probing(
                name: "x3dh.initiate", summary: "X3DH as initiator with a one-time prekey: new EK, verify, 4 DH, HKDF",
                group: .protocol, targets: RatioTargets(floor: 1.10, swiftCrypto: 1.00),
                library: { try LibraryProtocol.x3dhInitiate(try f()) },
                floor: { try Floor.x3dhInitiate(try f()) },
                swiftCrypto: { try SwiftCrypto.x3dhInitiate(try f()) }),
            .probing(
                name: "x3dh.respond", summary: "X3DH as responder with a one-time prekey: 4 DH, HKDF",
                group: .protocol, targets: RatioTargets(floor: 1.10, swiftCrypto: 1.00),
                library: { try LibraryProtocol.x3dhRespond(try f()) },
                floor: { try Floor.x3dhRespond(try f()) },
                swiftCrypto: { try SwiftCrypto.x3dhRespond(try f()) }),
            .probing(
                name: "ratchet.roundtrip.64B", summary: "Double Ratchet: encrypt and decrypt 64 bytes on one chain",
                group: .protocol, targets: RatioTargets(floor: 1.00, swiftCrypto: 0.50),
                library: { try LibraryProtocol.ratchetRoundTrip(try f()) },
                floor: { try Floor.ratchetRoundTrip(try f()) },
                swiftCrypto: { try SwiftCrypto.ratchetRoundTrip(try f()) }),
            .probing(
                name: "ratchet.dh-step.64B", summary: "ping-pong: one 64-byte message each way in turn, a DH ratchet step each",
                group: .protocol, targets: RatioTargets(floor: 1.10),
                library: { try LibraryProtocol.ratchetPingPong(try f()) },
                floor: { try Floor.ratchetPingPong(try f()) },
                swiftCrypto: { try SwiftCrypto.ratchetPingPong(try f()) }),
            .probing(
                name: "senderkey.encrypt.64B", summary: "sender-key message of 64 bytes (KDF_CK, HKDF, AES-GCM, Ed25519 sign)",
                group: .protocol, targets: RatioTargets(),
                library: { try LibraryProtocol.senderKeyEncrypt(try f()) },
                floor: { try Floor.senderKeyEncrypt(try f()) },
                swiftCrypto: { try SwiftCrypto.senderKeyEncrypt(try f()) }),
            .probing(
                name: "senderkey.decrypt.64B", summary: "sender-key message of 64 bytes: verify, KDF_CK, HKDF, AES-GCM open",
                group: .protocol, targets: RatioTargets(),
                library: { try LibraryProtocol.senderKeyDecrypt(try f()) },
                floor: { try Floor.senderKeyDecrypt(try f()) },
                swiftCrypto: { try SwiftCrypto.senderKeyDecrypt(try f()) }),
            sessionSave(f),
            sessionLoad(f),
            .probing(
                name: "safety-number", summary: "60-digit safety number and scannable form, 5200 iterations per party",
                group: .protocol, targets: RatioTargets(floor: 1.05),
                library: { LibraryProtocol.safetyNumber(try f()) },
                floor: { Floor.safetyNumber(try f()) },
                swiftCrypto: { SwiftCrypto.safetyNumber(try f()) }),
        ]
    }

    /// Saving an established session. The check loads the library's blob with the floor's
    /// codec and saves it again: the bytes must not change (the floor writes the same format).
    static func sessionSave(_ f: @escaping () throws -> ProtocolFixture) -> BenchmarkCase {
        BenchmarkCase(
            name: "session.save", summary: "serialize an established session (SessionKit's persisted layout)",
            group: .protocol, targets: RatioTargets(),
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
            group: .protocol, targets: RatioTargets(),
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
