/// Who does the work of a benchmark case.
public enum Contender: String, CaseIterable, Sendable {
    /// This library's public API (SignalPrimitives, SessionKit, Verification).
    case library
    /// The same work done with raw libsodium C calls, composed the obvious way: no reuse of
    /// keyed states, no precomputation, one C call per step of the specification.
    case floor
    /// The same work on apple/swift-crypto, where it has the primitives.
    case swiftCrypto = "swift-crypto"
}
