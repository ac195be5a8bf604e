// Harness `sender_key_distribution`: parsing and processing sender-key distribution messages
// (SPEC §5, v2: `0x23 || Encode(group) || chain_id || u32(iteration) || chain_key || signing_pk`).
//
// The input is a sequence of items: a selector byte (bit 0: processed for group G2 instead of
// G1, bit 1: wrap the chunk as a distribution for the processing group with a valid signing
// key, so the fuzzer reaches the chain bookkeeping) and a length-prefixed chunk, each handed
// to a receiver that starts with four chains of G1 (so the fifth is added and the sixth
// evicts the oldest). Invariants:
//   - parsing fails exactly as SPEC §5 orders it, from a reference decoder written here: empty
//     `invalidMessage`, type byte other than 0x23 `unsupportedVersion`, an empty group id or
//     a length other than 102 + len(gid) `invalidMessage`; processing then checks that the
//     group is the one processed for (`invalidMessage`) and that the signing key is a valid
//     point (`invalidKey`); nothing else is thrown;
//   - a parsed message re-encodes to the same bytes, its fields are the bytes at their
//     offsets, and its description never shows the chain key;
//   - `processDistribution` leaves the serialized state unchanged on error and for a chain
//     already held (it does not move the start iteration); otherwise the chain is held at the
//     message's iteration with no skipped key, the newest of at most five, older chains kept
//     in order with the oldest evicted first.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let groups = must { [try GroupID(rawRepresentation: Array("group one".utf8)), try GroupID(rawRepresentation: fixedBytes(16, seed: 0x6D))] }

    static func signingKey(seed: UInt64) -> [UInt8] {
        must { try Ed25519.PrivateKey(seed: fixedBytes(32, seed: seed)).publicKey.rawRepresentation }
    }

    static func distribution(group: GroupID, id: [UInt8], iteration: UInt32, chainKey: [UInt8], signing: [UInt8]) -> [UInt8] {
        [0x23, UInt8(group.rawRepresentation.count)] + group.rawRepresentation + id + u32(iteration) + chainKey + signing
    }

    static func distribution(seed: UInt64, iteration: UInt32, group: GroupID = groups[0]) -> [UInt8] {
        distribution(group: group, id: fixedBytes(32, seed: seed &+ 2), iteration: iteration, chainKey: fixedBytes(32, seed: seed),
                     signing: signingKey(seed: seed &+ 1))
    }

    static let baseState: SenderKeyReceiverState = {
        var state = SenderKeyReceiverState()
        for seed in UInt64(1) ... 4 {
            do { try state.processDistribution(distribution(seed: seed * 10, iteration: UInt32(seed)), for: groups[0]) } catch { fail("\(error)") }
        }
        return state
    }()

    struct Parsed {
        let group: [UInt8]
        let chainID: [UInt8]
        let iteration: UInt32
        let chainKey: [UInt8]
        let signing: [UInt8]
    }

    /// SPEC §5's parsing checks: type byte, then length.
    static func referenceParse(_ bytes: [UInt8]) -> Result<Parsed, SessionError> {
        guard let type = bytes.first else { return .failure(.invalidMessage) }
        guard type == 0x23 else { return .failure(.unsupportedVersion) }
        guard bytes.count >= 2 else { return .failure(.invalidMessage) }
        let count = Int(bytes[1])
        guard count > 0, bytes.count == 102 + count else { return .failure(.invalidMessage) }
        let at = 2 + count
        return .success(Parsed(group: Array(bytes[2 ..< at]), chainID: Array(bytes[at ..< at + 32]),
                               iteration: readU32(bytes[at + 32 ..< at + 36]), chainKey: Array(bytes[at + 36 ..< at + 68]),
                               signing: Array(bytes[at + 68 ..< at + 100])))
    }

    /// SPEC §5's processing checks after parsing: the group, then the signing key's validity.
    static func referenceProcess(_ parsed: Parsed, for group: GroupID) -> SessionError? {
        guard parsed.group == group.rawRepresentation else { return .invalidMessage }
        guard let key = try? Ed25519.PublicKey(rawRepresentation: parsed.signing), key.isValidPoint else { return .invalidKey }
        return nil
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var state = baseState
        var rounds = 0
        while !input.isAtEnd, rounds < 16 {
            rounds += 1
            let selector = input.byte()
            let group = groups[Int(selector & 1)]
            var message = input.chunk()
            if selector & 2 != 0 {
                // chunk = chain id material || iteration || chain key; a valid signing key.
                let padded = message + [UInt8](repeating: 0, count: max(0, 68 - message.count))
                message = distribution(group: group, id: Array(padded[0 ..< 32]), iteration: readU32(padded[32 ..< 36]),
                                       chainKey: Array(padded[36 ..< 68]), signing: signingKey(seed: UInt64(selector >> 2)))
            }
            let reference = referenceParse(message)
            var expected: SessionError?
            do {
                let parsed = try SenderKeyDistributionMessage(serialized: message)
                guard case let .success(fields) = reference else { fail("parsed a distribution SPEC §5 rejects (\(reference))") }
                invariant(parsed.serialized == message, "distribution does not re-encode to its bytes")
                invariant(parsed.group.rawRepresentation == fields.group && parsed.chainID.rawRepresentation == fields.chainID
                          && parsed.iteration == fields.iteration && parsed.signingPublicKey.rawRepresentation == fields.signing,
                          "fields are not the bytes at their offsets")
                let secretHex = Hex.encode(fields.chainKey)
                // (The group and chain id are public and shown; a chain key inside them cannot be hidden.)
                let shown = Hex.encode(fields.group) + " " + Hex.encode(fields.chainID)
                invariant(shown.contains(secretHex) || !parsed.description.contains(secretHex) && !parsed.debugDescription.contains(secretHex),
                          "description shows the chain key")
                expected = referenceProcess(fields, for: group)
            } catch {
                guard case let .failure(referenceError) = reference else { fail("parse threw \(error), SPEC §5 parses it") }
                invariant(error == referenceError, "parse threw \(error), expected \(referenceError)")
                expected = referenceError
            }

            let before = state.serialized()
            let chainsBefore = state.chainIDs
            do {
                try state.processDistribution(message, for: group)
                guard expected == nil, case let .success(fields) = reference,
                      let id = try? SenderChainID(rawRepresentation: fields.chainID) else {
                    fail("processDistribution accepted what SPEC §5 rejects with \(String(describing: expected))")
                }
                if chainsBefore.contains(id) {
                    invariant(state.serialized() == before, "a distribution for a chain already held changed the state")
                } else {
                    invariant(state.chainIDs.last == id, "new chain is not the newest")
                    invariant(state.chainIDs.count == min(chainsBefore.count + 1, 5), "chain count \(state.chainIDs.count)")
                    invariant(Array(state.chainIDs.dropLast()) == Array(chainsBefore.suffix(state.chainIDs.count - 1)),
                              "older chains not kept in order, oldest evicted first")
                    invariant(state.iteration(of: id) == UInt64(fields.iteration), "chain held at another iteration")
                    invariant(state.skippedKeyCount(of: id) == 0, "new chain has skipped keys")
                }
            } catch {
                invariant(error == expected, "processDistribution threw \(error), expected \(String(describing: expected))")
                invariant(state.serialized() == before, "state changed after \(error)")
            }
        }
    }

    static func seeds() -> [[UInt8]] {
        let fresh = distribution(seed: 99, iteration: 7)
        let held = distribution(seed: 10, iteration: 1)
        let heldMoved = distribution(seed: 10, iteration: 500)
        var smallOrder = fresh
        smallOrder.replaceSubrange((fresh.count - 32) ..< fresh.count, with: [1] + [UInt8](repeating: 0, count: 31))   // identity point
        let otherGroup = distribution(seed: 98, iteration: 0, group: groups[1])
        return [
            [0] + chunk(fresh),
            [0] + chunk(held),
            [0] + chunk(heldMoved),
            [0] + chunk(fresh) + [0] + chunk(distribution(seed: 98, iteration: .max)) + [0] + chunk(held),
            [0] + chunk(smallOrder),
            [0] + chunk(otherGroup) + [1] + chunk(otherGroup) + [1] + chunk(fresh),
            [0] + chunk(Array(fresh.dropLast())),
            [0] + chunk([0x10] + fresh.dropFirst()),
            [0] + chunk([0x23, 0] + fresh.dropFirst(2)),
            [2] + chunk(fixedBytes(68, seed: 5)) + [6] + chunk(fixedBytes(68, seed: 6)) + [3] + chunk([]),
            [0] + chunk([]),
        ]
    }
}
