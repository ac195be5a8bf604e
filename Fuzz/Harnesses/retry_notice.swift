// Harness `retry_notice`: reading a retry notice (SPEC §9) as A,
// `RetryNotice(verifying:from:localAddress:identity:)` then `checkSenderIdentity(trusted:)`, and
// B's encoder `RetryNotice(from:at:to:recipientIdentityKey:registrationID:failure:)`.
//
// Input: a mode byte (mod 2), then:
//   0: raw notice bytes, read by Alice (alice.1) as arrived from Bob (bob.7);
//   1: notice parts that the harness encodes and MACs itself from SPEC §9 (so the fuzzer gets
//      past the MAC to the later checks): a control byte (bit 0 kind 2, else kind 1; bit 1
//      corrupt the MAC; bit 2 name another device of Bob's as the sender; bit 3 name another
//      device of Alice's as the recipient; bit 4 IK_B and the MAC key's identity from a seed in
//      the input, else Bob's; bit 5 a trust record for Bob holding Bob's key, bit 6 a kind byte
//      from the input), [seed 32], u32 id, [kind], then the body: kind 1 ratchet key (32) and
//      u32 n, kind 2 a group id chunk (1–255 bytes, else as given), chain id (32) and
//      u32 iteration.
//
// Invariants: the outcome is exactly what a reference reader written from SPEC §9 says, in its
// order: empty `invalidMessage`; a type byte other than 0x27 `unsupportedVersion`; lengths (an
// address or group id of 0 bytes or running past the end, a missing or extra byte), a kind other
// than 1 and 2, a registration id of 0 or above 2^31 − 1 `invalidMessage`; Encode(B) other than
// the transport's sender or Encode(A) other than Alice's own `invalidMessage`; IK_B not a valid
// point `invalidKey`; a MAC other than HMAC(HKDF(ZERO32, DH(x(IK_A).sk, x(IK_B).pk),
// "SessionKit Retry v2", 32), notice before the MAC) `invalidMessage`; a trust record holding
// another key `untrustedIdentity`. An accepted notice's fields are the bytes at their offsets
// and its `serialized` is the input; when IK_B is Bob's, Bob's encoder of the same fields gives
// the same bytes.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let alice = must { try IdentityKeyPair(seed: fixedBytes(32, seed: 0xA11CE)) }
    static let bob = must { try IdentityKeyPair(seed: fixedBytes(32, seed: 0xB0B)) }
    static let bobOther = must { try ProtocolAddress(userID: "bob", deviceID: 8) }
    static let info = Array("SessionKit Retry v2".utf8)

    // MARK: Reference (SPEC §9)

    struct ReferenceNotice {
        let sender: [UInt8]
        let recipient: [UInt8]
        let registrationID: UInt32
        let kind: UInt8
        let body: [UInt8]
        let identityKey: [UInt8]
        let mac: [UInt8]
    }

    /// The lengths, kind and registration id.
    static func referenceDecode(_ bytes: [UInt8]) -> Result<ReferenceNotice, SessionError> {
        guard let type = bytes.first else { return .failure(.invalidMessage) }
        guard type == 0x27 else { return .failure(.unsupportedVersion) }
        var offset = 1
        func address() -> [UInt8]? {
            guard offset < bytes.count else { return nil }
            let length = Int(bytes[offset])
            guard length > 0, offset + 1 + length + 4 <= bytes.count else { return nil }
            defer { offset += 1 + length + 4 }
            return Array(bytes[offset ..< offset + 1 + length + 4])
        }
        guard let sender = address(), let recipient = address(), offset + 5 <= bytes.count else { return .failure(.invalidMessage) }
        let id = readU32(bytes[offset ..< offset + 4])
        let kind = bytes[offset + 4]
        offset += 5
        let bodyStart = offset
        switch kind {
        case 1:
            guard offset + 36 <= bytes.count else { return .failure(.invalidMessage) }
            offset += 36
        case 2:
            guard offset < bytes.count, bytes[offset] > 0, offset + 1 + Int(bytes[offset]) + 36 <= bytes.count else {
                return .failure(.invalidMessage)
            }
            offset += 1 + Int(bytes[offset]) + 36
        default:
            return .failure(.invalidMessage)
        }
        guard offset + 64 == bytes.count, id >= 1, id <= 0x7FFF_FFFF else { return .failure(.invalidMessage) }
        return .success(ReferenceNotice(
            sender: sender, recipient: recipient, registrationID: id, kind: kind, body: Array(bytes[bodyStart ..< offset]),
            identityKey: Array(bytes[offset ..< offset + 32]), mac: Array(bytes[(offset + 32)...])))
    }

    /// K from `local`'s side and `remote` (an invalid point gives nil).
    static func referenceKey(local: IdentityKeyPair, remote: [UInt8]) -> SymmetricKey? {
        guard let key = try? Ed25519.PublicKey(rawRepresentation: remote), key.isValidPoint,
              let agreement = try? key.convertToX25519(),
              let shared = try? local.privateKey.convertToX25519().sharedSecret(with: agreement) else { return nil }
        return try? HKDF.deriveKey(inputKeyMaterial: shared, salt: [UInt8](repeating: 0, count: 32), info: info, outputByteCount: 32)
    }

    static func referenceMAC(_ key: SymmetricKey, _ bytes: [UInt8]) -> [UInt8] {
        var hmac = HMACSHA256(key: key)
        hmac.update(bytes)
        return hmac.finalize()
    }

    /// A's checks after decoding, in order.
    static func referenceCheck(_ bytes: [UInt8], trusted: [UInt8]?) -> Result<ReferenceNotice, SessionError> {
        let decoded = referenceDecode(bytes)
        guard case let .success(notice) = decoded else { return decoded }
        guard notice.sender == Addresses.bob.encoded, notice.recipient == Addresses.alice.encoded else { return .failure(.invalidMessage) }
        guard let key = referenceKey(local: alice, remote: notice.identityKey) else { return .failure(.invalidKey) }
        guard referenceMAC(key, Array(bytes.dropLast(32))) == notice.mac else { return .failure(.invalidMessage) }
        if let trusted, trusted != notice.identityKey { return .failure(.untrustedIdentity) }
        return .success(notice)
    }

    // MARK: Checks

    static func check(_ bytes: [UInt8], trusted: [UInt8]?) {
        let expected = referenceCheck(bytes, trusted: trusted)
        let trustedKey = trusted.flatMap { try? Ed25519.PublicKey(rawRepresentation: $0) }
        let notice: RetryNotice
        do {
            notice = try RetryNotice(verifying: bytes, from: Addresses.bob, localAddress: Addresses.alice, identity: alice)
            try notice.checkSenderIdentity(trusted: trustedKey)
        } catch {
            guard case let .failure(reference) = expected else { fail("the notice was refused (\(error)), SPEC §9 accepts it") }
            invariant(error == reference, "the notice was refused with \(error), SPEC §9 says \(reference)")
            return
        }
        guard case let .success(parts) = expected else { fail("accepted a notice SPEC §9 refuses: \(expected)") }
        invariant(notice.serialized == bytes, "serialized is not the input")
        invariant(notice.sender == Addresses.bob && notice.recipient == Addresses.alice, "addresses")
        invariant(notice.registrationID.rawValue == parts.registrationID, "registration id")
        invariant(notice.senderIdentityKey.rawRepresentation == parts.identityKey, "IK_B")
        invariant(notice.failure.kind == parts.kind, "kind")
        switch notice.failure {
        case let .pairwise(ratchetKey, counter):
            invariant(ratchetKey + u32(counter) == parts.body, "the pairwise body")
        case let .group(group, chainID, iteration):
            invariant(group.encoded + chainID + u32(iteration) == parts.body, "the group body")
        }
        if parts.identityKey == bob.publicKey.rawRepresentation {
            do {
                let encoded = try RetryNotice(
                    from: bob, at: Addresses.bob, to: Addresses.alice, recipientIdentityKey: alice.publicKey,
                    registrationID: notice.registrationID, failure: notice.failure)
                invariant(encoded.serialized == bytes, "Bob's encoder gives other bytes")
            } catch {
                fail("Bob cannot encode an accepted notice: \(error)")
            }
        }
    }

    /// A notice built and MACed from SPEC §9 by the harness (mode 1), with the trust record.
    static func builtNotice(_ input: inout FuzzInput) -> (bytes: [UInt8], trusted: [UInt8]?) {
        let control = input.byte()
        var signer = bob
        if control & 0x10 != 0 {
            let seed = input.take(32)
            signer = must { try IdentityKeyPair(seed: seed + [UInt8](repeating: 0, count: 32 - seed.count)) }
        }
        let sender = control & 0x04 != 0 ? bobOther : Addresses.bob
        let recipient = control & 0x08 != 0 ? Addresses.aliceOther : Addresses.alice
        let id = input.u32()
        var kind: UInt8 = control & 1 != 0 ? 2 : 1
        if control & 0x40 != 0 { kind = input.byte() }
        func bytes(_ count: Int) -> [UInt8] { let part = input.take(count); return part + [UInt8](repeating: 0, count: count - part.count) }
        var body: [UInt8]
        if control & 1 != 0 {
            let group = Array(input.chunk().prefix(300))
            body = [UInt8(truncatingIfNeeded: group.count)] + group + bytes(32) + u32(input.u32())
        } else {
            body = bytes(32) + u32(input.u32())
        }
        let head = [0x27] + sender.encoded + recipient.encoded + u32(id) + [kind] + body + signer.publicKey.rawRepresentation
        var mac = referenceKey(local: signer, remote: alice.publicKey.rawRepresentation).map { referenceMAC($0, head) }
            ?? [UInt8](repeating: 0, count: 32)
        if control & 0x02 != 0 { mac[Int(id % 32)] ^= 0x04 }
        return (head + mac, control & 0x20 != 0 ? bob.publicKey.rawRepresentation : nil)
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        if input.byte() % 2 == 0 {
            check(input.rest(), trusted: nil)
        } else {
            let (notice, trusted) = builtNotice(&input)
            check(notice, trusted: trusted)
        }
    }

    static func seeds() -> [[UInt8]] {
        must("seed notices") {
            let id = try registrationID(77)
            let group = try GroupID("club")
            var seeds: [[UInt8]] = []
            for failure: RetryNotice.Failure in [
                .pairwise(ratchetKey: fixedBytes(32, seed: 1), counter: 5),
                .group(group, chainID: fixedBytes(32, seed: 2), iteration: 0xFFFF_FFFF),
            ] {
                let notice = try RetryNotice(
                    from: bob, at: Addresses.bob, to: Addresses.alice, recipientIdentityKey: alice.publicKey, registrationID: id,
                    failure: failure)
                seeds.append([0] + notice.serialized)
                seeds.append([0] + notice.serialized.dropLast())
            }
            for control: UInt8 in [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x21, 0x40] {
                var parts: [UInt8] = [1, control]
                if control & 0x10 != 0 { parts += fixedBytes(32, seed: 3) }
                parts += [0, 0, 0, 9]
                if control & 0x40 != 0 { parts += [3] }
                parts += control & 1 != 0 ? chunk(Array("club".utf8)) + fixedBytes(32, seed: 4) + [0, 0, 0, 1] : fixedBytes(32, seed: 5) + [0, 0, 0, 2]
                seeds.append(parts)
            }
            seeds.append([0])
            seeds.append([0, 0x27])
            seeds.append([0, 0x26])
            return seeds
        }
    }

    /// A registration id the seeds use.
    private static func registrationID(_ value: UInt32) throws -> RegistrationID {
        guard let id = RegistrationID(rawValue: value) else { throw SessionError.invalidPayload }
        return id
    }
}
