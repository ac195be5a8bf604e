@_spi(Testing) import SessionKit
import SessionKitMLKEM
import SignalPrimitives

/// The SPEC §8 field shapes the version-2 suites share: addresses, group ids, fixed KEM
/// encapsulations, and the KEM the runner uses (the library's swift-crypto adapter).
extension VectorTest {
    /// An address `{"uid": text, "device_id": int}`.
    /// - Throws: `VectorFailure` when `key` is missing or malformed, or the address is not one
    ///   the library accepts (an empty or over-long uid).
    public func address(_ key: String) throws -> ProtocolAddress {
        let fields = try object(key)
        let uid = try fields.string("uid")
        let device = try fields.uint32("device_id")
        do { return try ProtocolAddress(userID: uid, deviceID: device) } catch {
            throw VectorFailure("'\(key)' is not a usable address: \(error)")
        }
    }

    /// An optional address (absent or null gives nil).
    /// - Throws: as `address(_:)` when present.
    public func optionalAddress(_ key: String) throws -> ProtocolAddress? {
        has(key) ? try address(key) : nil
    }

    /// The optional `content_type` of SPEC §2 (the first padded byte): 1, application content,
    /// when absent or null; 2, a sender-key distribution. SPEC §8 does not name the field; this
    /// is the runner's reading (the Python generator writes it the same way).
    /// - Throws: `VectorFailure` when present but not the integer 1 or 2 (a reserved type
    ///   cannot be expected).
    func contentType(_ key: String = "content_type") throws -> MessagePadding.ContentType {
        guard let value = try optionalInt(key) else { return .application }
        guard let byte = UInt8(exactly: value), let type = MessagePadding.ContentType(rawValue: byte) else {
            throw VectorFailure("field '\(key)' is \(value), not a content type (1 or 2)")
        }
        return type
    }

    /// The optional `registration_id` of SPEC §8/§9 (absent or null: none, flag bit 2 clear).
    /// - Throws: `VectorFailure` when present but not an integer in 1 … 2^31 − 1 (a success
    ///   test cannot build a bundle or prefix with another; error tests give the bytes).
    public func optionalRegistrationID(_ key: String = "registration_id") throws -> RegistrationID? {
        guard has(key) else { return nil }
        let value = try uint32(key)
        guard let id = RegistrationID(rawValue: value) else {
            throw VectorFailure("field '\(key)' is \(value), not a registration id (1 … 2147483647)")
        }
        return id
    }

    /// A group id given as hex.
    /// - Throws: `VectorFailure` when `key` is missing, not hex, or not 1–255 bytes.
    public func groupID(_ key: String) throws -> GroupID {
        let bytes = try hex(key)
        do { return try GroupID(rawRepresentation: bytes) } catch { throw VectorFailure("'\(key)' is not a usable group id: \(error)") }
    }

    /// A fixed encapsulation `{"ciphertext": hex, "shared_secret": hex}`, or nil when absent
    /// or null.
    /// - Throws: `VectorFailure` when present but malformed (a ciphertext that is not 1088
    ///   bytes or a secret that is not 32).
    public func optionalEncapsulation(_ key: String) throws -> KEMEncapsulation? {
        guard has(key) else { return nil }
        let fields = try object(key)
        do {
            return try KEMEncapsulation(
                ciphertext: try fields.hex("ciphertext"), sharedSecret: SecureBytes(copying: try fields.hex("shared_secret")))
        } catch let error as SessionError {
            throw VectorFailure("'\(key)' is not a usable encapsulation: \(error)")
        }
    }
}

/// The KEM the runner uses for ML-KEM-768.
enum VectorKEM {
    /// The library's swift-crypto adapter.
    /// - Throws: `VectorFailure` on an Apple platform older than 26 (no ML-KEM there).
    static func make() throws -> any KeyEncapsulationMechanism {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            throw VectorFailure("ML-KEM-768 needs macOS/iOS 26 on Apple platforms")
        }
        return SwiftCryptoMLKEM768()
    }
}
