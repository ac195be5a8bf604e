import BenchmarkHarness
import CSodiumBench
@_spi(Testing) import SessionKit
import SignalPrimitives

/// Recovery (SPEC §9, issue 19): a retry notice created (device B, which could not decrypt) and
/// verified (device A: every check up to the MAC, the work a forged notice costs in a flood),
/// against the obvious libsodium composition; and the bytes a message sent writes with the
/// send log on, against the same store with it off.
///
/// - library: `RetryNotice(from:at:to:recipientIdentityKey:registrationID:failure:)` and
///   `RetryNotice(verifying:from:localAddress:identity:)` (SPI), on identities from fixed seeds;
/// - floor: the notice's bytes laid out by hand; K = HKDF-SHA256(32 zero bytes, X25519(x(IK_B).sk,
///   x(IK_A).pk), "SessionKit Retry v2") with libsodium's conversions (`crypto_sign_ed25519_pk_
///   to_curve25519`, the seed's SHA-512 clamped) and `crypto_scalarmult`; HMAC-SHA256 with
///   `crypto_auth_hmacsha256`, compared with `sodium_memcmp`.
enum RecoveryCases {
    /// B creates a pairwise notice.
    static let noticeCreate = "recovery.notice.create"
    /// A verifies a pairwise notice (type, lengths, addresses, IK_B's point, the MAC).
    static let noticeVerify = "recovery.notice.verify"
    /// Bytes written per message Bob encrypts and persists with the send log on.
    static let bytesSentWithLog = "store.sqlite.bytes-per-message-sent.send-log"

    /// The notice rows: library / floor ≤ 1.10.
    static let noticeTarget = RatioTargets(floor: 1.10)
    /// With the log on, a message also writes its sealed entry (a row and two index entries):
    /// at most 4 KiB per message (the rows with the log off stay at ≤ 2 KiB).
    static let bytesTarget = RatioTargets(libraryMaximum: 4096)

    static var all: [BenchmarkCase] {
        let fixture = Result { try NoticeFixture() }
        func f() throws -> NoticeFixture { try fixture.get() }
        let plaintext = Fixture.bytes(64)
        return [
            .probing(
                name: noticeCreate,
                summary: "retry notice (SPEC §9, pairwise) created by B: layout, x(IK_B).sk, x(IK_A).pk, X25519, HKDF, HMAC",
                group: .protocol, targets: noticeTarget,
                library: { try f().libraryCreate() },
                floor: { try f().floorCreate() },
                swiftCrypto: nil),
            .probing(
                name: noticeVerify,
                summary: "retry notice verified by A (SPEC §9's checks to the MAC): type, lengths, addresses, IK_B's point, "
                    + "X25519, HKDF, HMAC compared in constant time; the cost of each forged notice in a flood",
                group: .protocol, targets: noticeTarget,
                library: { try f().libraryVerify() },
                floor: { try f().floorVerify() },
                swiftCrypto: nil),
            .probing(
                name: bytesSentWithLog,
                summary: "bytes written to the database file and its WAL per message Bob encrypts and persists with the "
                    + "send log on (the message's sealed entry in the same transaction; /proc/self/io wchar, batches "
                    + "ending with wal_checkpoint(TRUNCATE)), fresh session; floor: the same store with the log off",
                group: .store, targets: bytesTarget, unit: .bytesPerMessage,
                library: { try sentBytes(sendLog: true, plaintext) },
                floor: { try sentBytes(sendLog: false, plaintext) },
                swiftCrypto: nil),
        ]
    }

    /// Bob encrypts to Alice, each batch ending with a TRUNCATE checkpoint.
    static func sentBytes(sendLog: Bool, _ plaintext: [UInt8]) throws -> Probe {
        guard ProcessWriteCounter.isAvailable else {
            throw CheckFailure("\(bytesSentWithLog): needs /proc/self/io (Linux) to count the bytes written")
        }
        let bob = try LibrarySQLiteDevice(address: try ProtocolAddress(userID: "bob", deviceID: 7), durability: .processCrash, sendLog: sendLog)
        return try StoreConversation(bob: bob, heavy: false, plaintext: plaintext).encryptProbe(checkpointAfterBatch: true)
    }
}

/// Alice and Bob's identities from fixed seeds, a pairwise failure, and the notice's bytes.
struct NoticeFixture {
    let aliceSeed = [UInt8](repeating: 0xA1, count: 32)
    let bobSeed = [UInt8](repeating: 0xB0, count: 32)
    let alice: IdentityKeyPair
    let bob: IdentityKeyPair
    let aliceAddress: ProtocolAddress
    let bobAddress: ProtocolAddress
    let registrationID: RegistrationID
    let ratchetKey = [UInt8](repeating: 0x5A, count: 32)
    let counter: UInt32 = 299

    init() throws {
        alice = try IdentityKeyPair(seed: aliceSeed)
        bob = try IdentityKeyPair(seed: bobSeed)
        aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        bobAddress = try ProtocolAddress(userID: "bob", deviceID: 2)
        guard let id = RegistrationID(rawValue: 77) else { throw CheckFailure("registration id") }
        registrationID = id
    }

    /// `0x27 || Encode(B) || Encode(A) || u32(77) || 0x01 || ratchet key || u32(n) || IK_B`.
    var head: [UInt8] {
        func encode(_ user: String, _ device: UInt32) -> [UInt8] { [UInt8(user.utf8.count)] + Array(user.utf8) + bigEndian(device) }
        return [0x27] + encode("bob", 2) + encode("alice", 1) + bigEndian(77) + [0x01] + ratchetKey + bigEndian(counter)
            + bob.publicKey.rawRepresentation
    }

