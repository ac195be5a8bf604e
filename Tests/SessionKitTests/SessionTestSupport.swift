import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit
import SessionKitMLKEM

/// A deterministic random source (SplitMix64) that counts how often it was asked for bytes.
final class SeededRandomSource: RandomSource, @unchecked Sendable {
    private let lock = NSLock()
    private var generator: SplitMix64
    private var fills = 0

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        lock.lock()
        defer { lock.unlock() }
        fills += 1
        for index in 0 ..< buffer.count { buffer[index] = UInt8(truncatingIfNeeded: generator.next()) }
    }

    /// The number of `fill` calls so far.
    var drawCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return fills
    }
}

/// `Encode(address)` of SPEC §1, written out independently of `ProtocolAddress.encoded`:
/// `u8(len(uid)) || uid || u32(device_id)`.
func encodeAddress(_ userID: String, _ deviceID: UInt32) -> [UInt8] {
    let uid = Array(userID.utf8)
    return [UInt8(uid.count)] + uid + [UInt8(deviceID >> 24), UInt8(truncatingIfNeeded: deviceID >> 16),
                                      UInt8(truncatingIfNeeded: deviceID >> 8), UInt8(truncatingIfNeeded: deviceID)]
}

/// `u32(value)`, big-endian.
func u32(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
}

/// `u64(value)`, big-endian.
func u64(_ value: UInt64) -> [UInt8] { u32(UInt32(value >> 32)) + u32(UInt32(truncatingIfNeeded: value)) }

/// ML-KEM-768 from `SessionKitMLKEM`, or a skip where the platform lacks it (CryptoKit's
/// ML-KEM needs macOS/iOS 26; on Linux swift-crypto's BoringSSL always has it).
func mlkem() throws -> any KeyEncapsulationMechanism {
    if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) { return SwiftCryptoMLKEM768() }
    throw XCTSkip("ML-KEM-768 needs macOS/iOS 26 or Linux")
}

/// Alice (initiator, session from Bob's bundle) and Bob (responder with one signed prekey,
/// optionally one one-time prekey and, with a KEM, one one-time KEM prekey), each with a
/// deterministic random source. Each party holds a `SessionRecord` for the other (what
/// `SessionManager` keeps per address); `alice` and `bob` are the records' current sessions.
struct Conversation {
    let aliceIdentity: IdentityKeyPair
    let bobIdentity: IdentityKeyPair
    let aliceAddress = address("alice", 1)
    let bobAddress = address("bob", 7)
    let signedPreKey: SignedPreKey
    let oneTimePreKey: OneTimePreKey?
    let kemPreKey: KEMPreKey?
    let kem: (any KeyEncapsulationMechanism)?
    let bundle: PreKeyBundle
    var aliceRecord = SessionRecord()
    var bobRecord = SessionRecord()
    var alicePreKeys = PreKeySet()
    var bobPreKeys: PreKeySet
    let aliceRandom: SeededRandomSource
    let bobRandom: SeededRandomSource
    let configuration: SessionConfiguration

    /// With `kem`, Bob's signed prekey is signed with `kem` = 1 and his bundle carries the
    /// one-time KEM prekey 77 (a hybrid session). `aliceRegistrationID` goes into Alice's
    /// prefix, `bobRegistrationID` into Bob's bundle (SPEC §9).
    init(
        seed: UInt64 = 1, oneTimePreKey withOneTimePreKey: Bool = true, kem: (any KeyEncapsulationMechanism)? = nil,
        configuration: SessionConfiguration = .default, aliceRegistrationID: RegistrationID? = nil,
        bobRegistrationID: RegistrationID? = nil
    ) throws {
        let setup = SeededRandomSource(seed: seed)
        aliceIdentity = try IdentityKeyPair(using: setup)
        bobIdentity = try IdentityKeyPair(using: setup)
        signedPreKey = try SignedPreKey(id: 7, signedBy: bobIdentity, signsKEMPreKeys: kem != nil, using: setup)
        oneTimePreKey = withOneTimePreKey ? try OneTimePreKey(id: 42, using: setup) : nil
        let bob = bobIdentity
        let kemKey = try kem.map { try KEMPreKey(id: 77, kind: .oneTime, signedBy: bob, kem: $0, using: setup) }
        kemPreKey = kemKey
        self.kem = kem
        bobPreKeys = PreKeySet(signedPreKeys: [signedPreKey], oneTimePreKeys: oneTimePreKey.map { [$0] } ?? [],
                               kemPreKeys: kemKey.map { [$0] } ?? [])
        aliceRandom = SeededRandomSource(seed: seed &+ 1000)
        bobRandom = SeededRandomSource(seed: seed &+ 2000)
        self.configuration = configuration
        bundle = PreKeyBundle(identityKey: bobIdentity.publicKey, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey,
                              kemPreKey: kemPreKey, registrationID: bobRegistrationID)
        aliceRecord = SessionRecord(currentSession: try SessionState(
            initiatingWith: bundle, identity: aliceIdentity, localAddress: aliceAddress, remoteAddress: bobAddress, kem: kem,
            registrationID: aliceRegistrationID, configuration: configuration, random: aliceRandom))
    }

