import Foundation
import SignalPrimitives
import XCTest
@testable import SessionKit

/// A deterministic random source (SplitMix64) that counts how often it was asked for bytes.
final class SeededRandomSource: RandomSource, @unchecked Sendable {
    private let lock = NSLock()
    private var generator: SeededGenerator
    private var fills = 0

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

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

/// A seeded generator for test schedules (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Alice (initiator, session from Bob's bundle) and Bob (responder with one signed prekey and
/// optionally one one-time prekey), each with a deterministic random source.
struct Conversation {
    let aliceIdentity: IdentityKeyPair
    let bobIdentity: IdentityKeyPair
    let signedPreKey: SignedPreKey
    let oneTimePreKey: OneTimePreKey?
    var alice: SessionState?
    var bob: SessionState?
    var alicePreKeys = PreKeySet()
    var bobPreKeys: PreKeySet
    let aliceRandom: SeededRandomSource
    let bobRandom: SeededRandomSource
    let configuration: SessionConfiguration

    init(seed: UInt64 = 1, oneTimePreKey withOneTimePreKey: Bool = true, configuration: SessionConfiguration = .default) throws {
        let setup = SeededRandomSource(seed: seed)
        aliceIdentity = try IdentityKeyPair(using: setup)
        bobIdentity = try IdentityKeyPair(using: setup)
        signedPreKey = try SignedPreKey(id: 7, signedBy: bobIdentity, using: setup)
        oneTimePreKey = withOneTimePreKey ? try OneTimePreKey(id: 42, using: setup) : nil
        bobPreKeys = PreKeySet(signedPreKeys: [signedPreKey], oneTimePreKeys: oneTimePreKey.map { [$0] } ?? [])
        aliceRandom = SeededRandomSource(seed: seed &+ 1000)
        bobRandom = SeededRandomSource(seed: seed &+ 2000)
        self.configuration = configuration
        let bundle = PreKeyBundle(identityKey: bobIdentity.publicKey, signedPreKey: signedPreKey, oneTimePreKey: oneTimePreKey)
        alice = try SessionState(initiatingWith: bundle, identity: aliceIdentity, configuration: configuration, random: aliceRandom)
    }

    mutating func aliceSends(_ plaintext: [UInt8]) throws -> [UInt8] {
        guard alice != nil else { throw SessionError.noSession }
        return try alice?.encrypt(plaintext) ?? []
    }

    mutating func bobSends(_ plaintext: [UInt8]) throws -> [UInt8] {
        guard bob != nil else { throw SessionError.noSession }
        return try bob?.encrypt(plaintext) ?? []
    }

    mutating func bobReceives(_ message: [UInt8]) throws(SessionError) -> [UInt8] {
        let result = try SessionCipher.decrypt(
            message, session: &bob, identity: bobIdentity, preKeys: bobPreKeys, configuration: configuration, random: bobRandom)
        if let consumed = result.consumedOneTimePreKeyID { bobPreKeys.removeOneTimePreKey(id: consumed) }
        return result.plaintext
    }

    mutating func aliceReceives(_ message: [UInt8]) throws(SessionError) -> [UInt8] {
        let result = try SessionCipher.decrypt(
            message, session: &alice, identity: aliceIdentity, preKeys: alicePreKeys, configuration: configuration, random: aliceRandom)
        if let consumed = result.consumedOneTimePreKeyID { alicePreKeys.removeOneTimePreKey(id: consumed) }
        return result.plaintext
    }

    /// Everything a failed decryption must not change: both serialized sessions, both key
    /// draw counts and Bob's one-time prekeys.
    var snapshot: Snapshot {
        Snapshot(
            alice: alice?.serialized(), bob: bob?.serialized(), aliceDraws: aliceRandom.drawCount,
            bobDraws: bobRandom.drawCount, bobOneTimePreKeys: bobPreKeys.oneTimePreKeys.keys.sorted())
    }

    struct Snapshot: Equatable {
        let alice: [UInt8]?
        let bob: [UInt8]?
        let aliceDraws: Int
        let bobDraws: Int
        let bobOneTimePreKeys: [UInt32]
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
