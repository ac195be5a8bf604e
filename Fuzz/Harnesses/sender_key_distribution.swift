// Harness `sender_key_distribution`: parsing and processing sender-key distribution
// messages (SPEC §5).
//
// The input is a sequence of length-prefixed chunks, each handed to a receiver that starts
// with four chains (so the fifth is added and the sixth evicts the oldest). Invariants:
//   - parsing fails exactly as SPEC §5 orders it: empty or wrong length `invalidMessage`,
//     type byte other than 0x10 `unsupportedVersion`, signing key not a valid point
//     `invalidKey`; nothing else is thrown;
//   - a parsed message re-encodes to the same 101 bytes, and its description never shows
//     the chain key;
//   - `processDistribution` leaves the serialized state unchanged on error and for a chain
//     already held; otherwise the chain is held at the message's iteration, the newest of at
//     most five.
import SessionKit
import SignalPrimitives

enum Harness {
    static func distribution(seed: UInt64, iteration: UInt32) -> [UInt8] {
        guard let signing = try? Ed25519.PrivateKey(seed: fixedBytes(32, seed: seed &+ 1)) else { fail("signing key") }
        let id = fixedBytes(32, seed: seed &+ 2)
        let iterationBytes = [UInt8(iteration >> 24), UInt8(truncatingIfNeeded: iteration >> 16),
                              UInt8(truncatingIfNeeded: iteration >> 8), UInt8(truncatingIfNeeded: iteration)]
        return [0x10] + id + iterationBytes + fixedBytes(32, seed: seed) + signing.publicKey.rawRepresentation
    }

    static let baseState: SenderKeyReceiverState = {
        var state = SenderKeyReceiverState()
        for seed in UInt64(1) ... 4 {
            do { try state.processDistribution(distribution(seed: seed * 10, iteration: UInt32(seed))) } catch { fail("\(error)") }
        }
        return state
    }()

    static func expectedError(_ bytes: [UInt8]) -> SessionError? {
        guard let type = bytes.first else { return .invalidMessage }
        guard type == 0x10 else { return .unsupportedVersion }
        guard bytes.count == 101 else { return .invalidMessage }
        guard let key = try? Ed25519.PublicKey(rawRepresentation: Array(bytes[69...])), key.isValidPoint else { return .invalidKey }
        return nil
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        var state = baseState
        var rounds = 0
        while !input.isAtEnd, rounds < 16 {
            rounds += 1
            let message = input.chunk()
            let expected = expectedError(message)
            do {
                let parsed = try SenderKeyDistributionMessage(serialized: message)
                invariant(expected == nil, "parsed a distribution SPEC §5 rejects (\(String(describing: expected)))")
                invariant(parsed.serialized == message, "distribution does not re-encode to its bytes")
                let secretHex = Hex.encode(message[37 ..< 69])
                // (The chain id is public and shown; a chain key equal to it cannot be hidden.)
                invariant(message[37 ..< 69].elementsEqual(message[1 ..< 33]) || !parsed.description.contains(secretHex) && !parsed.debugDescription.contains(secretHex),
                          "description shows the chain key")
            } catch {
                invariant(error == expected, "parse threw \(error), expected \(String(describing: expected))")
            }

            let before = state.serialized()
            let chainsBefore = state.chainIDs
            do {
                try state.processDistribution(message)
                guard let id = try? SenderChainID(rawRepresentation: Array(message[1 ..< 33])) else { fail("chain id") }
                if chainsBefore.contains(id) {
                    invariant(state.serialized() == before, "a distribution for a chain already held changed the state")
                } else {
                    let iteration = message[33 ..< 37].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    invariant(state.chainIDs.last == id, "new chain is not the newest")
                    invariant(state.chainIDs.count == min(chainsBefore.count + 1, 5), "chain count \(state.chainIDs.count)")
                    invariant(Array(state.chainIDs.dropLast()) == Array(chainsBefore.suffix(state.chainIDs.count - 1)),
                              "older chains not kept in order, oldest evicted first")
                    invariant(state.iteration(of: id) == iteration, "chain held at another iteration")
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
        var smallOrder = fresh
        smallOrder.replaceSubrange(69 ..< 101, with: [1] + [UInt8](repeating: 0, count: 31))   // identity point
        return [
            chunk(fresh),
            chunk(held),
            chunk(fresh) + chunk(distribution(seed: 98, iteration: .max)) + chunk(held),
            chunk(smallOrder),
            chunk(Array(fresh.dropLast())),
            chunk([0x11] + fresh.dropFirst()),
            chunk([]),
        ]
    }
}
