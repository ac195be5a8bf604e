import SignalPrimitives

/// One EK_A replay record (SPEC §3): the base key EK_A of an X3DH this device completed as the
/// responder, under the signed prekey it used.
///
/// A store keeps these records next to the prekeys, not inside `LocalPreKeys` (which counts
/// them per signed prekey, for the cap): `PreKeyStore.hasRecordedBaseKey(_:signedPreKeyID:)`
/// looks one up, `ProtocolStore.commit(_:)` adds the one a prekey message created
/// (`StoreCommit.baseKeyRecord`), and `PreKeyStore.updatePreKeys(_:)` deletes those of the
/// signed prekeys an update removes. EK_A is a public key: a record holds no secret.
public struct BaseKeyRecord: Sendable, Hashable, CustomStringConvertible {
    /// The id of the signed prekey the X3DH used.
    public let signedPreKeyID: UInt32
    /// The initiator's ephemeral key EK_A.
    public let baseKey: X25519.PublicKey

    /// The record of `baseKey` under the signed prekey `signedPreKeyID`.
    public init(signedPreKeyID: UInt32, baseKey: X25519.PublicKey) {
        self.signedPreKeyID = signedPreKeyID
        self.baseKey = baseKey
    }

    /// The signed prekey id and EK_A (public values).
    public var description: String { "BaseKeyRecord(spk: \(signedPreKeyID), EK_A: \(baseKey.hexString))" }
}
