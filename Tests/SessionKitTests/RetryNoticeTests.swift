import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// The retry notice's codec and A's checks (SPEC §9); the generator's vectors
/// (`retry_notice.json`) pin the bytes, these pin the API around them.
final class RetryNoticeTests: XCTestCase {
    private let bob = address("bob", 2)
    private let alice = address("alice", 1)

    private func identities(_ seed: UInt64) throws -> (alice: IdentityKeyPair, bob: IdentityKeyPair) {
        let random = SeededRandomSource(seed: seed)
        return (try IdentityKeyPair(using: random), try IdentityKeyPair(using: random))
    }

    private func notice(_ failure: RetryNotice.Failure, seed: UInt64 = 1) throws -> (RetryNotice, IdentityKeyPair, IdentityKeyPair) {
        let (a, b) = try identities(seed)
        let notice = try RetryNotice(
            from: b, at: bob, to: alice, recipientIdentityKey: a.publicKey, registrationID: try XCTUnwrap(RegistrationID(rawValue: 77)),
            failure: failure)
        return (notice, a, b)
    }

    func testANoticeReadsBackAtAWithEveryField() throws {
        let group = try GroupID("club")
        for failure: RetryNotice.Failure in [
            .pairwise(ratchetKey: [UInt8](repeating: 0xFF, count: 32), counter: 5),
            .group(group, chainID: [UInt8](repeating: 0, count: 32), iteration: .max),
        ] {
            let (sent, a, b) = try notice(failure)
            // 0x27 || Encode(B) || Encode(A) || u32(77) || kind || body || IK_B || mac
            var head = [0x27] + encodeAddress("bob", 2) + encodeAddress("alice", 1) + u32(77) + [failure.kind]
            switch failure {
            case let .pairwise(key, n): head += key + u32(n)
            case let .group(group, chain, iteration): head += [UInt8(group.rawRepresentation.count)] + group.rawRepresentation + chain + u32(iteration)
            }
            head += b.publicKey.rawRepresentation
            XCTAssertEqual(Array(sent.serialized.prefix(head.count)), head)
            XCTAssertEqual(sent.serialized.count, head.count + 32)
            let read = try RetryNotice(verifying: sent.serialized, from: bob, localAddress: alice, identity: a)
            XCTAssertEqual(read, sent)
            XCTAssertNoThrow(try read.checkSenderIdentity(trusted: nil), "without a record IK_B is accepted")
            XCTAssertNoThrow(try read.checkSenderIdentity(trusted: b.publicKey))
            XCTAssertThrowsError(try read.checkSenderIdentity(trusted: a.publicKey)) {
                XCTAssertEqual($0 as? SessionError, .untrustedIdentity)
            }
        }
    }

    /// The MAC is deniable: A computes the same K from its side, so A can make a notice "from
    /// B" that verifies at A (and so proves nothing to anyone else).
    func testAComputesTheSameKeyAsB() throws {
        let (sent, a, b) = try notice(.pairwise(ratchetKey: [UInt8](repeating: 1, count: 32), counter: 0))
        let keyA = try RetryNoticeKey(local: a, remote: b.publicKey)
        let keyB = try RetryNoticeKey(local: b, remote: a.publicKey)
        let head = sent.serialized.dropLast(32)
        XCTAssertEqual(keyA.mac(head), keyB.mac(head))
        XCTAssertEqual(keyA.mac(head), Array(sent.serialized.suffix(32)))
    }

    /// The order of A's checks (the vectors pin each name; these pin the order where two
    /// faults meet): addresses before the point, the point before the MAC.
    func testAChecksInSpecOrder() throws {
        let (sent, a, _) = try notice(.pairwise(ratchetKey: [UInt8](repeating: 1, count: 32), counter: 9))
        let bytes = sent.serialized
        func error(_ bytes: [UInt8], from: ProtocolAddress? = nil, to: ProtocolAddress? = nil) -> SessionError? {
            do { _ = try RetryNotice(verifying: bytes, from: from ?? bob, localAddress: to ?? alice, identity: a) } catch { return error }
            return nil
        }
        XCTAssertEqual(error([]), .invalidMessage)
        XCTAssertEqual(error([0x21] + bytes.dropFirst()), .unsupportedVersion)
        XCTAssertEqual(error(Array(bytes.dropLast())), .invalidMessage)
        XCTAssertEqual(error(bytes, from: address("bob", 3)), .invalidMessage, "re-attributed")
        XCTAssertEqual(error(bytes, to: address("alice", 2)), .invalidMessage, "re-addressed")
        let keyOffset = bytes.count - 64
        let smallOrder = [UInt8](repeating: 0, count: 32)    // y = 0 is not a valid point
        XCTAssertEqual(error(replacing(bytes, at: keyOffset, with: smallOrder)), .invalidKey, "the point before the MAC")
        XCTAssertEqual(error(replacing(bytes, at: keyOffset, with: smallOrder), from: address("bob", 3)), .invalidMessage,
                       "the address before the point")
        XCTAssertEqual(error(flipped(bytes, at: bytes.count - 1)), .invalidMessage, "the MAC")
        XCTAssertEqual(error(flipped(bytes, at: keyOffset - 1)), .invalidMessage, "the counter is under the MAC")
        let idOffset = 1 + encodeAddress("bob", 2).count + encodeAddress("alice", 1).count
        XCTAssertEqual(error(replacing(bytes, at: idOffset, with: u32(0))), .invalidMessage, "registration id 0")
        XCTAssertEqual(error(replacing(bytes, at: idOffset + 4, with: [3])), .invalidMessage, "kind 3")
        XCTAssertNil(error(bytes))
    }

    func testCreatingRefusesWrongLengthsAndABadRecipientKey() throws {
        let (a, b) = try identities(2)
        let id = try XCTUnwrap(RegistrationID(rawValue: 1))
        XCTAssertThrowsError(try RetryNotice(
            from: b, at: bob, to: alice, recipientIdentityKey: a.publicKey, registrationID: id,
            failure: .pairwise(ratchetKey: [1, 2, 3], counter: 0)))
        XCTAssertThrowsError(try RetryNotice(
            from: b, at: bob, to: alice, recipientIdentityKey: try Ed25519.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 32)),
            registrationID: id, failure: .pairwise(ratchetKey: [UInt8](repeating: 1, count: 32), counter: 0))) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
    }
}
