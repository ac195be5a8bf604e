@_spi(Testing) import SessionKit
import SignalPrimitives
import Verification
import XCTest

/// One device for the trust tests: an in-memory store, the `Verification` trust store, a
/// manager, and its published prekeys.
struct TrustTestDevice {
    let address: ProtocolAddress
    let identity: IdentityKeyPair
    let trust: InMemoryTrustStore
    let manager: SessionManager
    let upload: PreKeyUpload

    /// A device of `user`; `identity` shares an existing identity (a linked device).
    init(_ user: String, _ device: UInt32 = 1, identity: IdentityKeyPair? = nil) async throws {
        address = try ProtocolAddress(userID: user, deviceID: device)
        self.identity = try identity ?? IdentityKeyPair()
        trust = InMemoryTrustStore()
        manager = SessionManager(store: InMemoryProtocolStore(identity: self.identity), trust: trust, localAddress: address)
        upload = try await manager.maintainPreKeys()
    }

    /// A bundle with the `index`th published one-time prekey.
    func bundle(_ index: Int = 0) throws -> PreKeyBundle {
        try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys[index]))
    }

    /// Sends `text` to `peer` (starting a session from its bundle when there is none) and
    /// returns the bytes.
    func send(_ text: String, to peer: TrustTestDevice, bundle index: Int = 0) async throws -> [UInt8] {
        if try await manager.store.loadSession(for: peer.address)?.remoteIdentityKey == nil {
            try await manager.processBundle(try peer.bundle(index), for: peer.address)
        }
        return try await manager.encrypt(Array(text.utf8), to: peer.address)
    }
}

extension XCTestCase {
    /// Fails unless `body` throws `expected`.
    func assertThrows<T>(
        _ expected: SessionError, _ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line
    ) async {
        do {
            _ = try await body()
            XCTFail("expected \(expected)", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? SessionError, expected, file: file, line: line)
        }
    }
}
