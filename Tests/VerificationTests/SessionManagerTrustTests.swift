@_spi(Testing) import SessionKit
import SignalPrimitives
@_spi(Testing) import Verification
import XCTest

/// `SessionManager` with the `Verification` trust store: a changed identity key still
/// decrypts, but encrypting is refused (`untrustedIdentity`) until the app accepts the key.
final class SessionManagerTrustTests: XCTestCase {
    private typealias Device = TrustTestDevice

    private func assertUntrusted(_ body: () async throws -> [UInt8], file: StaticString = #filePath, line: UInt = #line) async {
        do {
            _ = try await body()
            XCTFail("expected untrustedIdentity", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? SessionError, .untrustedIdentity, file: file, line: line)
        }
    }

    func testAChangedKeyDecryptsThenBlocksSendingUntilAccepted() async throws {
        let alice = try await Device("alice")
        let bob = try await Device("bob")
        try await alice.manager.processBundle(try bob.bundle(0), for: bob.address)
        let atBob = try await bob.manager.decrypt(try await alice.manager.encrypt(Array("hi".utf8), to: bob.address), from: alice.address)
        XCTAssertEqual(atBob.identityObservation, .firstUse)
        XCTAssertEqual(atBob.senderIdentityKey, alice.identity.publicKey)
        let firstUse = try await alice.trust.record(forUser: bob.address.userID)
        XCTAssertEqual(firstUse, TrustRecord(identityKey: bob.identity.publicKey, status: .trusted, previousIdentityKey: nil, devices: [1]))

        // Bob reinstalls: a new identity, and he starts a new session with Alice.
        let newBob = try await Device("bob")
        try await newBob.manager.processBundle(try alice.bundle(0), for: alice.address)
        let message = try await newBob.manager.encrypt(Array("new phone, same bob".utf8), to: alice.address)
        let received = try await alice.manager.decrypt(message, from: bob.address)
        XCTAssertEqual(received.plaintext, Array("new phone, same bob".utf8), "the message is authentic and decrypts")
        XCTAssertEqual(received.identityObservation, .changed(previous: bob.identity.publicKey),
                       "the app learns of the change with the message")
        XCTAssertEqual(received.senderIdentityKey, newBob.identity.publicKey)
        XCTAssertTrue(received.establishedSession)
        let changed = try await alice.trust.record(forUser: bob.address.userID)
        XCTAssertEqual(changed, TrustRecord(
            identityKey: newBob.identity.publicKey, status: .unverified,
            previousIdentityKey: bob.identity.publicKey, devices: [1]))

        await assertUntrusted { try await alice.manager.encrypt(Array("are you bob?".utf8), to: bob.address) }
        let outcomes = try await alice.manager.encrypt(Array("to all of bob".utf8), toUser: "bob")
        XCTAssertEqual(outcomes.map(\.error), [.untrustedIdentity])

        try await alice.trust.acceptIdentityChange(newBob.identity.publicKey, forUser: bob.address.userID)
        let reply = try await alice.manager.encrypt(Array("welcome back".utf8), to: bob.address)
        let atNewBob = try await newBob.manager.decrypt(reply, from: alice.address)
        XCTAssertEqual(atNewBob.plaintext, Array("welcome back".utf8))
        XCTAssertEqual(atNewBob.identityObservation, .unchanged, "new Bob recorded Alice's key when he processed her bundle")
    }

    /// A bundle with another key for a verified contact is refused and changes nothing: the
    /// contact stays verified and the genuine session keeps sending (a forged or stale bundle
    /// must not block it). The app that does want the new key records and accepts it, then
    /// processes the bundle again.
    func testABundleWithAnotherKeyForAVerifiedContactIsRefusedAndChangesNothing() async throws {
        let alice = try await Device("alice")
        let bob = try await Device("bob")
        try await alice.trust.markVerified(bob.identity.publicKey, forUser: bob.address.userID)
        try await alice.manager.processBundle(try bob.bundle(0), for: bob.address)
        _ = try await alice.manager.encrypt(Array("verified".utf8), to: bob.address)

        let newBob = try await Device("bob")
        for _ in 0 ..< 2 {
            await assertUntrusted {
                try await alice.manager.processBundle(try newBob.bundle(0), for: bob.address)
                return []
            }
        }
        let status = try await alice.trust.status(forUser: bob.address.userID)
        XCTAssertEqual(status, .verified, "a refused bundle records nothing")
        let stillSending = try await alice.manager.encrypt(Array("still you".utf8), to: bob.address)
        let atBob = try await bob.manager.decrypt(stillSending, from: alice.address)
        XCTAssertEqual(atBob.plaintext, Array("still you".utf8))

        let newKey = newBob.identity.publicKey
        let observed = await alice.trust.observeIdentity(newKey, for: bob.address)
        XCTAssertEqual(observed, .changed(previous: bob.identity.publicKey))
        try await alice.trust.acceptIdentityChange(newKey, forUser: bob.address.userID)
        try await alice.manager.processBundle(try newBob.bundle(0), for: bob.address)
        let message = try await alice.manager.encrypt(Array("hello again".utf8), to: bob.address)
        let received = try await newBob.manager.decrypt(message, from: alice.address)
        XCTAssertEqual(received.plaintext, Array("hello again".utf8))
    }
}
