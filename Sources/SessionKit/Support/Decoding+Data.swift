#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PreKeyUpload {
    /// Decodes an upload from `Data` (what a server receives); as `init(serialized:)`.
    /// - Throws: the errors of `init(serialized:)`.
    public init(serialized data: Data) throws(SessionError) {
        try self.init(serialized: [UInt8](data))
    }
}

extension PreKeyBundle {
    /// Decodes a bundle from `Data` (what a client receives); as `init(serialized:)`.
    /// - Throws: the errors of `init(serialized:)`.
    public init(serialized data: Data) throws(SessionError) {
        try self.init(serialized: [UInt8](data))
    }
}

extension DeviceLinkRequest {
    /// `open(_:expectingIdentityKey:)` for `Data`.
    /// - Throws: the errors of `open(_:expectingIdentityKey:)`.
    public func open(_ sealed: Data, expectingIdentityKey expectedIdentityKey: Ed25519.PublicKey) throws(SessionError) -> IdentityKeyPair {
        try open([UInt8](sealed), expectingIdentityKey: expectedIdentityKey)
    }
}

extension DeviceLinkCode {
    /// Decodes a scanned QR payload from `Data`; as `init(qrPayload:)`. The payload holds the
    /// request's secret: wipe the caller's copies once decoded.
    /// - Throws: the errors of `init(qrPayload:)`.
    public init(qrPayload data: Data) throws(SessionError) {
        var bytes = [UInt8](data)
        defer { SecureMemory.zero(&bytes) }
        try self.init(qrPayload: bytes)
    }
}
