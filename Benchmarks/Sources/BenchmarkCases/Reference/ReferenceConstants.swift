/// The constants of SPEC §3–§7, as bytes.
enum ReferenceConstants {
    static let zero32 = [UInt8](repeating: 0, count: 32)
    static let x3dhInfo = Array("SessionKit X3DH v1".utf8)
    static let ratchetInfo = Array("SessionKit Ratchet v1".utf8)
    static let messageKeysInfo = Array("SessionKit MessageKeys v1".utf8)
    static let senderKeyInfo = Array("SessionKit SenderKey v1".utf8)
    /// KDF_CK's message-key input.
    static let messageKeySeed: [UInt8] = [0x01]
    /// KDF_CK's chain-key input.
    static let chainKeySeed: [UInt8] = [0x02]
    static let signalKeyType: UInt8 = 0x05
    static let messageType: UInt8 = 0x01
    static let headerCount = 41
    static let tagCount = 16
    static let maxSkip = 256
    static let maxStored = 2000
}

/// KDF_CK of SPEC §4/§5 on a 32-byte chain key, naively: two one-shot HMACs.
enum ReferenceChainStep<B: ReferenceBackend> {
    /// Writes mk = HMAC(ck, 0x01) into `messageKey` and replaces ck with HMAC(ck, 0x02).
    static func advance(_ chainKey: inout [UInt8], messageKey: UnsafeMutableRawBufferPointer) {
        var next = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        chainKey.withUnsafeMutableBytes { ck in
            ReferenceConstants.messageKeySeed.withUnsafeBytes { one in
                B.hmacSHA256(key: UnsafeRawBufferPointer(ck), message: one, into: messageKey)
            }
            withUnsafeMutableBytes(of: &next) { n in
                ReferenceConstants.chainKeySeed.withUnsafeBytes { two in
                    B.hmacSHA256(key: UnsafeRawBufferPointer(ck), message: two, into: n)
                }
                ck.copyMemory(from: UnsafeRawBufferPointer(n))
            }
        }
    }
}
