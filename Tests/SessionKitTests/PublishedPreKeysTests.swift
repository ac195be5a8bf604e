import XCTest
@_spi(Testing) @testable import SessionKit

/// A server's record of one device's prekeys: each one-time key handed out once, the
/// last-resort KEM prekey after them, keys checked as they arrive, uploads merged.
final class PublishedPreKeysTests: XCTestCase {
    func testBundlesTakeEachOneTimeKeyOnceThenTheLastResortKEMPreKeyAndEveryBundleStartsASession() async throws {
        let kem = try mlkem()
        let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 2, oneTimePreKeyLowWaterMark: 1)
        let server = FakeServer()
        let bob = try await TestDevice("bob", 1, seed: 7701, server: server, policy: policy, kem: kem, publish: false)
        let upload = try await bob.manager.maintainPreKeys()
        var published = try PublishedPreKeys(registering: upload)
        XCTAssertEqual(published.oneTimePreKeys.map(\.id), upload.oneTimePreKeys.map(\.id))
        XCTAssertEqual(published.oneTimeKEMPreKeys.count, 2)
        let lastResort = try XCTUnwrap(upload.lastResortKEMPreKey)

        var bundles: [PreKeyBundle] = []
        for _ in 0 ..< 4 { bundles.append(published.takeBundle()) }
        XCTAssertEqual(bundles.map(\.oneTimePreKey?.id), upload.oneTimePreKeys.map(\.id) + [nil, nil])
        XCTAssertEqual(bundles.map(\.kemPreKey?.id), upload.oneTimeKEMPreKeys.map(\.id) + [lastResort.id, lastResort.id])
        XCTAssertTrue(published.oneTimePreKeys.isEmpty)
        XCTAssertTrue(published.oneTimeKEMPreKeys.isEmpty)

