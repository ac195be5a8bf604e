import SignalPrimitives
import XCTest
@_spi(Testing) @testable import SessionKit

/// Persistence of `SessionState` (strict, versioned; layout documented in SessionStatePersistence.swift).
final class SessionPersistenceTests: XCTestCase {
    /// A conversation in the middle: both sides have sent and received, Bob holds skipped
    /// keys of two of Alice's chains, and messages are in flight both ways.
    private func midConversation() throws -> (Conversation, aliceInFlight: [[UInt8]], bobInFlight: [[UInt8]]) {
        var conversation = try Conversation(seed: 31)
        let early = try (0 ..< 3).map { try conversation.aliceSends(plaintext($0)) }
        XCTAssertEqual(try conversation.bobReceives(early[2]), plaintext(2))
        let reply = try (0 ..< 2).map { try conversation.bobSends(plaintext(10 + $0)) }
        XCTAssertEqual(try conversation.aliceReceives(reply[0]), plaintext(10))
        let later = try (0 ..< 3).map { try conversation.aliceSends(plaintext(20 + $0)) }
        XCTAssertEqual(try conversation.bobReceives(later[1]), plaintext(21))
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 3)
        return (conversation, [early[0], early[1], later[0], later[2]], [reply[1]])
    }

    /// Recomputes the envelope checksum over `body` (everything before the checksum).
    private func sealed(_ body: [UInt8]) -> [UInt8] { body + SHA256.hash(body).prefix(16) }

    private func body(of blob: [UInt8]) -> [UInt8] { Array(blob.dropLast(16)) }

    private func assertLoadFails(_ blob: [UInt8], _ expected: SessionError, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try SessionState(serialized: blob), message, file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, message, file: file, line: line)
        }
    }

    func testSaveAndRestoreMidConversationContinuesCorrectly() throws {
        var (conversation, aliceInFlight, bobInFlight) = try midConversation()
        let aliceBlob = try XCTUnwrap(conversation.alice).serialized()
        let bobBlob = try XCTUnwrap(conversation.bob).serialized()
        conversation.alice = try SessionState(serialized: aliceBlob)
        conversation.bob = try SessionState(serialized: bobBlob)
        XCTAssertEqual(conversation.alice?.serialized(), aliceBlob, "a loaded session serializes to the same bytes")
        XCTAssertEqual(conversation.bob?.serialized(), bobBlob)
        XCTAssertEqual(conversation.bob?.skippedMessageKeyCount, 3)

        for (message, expected) in zip(aliceInFlight, [0, 1, 20, 22]) {
            XCTAssertEqual(try conversation.bobReceives(message), plaintext(expected))
        }
        XCTAssertEqual(try conversation.aliceReceives(bobInFlight[0]), plaintext(11))
        for round in 0 ..< 3 {
            XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(40 + round))), plaintext(40 + round))
            XCTAssertEqual(try conversation.aliceReceives(conversation.bobSends(plaintext(50 + round))), plaintext(50 + round))
        }
    }

    func testRestoredInitiatorStillSendsPreKeyMessagesUntilAReply() throws {
        var conversation = try Conversation(seed: 32)
        let first = try conversation.aliceSends(plaintext(0))
        conversation.alice = try SessionState(serialized: XCTUnwrap(conversation.alice).serialized())
        let second = try conversation.aliceSends(plaintext(1))
        XCTAssertEqual(second.first, WireType.preKeyMessage)
        XCTAssertEqual(try conversation.bobReceives(second), plaintext(1))
        conversation.bob = try SessionState(serialized: XCTUnwrap(conversation.bob).serialized())
        XCTAssertEqual(try conversation.bobReceives(first), plaintext(0), "the restored responder still matches the prefix")
    }

    func testEveryTruncationIsInvalidPayload() throws {
        let (conversation, _, _) = try midConversation()
        let blob = try XCTUnwrap(conversation.bob).serialized()
        for length in 0 ..< blob.count {
            assertLoadFails(Array(blob.prefix(length)), .invalidPayload, "length \(length)")
        }
    }

    func testEveryAlteredByteIsInvalidPayload() throws {
        let (conversation, _, _) = try midConversation()
        let blob = try XCTUnwrap(conversation.alice).serialized()
        for index in blob.indices {
            assertLoadFails(flipped(blob, at: index, bit: index % 8), .invalidPayload, "byte \(index)")
        }
    }

    func testTrailingBytesAreInvalidPayload() throws {
        let (conversation, _, _) = try midConversation()
        let blob = try XCTUnwrap(conversation.bob).serialized()
        assertLoadFails(blob + [0], .invalidPayload, "after the checksum")
        assertLoadFails(sealed(body(of: blob) + [0]), .invalidPayload, "inside the checksummed body")
    }

    func testUnknownVersionIsUnsupportedVersion() throws {
        let (conversation, _, _) = try midConversation()
        let blob = body(of: try XCTUnwrap(conversation.bob).serialized())
        for version: UInt8 in [0, 1, 6, 0xFF] {
            assertLoadFails(sealed(replacing(blob, at: 5, with: [version])), .unsupportedVersion, "version \(version)")
        }
    }

    func testAnotherKindOfStateIsInvalidPayload() throws {
        let (conversation, _, _) = try midConversation()
        let blob = body(of: try XCTUnwrap(conversation.bob).serialized())
        assertLoadFails(sealed(replacing(blob, at: 4, with: [StateKind.preKeys.rawValue])), .invalidPayload)
        assertLoadFails(sealed(replacing(blob, at: 0, with: Array("SKSU".utf8))), .invalidPayload)
    }

    /// Checksummed bodies whose fields break the documented rules are rejected. Offsets follow
    /// the version-5 layout of SessionStatePersistence.swift, counted from the start of the blob
    /// (6 envelope bytes): role 6, generation 7, maxSkip 15, maxStored 19, the identity keys 23
    /// and 55, the two addresses from 87, then EK_A, SHA-256(P) and the pending-prefix flag;
    /// then `isPostQuantum`, the peer's registration id (u32) and `isArchived`, and last the
    /// skipped keys' times (u64 each; 0 here: sessions driven without a manager are not stamped).
    func testInconsistentFieldsAreInvalidPayload() throws {
        let (conversation, _, _) = try midConversation()
        let bob = body(of: try XCTUnwrap(conversation.bob).serialized())
        let roleOffset = 6, maxSkipOffset = 15, addressOffset = 87
        let addressesCount = encodeAddress("bob", 7).count + encodeAddress("alice", 1).count
        let ekOffset = addressOffset + addressesCount, digestOffset = ekOffset + 32, pendingOffset = digestOffset + 32
        XCTAssertEqual(Array(bob[addressOffset ..< ekOffset]), encodeAddress("bob", 7) + encodeAddress("alice", 1), "addresses located")
        XCTAssertEqual(Array(bob[ekOffset ..< digestOffset]), try XCTUnwrap(conversation.bob).baseKey.rawRepresentation, "EK_A located")
        assertLoadFails(sealed(replacing(bob, at: roleOffset, with: [3])), .invalidPayload, "unknown role")
        assertLoadFails(sealed(replacing(bob, at: maxSkipOffset, with: [0, 0, 0x07, 0xD1])), .invalidPayload, "maxSkip 2001 > maxStored")
        assertLoadFails(sealed(flipped(bob, at: ekOffset + 31, bit: 7)), .invalidPayload, "non-canonical EK_A")
        assertLoadFails(sealed(replacing(bob, at: pendingOffset, with: [2])), .invalidPayload, "pending-prefix flag 2")
        assertLoadFails(sealed(replacing(bob, at: pendingOffset, with: [1])), .invalidPayload, "a responder sending prekey messages")
        assertLoadFails(sealed(replacing(bob, at: addressOffset, with: [0])), .invalidPayload, "an empty user id")
        assertLoadFails(sealed(replacing(bob, at: addressOffset + 1, with: [0xFF])), .invalidPayload, "a user id that is not UTF-8")
        // The skipped-key count is the 4 bytes before the 3 stored keys (68 bytes each), the
        // post-quantum flag, the registration id, the archived flag and the 3 keys' times.
        let times = 3 * 8
        let postQuantumOffset = bob.count - times - 6, registrationOffset = bob.count - times - 5, archivedOffset = bob.count - times - 1
        XCTAssertEqual(Array(bob.suffix(times)), [UInt8](repeating: 0, count: times), "three unknown times")
        XCTAssertEqual(bob[postQuantumOffset], 0, "a classic session")
        XCTAssertEqual(Array(bob[registrationOffset ..< archivedOffset]), u32(0), "no registration id in the conversation's prefix")
        XCTAssertEqual(bob[archivedOffset], 0, "not archived")
        assertLoadFails(sealed(replacing(bob, at: postQuantumOffset, with: [2])), .invalidPayload, "isPostQuantum not a bool")
        assertLoadFails(sealed(replacing(bob, at: archivedOffset, with: [2])), .invalidPayload, "isArchived not a bool")
        assertLoadFails(sealed(replacing(bob, at: bob.count - 8, with: [0x80])), .invalidPayload, "a time beyond 2^63 - 1")
        let stamped = try SessionState(serialized: sealed(replacing(bob, at: bob.count - 8, with: u32(0) + u32(1_700_000_000))))
        XCTAssertEqual(stamped.ratchet.skippedKeys.storedTimesInAgeOrder, [0, 0, 1_700_000_000], "the times load in the keys' order")
        assertLoadFails(sealed(replacing(bob, at: registrationOffset, with: u32(0x8000_0000))), .invalidPayload,
                        "a registration id above 2^31 - 1")
        assertLoadFails(sealed(replacing(bob, at: registrationOffset, with: u32(0xFFFF_FFFF))), .invalidPayload,
                        "a registration id of 2^32 - 1")
        XCTAssertEqual(try SessionState(serialized: sealed(replacing(bob, at: registrationOffset, with: u32(0x7FFF_FFFF)))).remoteRegistrationID,
                       RegistrationID(rawValue: 0x7FFF_FFFF), "the largest registration id loads")
        XCTAssertEqual(try SessionState(serialized: sealed(replacing(bob, at: archivedOffset, with: [1]))).isArchived, true)
        assertLoadFails(sealed(Array(bob.dropLast())), .invalidPayload, "a truncated time")
        assertLoadFails(sealed(Array(bob.dropLast(times))), .invalidPayload, "no times in version 5")
        let countOffset = bob.count - times - 3 * 68 - 4 - 6
        XCTAssertEqual(Array(bob[countOffset ..< countOffset + 4]), [0, 0, 0, 3])
        assertLoadFails(sealed(replacing(bob, at: countOffset, with: [0, 0, 0x07, 0xD1])), .invalidPayload, "more than maxStored")
        var duplicated = bob
        duplicated.replaceSubrange(countOffset + 4 + 68 ..< countOffset + 4 + 68 + 36, with: bob[countOffset + 4 ..< countOffset + 4 + 36])
        assertLoadFails(sealed(duplicated), .invalidPayload, "the same skipped slot twice")

        // An initiator that has had no reply holds its pending prefix P (u32 length, then P),
        // which must agree with the local identity key, EK_A and SHA-256(P).
        let pendingSession = try XCTUnwrap(Conversation(seed: 33).alice)
        let alice = body(of: pendingSession.serialized())
        let prefixOffset = pendingOffset + 1 + 4
        XCTAssertEqual(alice[pendingOffset], 1)
        XCTAssertEqual(Array(alice[pendingOffset + 1 ..< prefixOffset]), u32(73))
        XCTAssertEqual(Array(alice[prefixOffset ..< prefixOffset + 73]), try XCTUnwrap(pendingSession.pendingPreKeyPrefix).bytes)
        XCTAssertNoThrow(try SessionState(serialized: sealed(alice)))
        assertLoadFails(sealed(flipped(alice, at: 15)), .invalidPayload, "IK_A of the prefix differs from the local key")
        assertLoadFails(sealed(flipped(alice, at: digestOffset)), .invalidPayload, "the digest differs from SHA-256(P)")
        assertLoadFails(sealed(flipped(alice, at: prefixOffset + 32)), .invalidPayload, "the prefix's EK_A differs")
        assertLoadFails(sealed(replacing(alice, at: prefixOffset + 68, with: [0x08])), .invalidPayload, "a prefix flag bit other than 0-2")
        assertLoadFails(sealed(replacing(alice, at: prefixOffset + 68, with: [0x05])), .invalidPayload,
                        "a registration-id flag without its four bytes")
        assertLoadFails(sealed(replacing(alice, at: pendingOffset + 1, with: u32(72))), .invalidPayload, "a prefix length that disagrees with its flags")
        assertLoadFails(sealed(replacing(alice, at: roleOffset, with: [2])), .invalidPayload, "a responder with a pending prefix")
        assertLoadFails(sealed(replacing(alice, at: alice.count - 6, with: [1])), .invalidPayload,
                        "post-quantum with a pending prefix that has no KEM part")
    }

    /// A version-2 blob (no `isPostQuantum`) still loads, as a classic session, and is written
    /// back as version 5.
    func testAVersionTwoSessionLoadsAsClassic() throws {
        let (conversation, _, _) = try midConversation()
        let session = try XCTUnwrap(conversation.bob)
        let blob = session.serialized()
        XCTAssertEqual(blob[5], 5)
        let times = 8 * session.ratchet.skippedKeys.count
        let versionTwo = sealed(replacing(Array(body(of: blob).dropLast(times + 6)), at: 5, with: [2]))
        let loaded = try SessionState(serialized: versionTwo)
        XCTAssertFalse(loaded.isPostQuantum)
        XCTAssertEqual(loaded.serialized(), blob)
        assertLoadFails(sealed(replacing(Array(body(of: blob).dropLast(times + 5)), at: 5, with: [2])), .invalidPayload,
                        "a version-2 body has no flag")
    }

    /// A version-3 blob (no registration id, no archived mark) still loads, without a
    /// registration id and not archived, and is written back as version 4; a version-4 blob
    /// keeps both.
    func testAVersionThreeSessionLoadsWithoutRegistrationID() throws {
        var conversation = try Conversation(seed: 34, aliceRegistrationID: RegistrationID(rawValue: 0x1234_5678))
        XCTAssertEqual(try conversation.bobReceives(conversation.aliceSends(plaintext(0))), plaintext(0))
        var session = try XCTUnwrap(conversation.bob)
        XCTAssertEqual(session.remoteRegistrationID?.rawValue, 0x1234_5678, "the responder records the prefix's id")
        session.isArchived = true
        let blob = session.serialized()
        XCTAssertEqual(Array(body(of: blob).suffix(5)), u32(0x1234_5678) + [1])
        let reloaded = try SessionState(serialized: blob)
        XCTAssertEqual(reloaded.remoteRegistrationID?.rawValue, 0x1234_5678)
        XCTAssertTrue(reloaded.isArchived)
        let versionThree = sealed(replacing(Array(body(of: blob).dropLast(5)), at: 5, with: [3]))
        let loaded = try SessionState(serialized: versionThree)
        XCTAssertNil(loaded.remoteRegistrationID)
        XCTAssertFalse(loaded.isArchived)
        XCTAssertEqual(loaded.serialized()[5], 5)
        assertLoadFails(sealed(replacing(body(of: blob), at: 5, with: [3])), .invalidPayload, "a version-3 body has no registration id")
    }

    func testSerializationIsDeterministicAndUnchangedByFailures() throws {
        var (conversation, aliceInFlight, _) = try midConversation()
        let before = try XCTUnwrap(conversation.bob).serialized()
        XCTAssertEqual(conversation.bob?.serialized(), before)
        XCTAssertThrowsError(try conversation.bobReceives(flipped(aliceInFlight[0], at: aliceInFlight[0].count - 1)))
        XCTAssertEqual(conversation.bob?.serialized(), before)
    }
}
