// `import SessionKit` alone names every type its public API takes and returns: the Ed25519
// and X25519 keys of identities and prekeys, `SecureBytes`, `RandomSource`, `CryptoError`;
// and the age v1 file format (`AgeEncryptor`, `AgeDecryptor`, their recipients and streams,
// `AgeError`), which lives in SessionKitAge since attachments are built on its payload.
@_exported import SignalPrimitives
@_exported import SessionKitAge
