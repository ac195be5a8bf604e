@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification

/// Suite `qr-payload` (SPEC §7, §8): `uid` (text, used as its UTF-8 bytes) and `identity_key`
/// must encode to `payload`, and `payload` must decode back to both; error tests give
/// `payload` only, which decoding must reject with the named error.
public enum QRPayloadSuite: ProtocolSuite {
    /// The suite name.
    public static let name = "qr-payload"

    /// Runs one test.
    /// - Throws: `VectorFailure` when a field is missing or malformed, when the encoding or the
    ///   decoded fields differ, or when an error test gets another error or none; an error the
    ///   library throws on a valid test is passed on as it is.
    public static func run(_ test: VectorTest) throws -> VectorOutcome {
        let payload = try test.hex("payload")
        if let expected = test.expectedError {
            try ExpectedError.check(expected) { _ = try QRPayload(decoding: payload) }
            return .passed
        }
        let uid = Array(try test.string("uid").utf8)
        let identityKey = try test.hex("identity_key")

        let encoded = try QRPayload(uidBytes: uid, identityKey: try Ed25519.PublicKey(rawRepresentation: identityKey)).encoded
        try ExpectedError.equal(encoded, payload, "payload")
        let decoded = try QRPayload(decoding: payload)
        try ExpectedError.equal(decoded.uidBytes, uid, "decoded uid")
        try ExpectedError.equal(decoded.identityKey.rawRepresentation, identityKey, "decoded identity key")
        return .passed
    }
}
