/// A recipient type of age: wraps a file key into the stanzas of a header.
///
/// SessionKitAge implements `X25519` (`AgeX25519Recipient`) and `scrypt` (`AgeScryptRecipient`);
/// other types (the `mlkem768x25519` of the ML-KEM product, hardware-key plugins) conform
/// from their own modules.
public protocol AgeRecipient: Sendable {
    /// The stanzas that wrap `fileKey` for this recipient (usually one). Each call draws fresh
    /// randomness (ephemeral keys, salts).
    /// - Throws: `AgeError.invalidRecipient` when the recipient cannot be used, or
    ///   `AgeError.primitive`.
    func wrap(_ fileKey: AgeFileKey) throws(AgeError) -> [AgeStanza]

    /// The labels of the stanzas this recipient writes (age's `RecipientWithLabels`): a file is
    /// only encrypted to recipients with equal label sets, so that a recipient whose security
    /// the others would undo cannot be mixed with them. The `mlkem768x25519` recipient is
    /// labelled `postquantum`, so it cannot be mixed with `X25519`. Empty by default.
    var labels: Set<String> { get }
}

extension AgeRecipient {
    /// No labels: the recipient mixes with every other unlabelled recipient.
    public var labels: Set<String> { [] }
}

/// An identity type of age: finds and unwraps the stanza addressed to it.
///
/// Implementations ignore stanzas of other types, and follow `age.md` for their own: a
/// malformed stanza of their type is an error (`AgeError.header`), a stanza of their type that
/// does not open under their key is not (they try the next one).
public protocol AgeIdentity: Sendable {
    /// The file key from the first of `stanzas` that this identity opens, or `nil` when none
    /// does. `stanzas` is the whole header, in order.
    /// - Throws: `AgeError.header` for a malformed stanza of this identity's type (wrong
    ///   arguments, a body that is not a wrapped 16-byte key, an unusable share or work factor),
    ///   or `AgeError.primitive`.
    func unwrap(_ stanzas: [AgeStanza]) throws(AgeError) -> AgeFileKey?
}