    /// Alice's current session (setting it replaces her whole record).
    var alice: SessionState? {
        get { aliceRecord.currentSession }
        set { aliceRecord = newValue.map { SessionRecord(currentSession: $0) } ?? SessionRecord() }
    }

    /// Bob's current session (setting it replaces his whole record).
    var bob: SessionState? {
        get { bobRecord.currentSession }
        set { bobRecord = newValue.map { SessionRecord(currentSession: $0) } ?? SessionRecord() }
    }

    mutating func aliceSends(_ plaintext: [UInt8]) throws -> [UInt8] { try aliceRecord.encrypt(plaintext) }

    mutating func bobSends(_ plaintext: [UInt8]) throws -> [UInt8] { try bobRecord.encrypt(plaintext) }

    /// Bob decrypts a message from Alice's address; a prekey message's consumption is applied
    /// to his prekeys (as a store's `commit` does).
    mutating func bobReceives(_ message: [UInt8], from sender: ProtocolAddress? = nil) throws(SessionError) -> [UInt8] {
        let result = try bobRecord.decrypt(
            message, identity: bobIdentity, localAddress: bobAddress, remoteAddress: sender ?? aliceAddress, preKeys: bobPreKeys,
            kem: kem, configuration: configuration, random: bobRandom)
        if let consumption = result.consumption { try bobPreKeys.apply(consumption) }
        return result.plaintext
    }

    mutating func aliceReceives(_ message: [UInt8], from sender: ProtocolAddress? = nil) throws(SessionError) -> [UInt8] {
        let result = try aliceRecord.decrypt(
            message, identity: aliceIdentity, localAddress: aliceAddress, remoteAddress: sender ?? bobAddress,
            preKeys: alicePreKeys, kem: kem, configuration: configuration, random: aliceRandom)
        if let consumption = result.consumption { try alicePreKeys.apply(consumption) }
        return result.plaintext
    }

    /// Everything a failed decryption must not change: both serialized records, both key
    /// draw counts, Bob's one-time and KEM prekeys and his EK_A replay records.
    var snapshot: Snapshot {
        Snapshot(
            alice: aliceRecord.serialized(), bob: bobRecord.serialized(), aliceDraws: aliceRandom.drawCount,
            bobDraws: bobRandom.drawCount, bobOneTimePreKeys: bobPreKeys.oneTimePreKeys.keys.sorted(),
            bobKEMPreKeys: bobPreKeys.kemPreKeys.keys.sorted(),
            bobRecordedBaseKeys: bobPreKeys.recordedBaseKeys.mapValues { Set($0.map(\.rawRepresentation)) })
    }

    struct Snapshot: Equatable {
        let alice: [UInt8]
        let bob: [UInt8]
        let aliceDraws: Int
        let bobDraws: Int
        let bobOneTimePreKeys: [UInt32]
        let bobKEMPreKeys: [UInt32]
        let bobRecordedBaseKeys: [UInt32: Set<[UInt8]>]
    }
}

/// Plaintext bytes for message `index`.
func plaintext(_ index: Int, length: Int = 24) -> [UInt8] {
    (0 ..< length).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0 &* 7) }
}

/// Asserts that `body` throws `expected` and that `conversation`'s snapshot is unchanged.
func assertFails(
    _ expected: SessionError, _ conversation: inout Conversation, file: StaticString = #filePath, line: UInt = #line,
    _ body: (inout Conversation) throws -> Void
) {
    let before = conversation.snapshot
    do {
        try body(&conversation)
        XCTFail("expected \(expected), but the call succeeded", file: file, line: line)
    } catch let error as SessionError {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("unexpected error \(error)", file: file, line: line)
    }
    XCTAssertEqual(conversation.snapshot, before, "a failure changed the state", file: file, line: line)
}

/// `bytes` with bit `bit` of byte `index` flipped.
func flipped(_ bytes: [UInt8], at index: Int, bit: Int = 0) -> [UInt8] {
    var copy = bytes
    copy[index] ^= UInt8(1 << bit)
    return copy
}

/// `bytes` with `replacement` written from `index` on.
func replacing(_ bytes: [UInt8], at index: Int, with replacement: [UInt8]) -> [UInt8] {
    var copy = bytes
    copy.replaceSubrange(index ..< index + replacement.count, with: replacement)
    return copy
}