        // Each bundle starts a working session with Bob, from four different initiators.
        for (index, bundle) in bundles.enumerated() {
            let alice = try await TestDevice("alice\(index)", 1, seed: 7710 + UInt64(index), server: server, kem: kem, publish: false)
            try await alice.manager.processBundle(try PreKeyBundle(serialized: bundle.serialized), for: bob.address)
            let message = try await alice.manager.encryptEnvelope(utf8("hello \(index)"), to: bob.address)
            let received = try await bob.manager.receive(message)
            XCTAssertEqual(received.plaintext, utf8("hello \(index)"))
        }
    }

    func testMergingAddsNewKeysIgnoresARetryAndReplacesTheSignedPreKey() async throws {
        let kem = try mlkem()
        let clock = FakeClock()
        let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 2, oneTimePreKeyLowWaterMark: 1)
        let bob = try await TestDevice("bob", 1, seed: 7721, server: FakeServer(), clock: clock, policy: policy, kem: kem, publish: false)
        let first = try await bob.manager.maintainPreKeys()
        var published = try PublishedPreKeys(registering: first)
        try published.merge(first)   // a retry of the same upload
        XCTAssertEqual(published, try PublishedPreKeys(registering: first))
        // Two initiators use the two one-time prekeys: Bob's own stock drops below the low-water mark.
        for index in 0 ..< 2 {
            let bundle = published.takeBundle()
            let alice = try await TestDevice("alice\(index)", 1, seed: 7722 + UInt64(index), server: FakeServer(), kem: kem, publish: false)
            try await alice.manager.processBundle(bundle, for: bob.address)
            _ = try await bob.manager.receive(try await alice.manager.encryptEnvelope(utf8("hi"), to: bob.address))
        }

        clock.advance(bySeconds: Days.seconds(8))   // past the rotation period
        let later = try await bob.manager.maintainPreKeys()
        XCTAssertNotNil(later.signedPreKey)
        XCTAssertFalse(later.oneTimePreKeys.isEmpty)
        try published.merge(later)
        XCTAssertEqual(published.signedPreKey, later.signedPreKey)
        XCTAssertEqual(published.lastResortKEMPreKey, later.lastResortKEMPreKey)
        XCTAssertEqual(published.oneTimePreKeys, later.oneTimePreKeys)
        XCTAssertEqual(published.oneTimeKEMPreKeys, later.oneTimeKEMPreKeys)

        // What is held round-trips through the upload encoding.
        let restored = try PublishedPreKeys(registering: try PreKeyUpload(serialized: published.currentUpload.serialized))
        XCTAssertEqual(restored, published)
    }

    func testRefusedUploadsChangeNothing() async throws {
        let kem = try mlkem()
        let bob = try await TestDevice("bob", 1, seed: 7731, server: FakeServer(), kem: kem, publish: false)
        let upload = try await bob.manager.maintainPreKeys()
        let published = try PublishedPreKeys(registering: upload)
        let signed = try XCTUnwrap(upload.signedPreKey)
        let firstOneTime = try XCTUnwrap(upload.oneTimePreKeys.first)
        let firstKEM = try XCTUnwrap(upload.oneTimeKEMPreKeys.first)

        func refuses(_ changed: PreKeyUpload, _ expected: SessionError, line: UInt = #line) {
            var copy = published
            XCTAssertThrowsError(try copy.merge(changed), line: line) { XCTAssertEqual($0 as? SessionError, expected, line: line) }
            XCTAssertEqual(copy, published, "nothing changed", line: line)
        }
        // Another identity: a re-registration, not a merge.
        let stranger = try IdentityKeyPair()
        refuses(PreKeyUpload(identityKey: stranger.publicKey, signedPreKey: nil, oneTimePreKeys: []), .untrustedIdentity)
        // An id already held with other bytes.
        let other = try X25519.PrivateKey().publicKey
        refuses(PreKeyUpload(identityKey: upload.identityKey, signedPreKey: nil,
                             oneTimePreKeys: [PreKeyBundle.OneTimeKey(id: firstOneTime.id, publicKey: other)]), .invalidPayload)
        // A one-time KEM prekey whose signature does not verify.
        var forgedSignature = firstKEM.signature
        forgedSignature[0] ^= 1
        let forged = try PreKeyBundle.KEMKey(id: 999, publicKey: firstKEM.publicKey, signature: forgedSignature)
        refuses(PreKeyUpload(identityKey: upload.identityKey, signedPreKey: nil, oneTimePreKeys: [], oneTimeKEMPreKeys: [forged]),
                .invalidSignature)
        // A non-canonical one-time prekey (p + 1 encodes 1).
        let nonCanonical = try X25519.PublicKey(rawRepresentation: [0xEE] + [UInt8](repeating: 0xFF, count: 30) + [0x7F])
        refuses(PreKeyUpload(identityKey: upload.identityKey, signedPreKey: nil,
                             oneTimePreKeys: [PreKeyBundle.OneTimeKey(id: 999, publicKey: nonCanonical)]), .invalidKey)
        // A signed prekey whose signature does not verify (with its last-resort KEM prekey).
        var badSigned = signed.signature
        badSigned[10] ^= 1
        let badSignedKey = PreKeyUpload.SignedKey(id: signed.id + 1, publicKey: signed.publicKey, signature: badSigned, signsKEMPreKeys: true)
        refuses(PreKeyUpload(identityKey: upload.identityKey, signedPreKey: badSignedKey, lastResortKEMPreKey: upload.lastResortKEMPreKey,
                             oneTimePreKeys: []), .invalidSignature)
        // A first upload without a signed prekey.
        XCTAssertThrowsError(try PublishedPreKeys(registering: PreKeyUpload(identityKey: upload.identityKey, signedPreKey: nil,
                                                                            oneTimePreKeys: upload.oneTimePreKeys))) {
            XCTAssertEqual($0 as? SessionError, .invalidPayload)
        }
    }
}
