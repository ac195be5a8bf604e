import Foundation
import SignalPrimitives
@testable import SessionKit

/// Deterministic randomness and small builders shared by the sender-key and self-encryption tests.
enum GroupTestSupport {
    /// A random source that returns the same fixed bytes on every fill (zeros past their end).
    struct FixedRandomSource: RandomSource {
        let bytes: [UInt8]
        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            for index in buffer.indices { buffer[index] = index < bytes.count ? bytes[index] : 0 }
        }
    }

    /// `count` bytes from `generator`.
    static func bytes(_ count: Int, using generator: inout SeededGenerator) -> [UInt8] {
        (0 ..< count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A sending chain from fixed key material, and a receiver that has processed its distribution.
    static func chainAndReceiver(seed: UInt64, iteration: UInt32 = 0) throws -> (SenderKeySendingChain, SenderKeyReceiverState) {
        var generator = SeededGenerator(seed: seed)
        let signing = try Ed25519.PrivateKey(seed: bytes(32, using: &generator))
        let chain = try SenderKeySendingChain(initialChainKey: bytes(32, using: &generator), signingKey: signing, iteration: iteration)
        var receiver = SenderKeyReceiverState()
        try receiver.processDistribution(try chain.distributionMessage().serialized)
        return (chain, receiver)
    }

    /// The SPEC §5 message with an arbitrary `padded` payload (which need not be valid
    /// padding), built from the SPEC's formulas with the primitives directly.
    static func senderKeyMessage(chainKeyAtIteration chainKey: [UInt8], iteration: UInt32, chainID: [UInt8],
                                 padded: [UInt8], signingKey: Ed25519.PrivateKey) throws -> [UInt8] {
        let mk = HMACSHA256.authenticationCode(for: [0x01], using: chainKey)
        let material = try HKDF.deriveKey(inputKeyMaterial: mk, salt: [UInt8](repeating: 0, count: 32),
                                          info: Array("SessionKit SenderKey v1".utf8), outputByteCount: 44)
        var header: [UInt8] = [0x11] + chainID
        header.appendBigEndian(iteration)
        let ciphertext = try AES256GCM.seal(padded, using: SymmetricKey(data: Array(material[0 ..< 32])),
                                            nonce: Array(material[32 ..< 44]), authenticating: header)
        let signed = header + ciphertext
        return signed + signingKey.signature(for: signed)
    }
}
