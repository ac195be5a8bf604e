import Foundation
import SignalPrimitives
@_spi(Testing) @testable import SessionKit
import TestSupport

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
    static func bytes(_ count: Int, using generator: inout SplitMix64) -> [UInt8] {
        (0 ..< count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The group and sender of the chains `chainAndReceiver` builds.
    static let group = groupID("test group")
    static let sender = address("sender", 3)

    /// A sending chain from fixed key material (for `group`, sent by `sender`), and a receiver
    /// that has processed its distribution.
    static func chainAndReceiver(
        seed: UInt64, iteration: UInt32 = 0, group: GroupID = group, sender: ProtocolAddress = sender
    ) throws -> (SenderKeySendingChain, SenderKeyReceiverState) {
        var generator = SplitMix64(seed: seed)
        let signing = try Ed25519.PrivateKey(seed: bytes(32, using: &generator))
        let chain = try SenderKeySendingChain(
            group: group, sender: sender, initialChainKey: bytes(32, using: &generator), signingKey: signing, iteration: iteration)
        var receiver = SenderKeyReceiverState()
        try receiver.processDistribution(try chain.distributionMessage().serialized, for: group)
        return (chain, receiver)
    }

    /// `Encode(group) = u8(len(gid)) || gid`, written out independently of `GroupID.encoded`.
    static func encodeGroup(_ name: String) -> [UInt8] {
        let gid = Array(name.utf8)
        return [UInt8(gid.count)] + gid
    }

    /// The SPEC §5 message with an arbitrary `padded` payload (which need not be valid
    /// padding), built from the SPEC's formulas with the primitives directly:
    /// `(key, nonce, commit) = HKDF(ZERO32, mk, "SessionKit SenderKey v2", 76)`,
    /// `message = 0x24 || chain_id || u32(iteration) || commit || ct || sig`, `ct` with
    /// `aad = 0x24 || Encode(group) || Encode(sender) || chain_id || u32(iteration) || commit`,
    /// `sig` over `Encode(group) || Encode(sender) || message before sig`. `commitment`
    /// replaces the derived commit when given (a message that does not commit to its key).
    static func senderKeyMessage(chainKeyAtIteration chainKey: [UInt8], iteration: UInt32, chainID: [UInt8],
                                 padded: [UInt8], signingKey: Ed25519.PrivateKey,
                                 groupName: String = "test group", sender: (String, UInt32) = ("sender", 3),
                                 commitment: [UInt8]? = nil) throws -> [UInt8] {
        let mk = HMACSHA256.authenticationCode(for: [0x01], using: chainKey)
        let material = try HKDF.deriveKey(inputKeyMaterial: mk, salt: [UInt8](repeating: 0, count: 32),
                                          info: Array("SessionKit SenderKey v2".utf8), outputByteCount: 76)
        let commit = commitment ?? Array(material[44 ..< 76])
        let context = encodeGroup(groupName) + encodeAddress(sender.0, sender.1)
        let header: [UInt8] = [0x24] + chainID + u32(iteration) + commit
        let aad = [0x24] + context + Array(header.dropFirst())
        let ciphertext = try AES256GCM.seal(padded, using: SymmetricKey(data: Array(material[0 ..< 32])),
                                            nonce: Array(material[32 ..< 44]), authenticating: aad)
        let signed = header + ciphertext
        return signed + signingKey.signature(for: context + signed)
    }
}