    func libraryCreate() throws -> Probe {
        let (alice, bob, aliceAddress, bobAddress, registrationID) = (alice, bob, aliceAddress, bobAddress, registrationID)
        let failure = RetryNotice.Failure.pairwise(ratchetKey: ratchetKey, counter: counter)
        func create() throws -> [UInt8] {
            try RetryNotice(
                from: bob, at: bobAddress, to: aliceAddress, recipientIdentityKey: alice.publicKey, registrationID: registrationID,
                failure: failure).serialized
        }
        return Probe(workload: .repeating { blackHole(try create()) }, output: create)
    }

    func floorCreate() throws -> Probe {
        _ = SodiumBackend.isReady
        let head = RawBytes(head), out = RawBytes(count: head.count + 32)
        let seed = RawBytes(bobSeed), peer = RawBytes(alice.publicKey.rawRepresentation)
        let secret = RawBytes(count: 32), peerX = RawBytes(count: 32), shared = RawBytes(count: 32), key = RawBytes(count: 32)
        let salt = RawBytes(count: 32), info = RawBytes(Array("SessionKit Retry v2".utf8))
        func create() throws {
            UnsafeMutableRawBufferPointer(rebasing: out.mutable[0..<head.count]).copyMemory(from: head.readable)
            SodiumBackend.ed25519SeedToX25519Secret(seed.readable, into: secret.mutable)
            try SodiumBackend.ed25519PublicKeyToX25519(peer.readable, into: peerX.mutable)
            try SodiumBackend.x25519(secret: secret.readable, publicKey: peerX.readable, into: shared.mutable)
            SodiumBackend.hkdfSHA256(salt: salt.readable, inputKeyMaterial: shared.readable, info: info.readable, into: key.mutable)
            SodiumBackend.hmacSHA256(
                key: key.readable, message: head.readable, into: UnsafeMutableRawBufferPointer(rebasing: out.mutable[head.count...]))
            sodium_memzero(secret.mutable.baseAddress, 32)
            sodium_memzero(shared.mutable.baseAddress, 32)
            sodium_memzero(key.mutable.baseAddress, 32)
        }
        return Probe(workload: .repeating(create), output: { try create(); return out.array })
    }

    /// The notice's bytes, from the floor (the library must accept them).
    func noticeBytes() throws -> [UInt8] { try floorCreate().output() }

    func libraryVerify() throws -> Probe {
        let bytes = try noticeBytes()
        let (alice, aliceAddress, bobAddress) = (alice, aliceAddress, bobAddress)
        func verify() throws -> [UInt8] {
            try RetryNotice(verifying: bytes, from: bobAddress, localAddress: aliceAddress, identity: alice).serialized
        }
        return Probe(workload: .repeating { blackHole(try verify()) }, output: verify)
    }

    func floorVerify() throws -> Probe {
        _ = SodiumBackend.isReady
        let bytes = try noticeBytes()
        let notice = RawBytes(bytes)
        let addresses = RawBytes(Array(head[1..<(1 + 8 + 10)]))
        let macStart = bytes.count - 32, keyStart = bytes.count - 64
        let seed = RawBytes(aliceSeed), secret = RawBytes(count: 32), peerX = RawBytes(count: 32)
        let shared = RawBytes(count: 32), key = RawBytes(count: 32), mac = RawBytes(count: 32)
        let salt = RawBytes(count: 32), info = RawBytes(Array("SessionKit Retry v2".utf8))
        let expectedCount = head.count + 32
        func verify() throws {
            let input = notice.readable
            guard input.count == expectedCount, input[0] == 0x27 else { throw CheckFailure("floor: not a notice") }
            guard SodiumBackend.constantTimeEquals(UnsafeRawBufferPointer(rebasing: input[1..<19]), addresses.readable),
                  input[23] == 0x01 else { throw CheckFailure("floor: addresses or kind") }
            let registration = input[19..<23].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard registration >= 1, registration <= 0x7FFF_FFFF else { throw CheckFailure("floor: registration id") }
            try SodiumBackend.ed25519PublicKeyToX25519(UnsafeRawBufferPointer(rebasing: input[keyStart..<macStart]), into: peerX.mutable)
            SodiumBackend.ed25519SeedToX25519Secret(seed.readable, into: secret.mutable)
            try SodiumBackend.x25519(secret: secret.readable, publicKey: peerX.readable, into: shared.mutable)
            SodiumBackend.hkdfSHA256(salt: salt.readable, inputKeyMaterial: shared.readable, info: info.readable, into: key.mutable)
            SodiumBackend.hmacSHA256(key: key.readable, message: UnsafeRawBufferPointer(rebasing: input[..<macStart]), into: mac.mutable)
            sodium_memzero(secret.mutable.baseAddress, 32)
            sodium_memzero(shared.mutable.baseAddress, 32)
            sodium_memzero(key.mutable.baseAddress, 32)
            guard SodiumBackend.constantTimeEquals(mac.readable, UnsafeRawBufferPointer(rebasing: input[macStart...])) else {
                throw CheckFailure("floor: MAC")
            }
        }
        return Probe(workload: .repeating(verify), output: { try verify(); return bytes })
    }
}

/// `u32(value)`, big-endian.
private func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
