@_spi(Testing) import SessionKit
import SignalPrimitives

/// SPEC §8 suite `retry-notice` (§9). A success test gives B's and A's identity seeds, the
/// addresses (`from_address` B, `to_address` A), `registration_id`, `kind` and the kind's fields
/// (`ratchet_key` and `n`, or `group_id`, `chain_id` and `iteration`): B's notice must encode to
/// exactly `notice`, and A (with `a_identity_seed`, its own address `to_address`, and its trust
/// record `trusted_key` when given) must accept `notice` as arrived from `from_address` and read
/// the same fields. An error test gives `notice`, `a_identity_seed`, `from_address`,
/// `to_address` and optionally `trusted_key`: A's checks must fail with `error`
/// (`untrustedIdentity` is the untrusted-identity outcome of the trust record check).
public enum RetryNoticeSuite: ProtocolSuite {
    /// The suite name in vector files.
    public static let name = "retry-notice"

    /// Runs one test.
    /// - Throws: `VectorFailure` when the library disagrees with the test.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let notice = try test.hex("notice")
        let alice = try IdentityKeyPair(seed: test.hex("a_identity_seed"))
        let from = try test.address("from_address")
        let to = try test.address("to_address")
        let trusted = try test.optionalHex("trusted_key").map { try Ed25519.PublicKey(rawRepresentation: $0) }

        func verify() throws -> RetryNotice {
            let read = try RetryNotice(verifying: notice, from: from, localAddress: to, identity: alice)
            try read.checkSenderIdentity(trusted: trusted)
            return read
        }

        if let expected = test.expectedError {
            try ExpectedError.check(expected) { _ = try verify() }
            return .passed
        }
        let bob = try IdentityKeyPair(seed: test.hex("b_identity_seed"))
        guard let registrationID = try test.optionalRegistrationID() else { throw VectorFailure("missing field 'registration_id'") }
        let failure: RetryNotice.Failure
        switch try test.int("kind") {
        case 1:
            failure = .pairwise(ratchetKey: try test.hex("ratchet_key"), counter: try test.uint32("n"))
        case 2:
            failure = .group(try test.groupID("group_id"), chainID: try test.hex("chain_id"), iteration: try test.uint32("iteration"))
        case let other:
            throw VectorFailure("kind \(other) is not 1 or 2")
        }
        let created = try RetryNotice(
            from: bob, at: from, to: to, recipientIdentityKey: alice.publicKey, registrationID: registrationID, failure: failure)
        try ExpectedError.equal(created.serialized, notice, "notice")
        let read = try verify()
        guard read.sender == from, read.recipient == to, read.registrationID == registrationID, read.failure == failure,
              read.senderIdentityKey == bob.publicKey else {
            throw VectorFailure("the notice decodes to other fields than it was built from: \(read)")
        }
        return .passed
    }
}
