import CSodium
import SignalPrimitives
import TestSupport
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

        // What is held, and the ids handed out, round-trip through the stored form.
        let restored = try PublishedPreKeys(serialized: published.serialized)
        XCTAssertEqual(restored, published)
        XCTAssertEqual(restored.serialized, published.serialized)
    }

    func testRefusedUploadsChangeNothing() async throws {
        let kem = try mlkem()
        let bob = try await TestDevice("bob", 1, seed: 7731, server: FakeServer(), kem: kem, publish: false)
        let upload = try await bob.manager.maintainPreKeys()
        let published = try PublishedPreKeys(registering: upload)
        let signed = try XCTUnwrap(upload.signedPreKey)
        let firstOneTime = try XCTUnwrap(upload.oneTimePreKeys.first)
        let firstKEM = try XCTUnwrap(upload.oneTimeKEMPreKeys.first)

        func refuses(_ changed: PreKeyUpload, _ expected: PublishedPreKeysError, line: UInt = #line) {
            var copy = published
            XCTAssertThrowsError(try copy.merge(changed), line: line) { XCTAssertEqual($0 as? PublishedPreKeysError, expected, line: line) }
            XCTAssertEqual(copy, published, "nothing changed", line: line)
        }
        // Another identity: a re-registration, not a merge.
        let stranger = try IdentityKeyPair()
        refuses(PreKeyUpload(identityKey: stranger.publicKey, signedPreKey: nil, oneTimePreKeys: []), .otherIdentity)
        // An id already held with other bytes.
        let other = try X25519.PrivateKey().publicKey
        refuses(PreKeyUpload(identityKey: upload.identityKey, signedPreKey: nil,
                             oneTimePreKeys: [PreKeyBundle.OneTimeKey(id: firstOneTime.id, publicKey: other)]),
                .conflictingKey(id: firstOneTime.id))
        // The same id twice in one upload, with other bytes.
        refuses(PreKeyUpload(identityKey: upload.identityKey, signedPreKey: nil,
                             oneTimePreKeys: [PreKeyBundle.OneTimeKey(id: 999, publicKey: other),
                                              PreKeyBundle.OneTimeKey(id: 999, publicKey: firstOneTime.publicKey)]),
                .conflictingKey(id: 999))
        // The held signed prekey's id with another key.
        let otherSigned = PreKeyUpload.SignedKey(
            id: signed.id, publicKey: other, signature: signed.signature, signsKEMPreKeys: true)
        refuses(PreKeyUpload(identityKey: upload.identityKey, signedPreKey: otherSigned, lastResortKEMPreKey: upload.lastResortKEMPreKey,
                             oneTimePreKeys: []), .conflictingKey(id: signed.id))
        // A signed prekey signed with kem = 1 without its last-resort KEM prekey.
        refuses(PreKeyUpload(identityKey: upload.identityKey, signedPreKey: signed, oneTimePreKeys: []), .invalidPayload)
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
            XCTAssertEqual($0 as? PublishedPreKeysError, .missingSignedPreKey)
        }
    }

    // MARK: A retried upload

    func testARetriedUploadNeverHandsOutAKeyAgain() async throws {
        // Found by the review: ids handed out 1, 2, 3, 1 after the retry of the first upload.
        let kem = try mlkem()
        let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 3, oneTimePreKeyLowWaterMark: 1)
        let bob = try await TestDevice("bob", 1, seed: 7741, server: FakeServer(), policy: policy, kem: kem, publish: false)
        let upload = try await bob.manager.maintainPreKeys()
        let lastResort = try XCTUnwrap(upload.lastResortKEMPreKey)
        var published = try PublishedPreKeys(registering: upload)
        var bundles = (0 ..< 3).map { _ in published.takeBundle() }
        try published.merge(upload)   // the retry, after every one-time key was handed out
        bundles.append(published.takeBundle())
        XCTAssertEqual(bundles.map(\.oneTimePreKey?.id), [1, 2, 3, nil])
        XCTAssertEqual(bundles.map(\.kemPreKey?.id), upload.oneTimeKEMPreKeys.map(\.id) + [lastResort.id])

        // Half of a later upload handed out, then the later upload again: only the rest is held.
        let more = PreKeyUpload(
            identityKey: upload.identityKey, signedPreKey: nil,
            oneTimePreKeys: try (10 ..< 14).map { PreKeyBundle.OneTimeKey(id: $0, publicKey: try X25519.PrivateKey().publicKey) })
        try published.merge(more)
        XCTAssertEqual(published.takeBundle().oneTimePreKey?.id, 10)
        XCTAssertEqual(published.takeBundle().oneTimePreKey?.id, 11)
        try published.merge(more)
        try published.merge(upload)
        XCTAssertEqual(published.oneTimePreKeys.map(\.id), [12, 13])

        // The ids handed out survive the stored form: a retry after a server restart adds nothing.
        var restored = try PublishedPreKeys(serialized: published.serialized)
        try restored.merge(upload)
        try restored.merge(more)
        XCTAssertEqual(restored, published)
        XCTAssertEqual([restored.takeBundle(), restored.takeBundle(), restored.takeBundle()].map(\.oneTimePreKey?.id), [12, 13, nil])
    }

    func testTheOldestHandedOutIdsAreForgottenBeyondTheLimit() {
        var ids = RecentIDs(limit: 3)
        for id: UInt32 in 1 ... 5 { XCTAssertTrue(ids.insert(id)) }
        XCTAssertFalse(ids.insert(5))
        XCTAssertEqual(Array(ids.ids), [3, 4, 5])
        XCTAssertFalse(ids.contains(2))
        XCTAssertTrue(ids.contains(3))
        var many = RecentIDs(limit: 2_000)
        for id: UInt32 in 1 ... 10_000 { many.insert(id) }
        XCTAssertEqual(Array(many.ids), Array(8_001 ... 10_000))
        XCTAssertEqual(many.count, 2_000)
    }

    // MARK: The signed prekey

    func testAReplayedOlderSignedPreKeyIsRefused() async throws {
        let clock = FakeClock()
        let bob = try await TestDevice("bob", 1, seed: 7742, server: FakeServer(), clock: clock, publish: false)
        let first = try await bob.manager.maintainPreKeys()
        var published = try PublishedPreKeys(registering: first)
        clock.advance(bySeconds: Days.seconds(8))
        let later = try await bob.manager.maintainPreKeys()
        try published.merge(later)
        let current = try XCTUnwrap(later.signedPreKey)
        XCTAssertEqual(current.id, 2)
        let before = published
        XCTAssertThrowsError(try published.merge(first)) {
            XCTAssertEqual($0 as? PublishedPreKeysError, .staleSignedPreKey(held: 2, uploaded: 1))
        }
        XCTAssertEqual(published, before, "the replay changed nothing")
        XCTAssertEqual(published.signedPreKey, current)
        // The current signed prekey again (a retry of the later upload) is accepted and changes nothing.
        try published.merge(later)
        XCTAssertEqual(published, before)
    }

    func testSignedPreKeyIdsAreComparedAsTheDeviceIssuesThem() {
        XCTAssertTrue(PublishedPreKeys.isNewer(2, than: 1))
        XCTAssertTrue(PublishedPreKeys.isNewer(1 + (1 << 31) - 1, than: 1))
        XCTAssertFalse(PublishedPreKeys.isNewer(1 + (1 << 31), than: 1))
        XCTAssertFalse(PublishedPreKeys.isNewer(1, than: 2))
        XCTAssertFalse(PublishedPreKeys.isNewer(7, than: 7))
        // After UInt32.max the device's counter wraps to 1 (0 is never issued).
        XCTAssertTrue(PublishedPreKeys.isNewer(1, than: .max))
        XCTAssertFalse(PublishedPreKeys.isNewer(.max, than: 1))
    }

    // MARK: The identity key

    func testAnIdentityKeyThatIsNotAValidPointIsRefused() throws {
        // The point of SPEC §1's self-check, B + (0, −1): of mixed order, refused by
        // `crypto_core_ed25519_is_valid_point`, but libsodium's signature verification accepts
        // signatures under it (it only rejects small-order keys).
        let mixed = try Ed25519.PublicKey(rawRepresentation: MixedOrderSigner.publicKey)
        XCTAssertFalse(mixed.isValidPoint)
        let spk = try X25519.PrivateKey().publicKey
        let signed = SignedPreKey.signedBytes(publicKey: spk, signsKEMPreKeys: false)
        let signature = MixedOrderSigner.sign(signed)
        XCTAssertTrue(mixed.isValidSignature(signature, for: signed), "the signature verifies")
        let upload = PreKeyUpload(
            identityKey: mixed, signedPreKey: PreKeyUpload.SignedKey(id: 1, publicKey: spk, signature: signature, signsKEMPreKeys: false),
            oneTimePreKeys: [PreKeyBundle.OneTimeKey(id: 1, publicKey: try X25519.PrivateKey().publicKey)])
        XCTAssertThrowsError(try PublishedPreKeys(registering: upload)) {
            XCTAssertEqual($0 as? PublishedPreKeysError, .invalidIdentityKey)
        }
        // A small-order key (the point of order 2 itself) is refused the same way.
        let smallOrder = try Ed25519.PublicKey(rawRepresentation: [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F])
        XCTAssertThrowsError(try PublishedPreKeys(registering: PreKeyUpload(
            identityKey: smallOrder, signedPreKey: upload.signedPreKey, oneTimePreKeys: []))) {
            XCTAssertEqual($0 as? PublishedPreKeysError, .invalidIdentityKey)
        }
    }

    // MARK: Cost and bounds

    func testMergingIsLinearAndBounded() throws {
        // Found by the review: 40,000 keys took 245 ms (release) to merge, quadratic in the
        // keys held; here 100,000 keys are merged, then the same upload again (a retry, every
        // key already held), in the debug build.
        let (identity, registration) = try Self.registration()
        let keys = try Self.oneTimeKeys(1 ... UInt32(PublishedPreKeys.maximumHeldKeys))
        let upload = PreKeyUpload(identityKey: identity.publicKey, signedPreKey: nil, oneTimePreKeys: keys)
        var published = try PublishedPreKeys(registering: registration)
        let start = ContinuousClock.now
        try published.merge(upload)
        try published.merge(upload)
        let elapsed = ContinuousClock.now - start
        XCTAssertEqual(published.oneTimePreKeyCount, PublishedPreKeys.maximumHeldKeys)
        XCTAssertLessThan(elapsed, .seconds(10), "merging 100,000 keys twice took \(elapsed) (quadratic: minutes)")
        // Taking every key is linear too.
        var taken = 0
        while published.takeBundle().oneTimePreKey != nil { taken += 1 }
        XCTAssertEqual(taken, PublishedPreKeys.maximumHeldKeys)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(20))
    }

    func testAnUploadBeyondTheCapIsRefusedAndChangesNothing() throws {
        let (identity, registration) = try Self.registration()
        var published = try PublishedPreKeys(registering: registration)
        let cap = PublishedPreKeys.maximumHeldKeys
        let tooMany = PreKeyUpload(identityKey: identity.publicKey, signedPreKey: nil,
                                   oneTimePreKeys: try Self.oneTimeKeys(1 ... UInt32(cap + 1)))
        XCTAssertThrowsError(try published.merge(tooMany)) { XCTAssertEqual($0 as? PublishedPreKeysError, .tooManyKeys(limit: cap)) }
        XCTAssertEqual(published.oneTimePreKeyCount, 0)
        // Up to the cap over several uploads, then one key more is refused; a retry still passes.
        let first = PreKeyUpload(identityKey: identity.publicKey, signedPreKey: nil,
                                 oneTimePreKeys: try Self.oneTimeKeys(1 ... UInt32(cap - 1)))
        try published.merge(first)
        let last = PreKeyUpload(identityKey: identity.publicKey, signedPreKey: nil,
                                oneTimePreKeys: try Self.oneTimeKeys(UInt32(cap) ... UInt32(cap)))
        try published.merge(last)
        XCTAssertEqual(published.oneTimePreKeyCount, cap)
        try published.merge(last)
        let before = published
        let beyond = PreKeyUpload(identityKey: identity.publicKey, signedPreKey: nil,
                                  oneTimePreKeys: try Self.oneTimeKeys(UInt32(cap + 1) ... UInt32(cap + 1)))
        XCTAssertThrowsError(try published.merge(beyond)) { XCTAssertEqual($0 as? PublishedPreKeysError, .tooManyKeys(limit: cap)) }
        XCTAssertEqual(published, before)
        // Once a bundle was taken there is room for one more.
        _ = published.takeBundle()
        try published.merge(beyond)
        XCTAssertEqual(published.oneTimePreKeyCount, cap)
    }

    // MARK: The stored form

    func testTheStoredFormIsDecodedStrictly() async throws {
        let kem = try mlkem()
        let bob = try await TestDevice("bob", 1, seed: 7751, server: FakeServer(), kem: kem, publish: false)
        var published = try PublishedPreKeys(registering: try await bob.manager.maintainPreKeys())
        _ = published.takeBundle()
        let bytes = published.serialized
        XCTAssertEqual(try PublishedPreKeys(serialized: bytes), published)

        func refuses(_ bytes: [UInt8], _ expected: PublishedPreKeysError, line: UInt = #line) {
            XCTAssertThrowsError(try PublishedPreKeys(serialized: bytes), line: line) {
                XCTAssertEqual($0 as? PublishedPreKeysError, expected, line: line)
            }
        }
        refuses(Array(bytes.dropLast()), .invalidPayload)
        refuses(bytes + [0], .invalidPayload)
        refuses([], .invalidPayload)
        var magic = bytes
        magic[0] ^= 1
        refuses(magic, .invalidPayload)
        var version = bytes
        version[4] = 2
        refuses(version, .unsupportedVersion)
        // A handed-out id that is also held.
        let held = try XCTUnwrap(published.oneTimePreKeys.first?.id)
        // The stored form ends with u32(1) || one-time id || u32(1) || KEM id (one bundle taken).
        var both = Array(bytes.dropLast(12))
        both.appendBigEndian(held)
        both += Array(bytes.suffix(8))
        XCTAssertEqual(both.count, bytes.count)
        refuses(both, .invalidPayload)
        // A key that does not check (the stored form is checked as an upload is).
        var tampered = bytes
        let signatureOffset = 4 + 1 + 4 + 4 + 1 + 32 + 1 + 4 + 32 + 1
        tampered[signatureOffset] ^= 1
        refuses(tampered, .invalidSignature)
    }

    /// A registration with a signed prekey and no one-time keys.
    private static func registration() throws -> (IdentityKeyPair, PreKeyUpload) {
        let identity = try IdentityKeyPair()
        let signed = try SignedPreKey(id: 1, signedBy: identity)
        return (identity, PreKeyUpload(identityKey: identity.publicKey, signedPreKey: PreKeyUpload.SignedKey(signed), oneTimePreKeys: []))
    }

    /// One-time prekeys with the ids `ids` and distinct canonical keys (no key generation: the
    /// merge checks canonicity only).
    private static func oneTimeKeys(_ ids: ClosedRange<UInt32>) throws -> [PreKeyBundle.OneTimeKey] {
        try ids.map { id in
            var bytes = [UInt8](repeating: 0x11, count: 32)
            withUnsafeBytes(of: id.bigEndian) { bytes.replaceSubrange(0 ..< 4, with: $0) }
            return PreKeyBundle.OneTimeKey(id: id, publicKey: try X25519.PublicKey(rawRepresentation: bytes))
        }
    }
}

/// Signatures under the mixed-order point A = B + T (T = (0, −1), of order 2; the point of
/// SPEC §1's self-check) that libsodium's `crypto_sign_verify_detached` accepts: with the
/// secret scalar 1, S = r + k for a nonce r whose challenge k is even, since then [k]A = [k]B.
enum MixedOrderSigner {
    /// B + T: (−x_B, −y_B), y = −4/5 with the sign bit of −x_B set.
    static let publicKey: [UInt8] = [0x95] + [UInt8](repeating: 0x99, count: 31)

    static func sign(_ message: [UInt8]) -> [UInt8] {
        while true {
            var nonce = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_random(&nonce)
            var noncePoint = [UInt8](repeating: 0, count: 32)
            guard crypto_scalarmult_ed25519_base_noclamp(&noncePoint, nonce) == 0 else { continue }
            let transcript = noncePoint + publicKey + message
            var hash = [UInt8](repeating: 0, count: 64)
            _ = crypto_hash_sha512(&hash, transcript, UInt64(transcript.count))
            var challenge = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_reduce(&challenge, hash)
            guard challenge[0] & 1 == 0 else { continue }
            var s = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_add(&s, nonce, challenge)
            return noncePoint + s
        }
    }
}
