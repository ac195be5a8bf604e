/// The constants of SPEC §3–§7 (version 2), as bytes.
enum ReferenceConstants {
    static let zero32 = [UInt8](repeating: 0, count: 32)
    static let ff32 = [UInt8](repeating: 0xff, count: 32)
    static let x3dhInfo = Array("SessionKit X3DH v2".utf8)
    static let pqxdhInfo = Array("SessionKit PQXDH v2".utf8)
    static let ratchetInfo = Array("SessionKit Ratchet v2".utf8)
    static let messageKeysInfo = Array("SessionKit MessageKeys v2".utf8)
    static let senderKeyInfo = Array("SessionKit SenderKey v2".utf8)
    static let selfInfo = Array("SessionKit Self v2".utf8)
    /// The label the identity key signs a signed prekey under: `label || Encode(SPK) || u8(kem)`.
    static let signedPreKeyLabel = Array("SessionKit SPK v2".utf8)
    /// The label the identity key signs a KEM prekey under: `label || EncodeKEM(ek)`.
    static let kemPreKeyLabel = Array("SessionKit KEM v2".utf8)
    /// KDF_CK's message-key input.
    static let messageKeySeed: [UInt8] = [0x01]
    /// KDF_CK's chain-key input.
    static let chainKeySeed: [UInt8] = [0x02]
    /// Encode(X25519 pk) = 0x05 || pk.
    static let signalKeyType: UInt8 = 0x05
    /// EncodeKEM(ek) = 0x0B || ek.
    static let kemKeyType: UInt8 = 0x0B
    static let messageType: UInt8 = 0x21
    static let preKeyMessageType: UInt8 = 0x22
    static let distributionType: UInt8 = 0x23
    static let senderKeyMessageType: UInt8 = 0x24
    static let selfEncryptedType: UInt8 = 0x25
    static let headerCount = 41
    static let tagCount = 16
    static let maxSkip = 256
    static let maxStored = 2000
    static let maxPreviousSessions = 40
    /// ML-KEM-768 sizes (FIPS 203).
    static let kemKeyCount = 1184
    static let kemCiphertextCount = 1088
    static let kemSeedCount = 64
    /// Sender-key HKDF output: key (32) || nonce (12) || commit (32).
    static let senderKeyMaterialCount = 76
    /// `0x24 || chain_id || u32(iteration) || commit`.
    static let senderKeyHeadCount = 1 + 32 + 4 + 32
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

/// A device address (SPEC §1): `Encode(address) = u8(len(uid)) || uid || u32(device_id)`.
struct ReferenceAddress: Equatable {
    let uid: [UInt8]
    let deviceID: UInt32

    var encoded: [UInt8] {
        var bytes: [UInt8] = [UInt8(truncatingIfNeeded: uid.count)]
        bytes += uid
        bytes.appendU32(deviceID)
        return bytes
    }
}

/// `Encode(group) = u8(len(gid)) || gid` (SPEC §1).
func encodeGroup(_ gid: [UInt8]) -> [UInt8] { [UInt8(truncatingIfNeeded: gid.count)] + gid }
