// `import SessionKit` alone names every type its public API takes and returns: the Ed25519
// and X25519 keys of identities and prekeys, `SecureBytes`, `RandomSource`, `CryptoError`.
@_exported import SignalPrimitives
