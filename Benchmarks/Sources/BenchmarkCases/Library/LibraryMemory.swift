import BenchmarkHarness
@_spi(Testing) import SessionKit
import SignalPrimitives

/// The memory figures of SessionKit sessions.
enum LibraryMemory {
    /// The serialized size of a session just created by the initiator (nothing sent yet).
    static func freshSessionSize(_ f: ProtocolFixture) throws -> MemoryMeasurement {
        let identity = try IdentityKeyPair(seed: f.aliceSeed)
        let session = try SessionState(
            initiatingWith: try LibraryProtocol.bundle(f), identity: identity,
            localAddress: try LibraryProtocol.address(f.aliceAddress), remoteAddress: try LibraryProtocol.address(f.bobAddress),
            kem: nil)
        return MemoryMeasurement(
            name: "session.serialized.fresh",
            summary: "serialized session, initiator, nothing sent yet (holds its prekey prefix P, no KEM part)",
            bytes: session.serialized().count)
    }

    /// Bob's session after receiving, in eight bursts, only the last of every 251 messages:
    /// 8 × 250 = 2000 skipped keys (MAX_STORED), each below MAX_SKIP per message.
    static func sessionWithSkippedKeys(_ f: ProtocolFixture) throws -> (session: SessionState, heapBytes: Int) {
        var (alice, bob) = try LibraryProtocol.conversation(f)
        var heldBefore = 0
        var messages: [[UInt8]] = []
        messages.reserveCapacity(251)
        heldBefore = HeapProbe.bytesInUse()
        for _ in 0..<8 {
            messages.removeAll(keepingCapacity: true)
            for _ in 0..<251 { messages.append(try alice.encrypt(f.plaintext)) }
            _ = try bob.decrypt(messages[250])
        }
        messages.removeAll()
        let heapBytes = HeapProbe.bytesInUse() - heldBefore
        guard bob.skippedMessageKeyCount == 2000 else {
            throw CheckFailure("expected 2000 skipped keys, the session holds \(bob.skippedMessageKeyCount)")
        }
        return (bob, heapBytes)
    }

    /// Heap growth over 10,000 messages between two established sessions: bursts of 1 to 10
    /// messages in alternating directions, every message delivered in order and decrypted.
    static func heapGrowth(_ f: ProtocolFixture, messages count: Int) throws -> Int {
        var (alice, bob) = try LibraryProtocol.conversation(f)
        var generator = SplitMix(seed: 5)
        func exchange(_ total: Int) throws {
            var sent = 0
            var aliceSends = true
            while sent < total {
                let burst = min(Int(generator.next() % 10) + 1, total - sent)
                for _ in 0..<burst {
                    if aliceSends {
                        _ = try bob.decrypt(try alice.encrypt(f.plaintext))
                    } else {
                        _ = try alice.decrypt(try bob.encrypt(f.plaintext))
                    }
                }
                sent += burst
                aliceSends.toggle()
            }
        }
        try exchange(200)  // settle lazily created state (metadata caches, first chains)
        let before = HeapProbe.bytesInUse()
        try exchange(count)
        return HeapProbe.bytesInUse() - before
    }

    /// A small deterministic generator for the burst lengths.
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }
}
