import SessionKit
import SessionKitMLKEM
import Verification
import XCTest

/// The main code samples of the DocC articles of SessionKit and Verification, compiled and run
/// as an app would write them (no `@testable`). Each sample sits between `// --- <article>`
/// and `// --- end` markers; keep the two in sync. The app's server is `DocumentationServer`.
final class DocumentationExampleTests: XCTestCase {
    // MARK: SessionKit.docc/GettingStarted.md

    func testGettingStartedFirstSession() async throws {
        // --- GettingStarted.md, "The first session" ---
        let aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let bobAddress = try ProtocolAddress(userID: "bob", deviceID: 1)
        let alice = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()),
                                   trust: InMemoryTrustStore(), localAddress: aliceAddress)
        let bob = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()),
                                 trust: InMemoryTrustStore(), localAddress: bobAddress)

        // Bob generates his prekeys and uploads their public parts; the server keeps them.
        let upload = try await bob.maintainPreKeys()
        let onServer = try PreKeyUpload(serialized: upload.serialized)

        // The server hands Alice a bundle (each one-time prekey at most once); she starts a session.
        guard let bundle = onServer.bundle(oneTimePreKey: onServer.oneTimePreKeys.first) else { return }
        try await alice.processBundle(try PreKeyBundle(serialized: bundle.serialized), for: bobAddress)

        // Alice encrypts; Bob decrypts (the transport says who sent it) and replies.
        let wire = try await alice.encrypt(Array("Hello, Bob".utf8), to: bobAddress)
        let received = try await bob.decrypt(wire, from: aliceAddress)
        let reply = try await bob.encrypt(Array("Hello, Alice".utf8), to: aliceAddress)
        let answer = try await alice.decrypt(reply, from: bobAddress)
        // --- end ---

        XCTAssertEqual(received.plaintext, Array("Hello, Bob".utf8))
        XCTAssertEqual(received.identityObservation, .firstUse)
        XCTAssertTrue(received.establishedSession)
        XCTAssertEqual(received.sender, aliceAddress)
        XCTAssertEqual(answer.plaintext, Array("Hello, Alice".utf8))
        XCTAssertFalse(answer.establishedSession)
        XCTAssertEqual(wire[0], 0x22, "the first message is a prekey message")
        XCTAssertEqual(reply[0], 0x21, "the reply is a ratchet message")
        let again = try await bob.maintainPreKeys()
        XCTAssertTrue(again.isEmpty, "nothing to upload right after the first upkeep with one prekey used")
    }

    // MARK: SessionKit.docc/SessionsAndDevices.md

    func testSessionsAndDevicesFanOutToEveryDeviceOfAUser() async throws {
        let server = DocumentationServer()
        func log(_ line: String) { XCTFail(line) }
        let aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let aliceTrust = InMemoryTrustStore()
        let alice = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()),
                                   trust: aliceTrust, localAddress: aliceAddress)

        // --- SessionsAndDevices.md, "Addresses" ---
        let bobPhone = try ProtocolAddress(userID: "bob", deviceID: 1)
        let bobLaptop = try ProtocolAddress(userID: "bob", deviceID: 2)
        // --- end ---

        // Bob's laptop was linked to his phone: it received Bob's identity and made its own store.
        let bobIdentity = try IdentityKeyPair()
        let phone = SessionManager(store: InMemoryProtocolStore(identity: bobIdentity), trust: InMemoryTrustStore(),
                                   localAddress: bobPhone)
        let laptop = SessionManager(store: InMemoryProtocolStore(identity: bobIdentity), trust: InMemoryTrustStore(),
                                    localAddress: bobLaptop)
        for manager in [phone, laptop] {
            // --- SessionsAndDevices.md, "Prekey upkeep" ---
            let upload = try await manager.maintainPreKeys()
            if !upload.isEmpty {
                try await server.uploadPreKeys(upload.serialized)
            }
            // --- end ---
        }
        let uploads = await server.uploads
        XCTAssertEqual(uploads.count, 2)
        let phoneUpload = try PreKeyUpload(serialized: uploads[0])
        let laptopUpload = try PreKeyUpload(serialized: uploads[1])
        let phoneBundle = try XCTUnwrap(phoneUpload.bundle(oneTimePreKey: phoneUpload.oneTimePreKeys.first))
        let laptopBundle = try XCTUnwrap(laptopUpload.bundle(oneTimePreKey: laptopUpload.oneTimePreKeys.first))

        // --- SessionsAndDevices.md, "One identity per user, one session per device" ---
        // Alice has processed a bundle of each of Bob's devices.
        try await alice.processBundle(phoneBundle, for: bobPhone)
        try await alice.processBundle(laptopBundle, for: bobLaptop)

        for outcome in try await alice.encrypt(Array("See you at 8".utf8), toUser: "bob") {
            switch outcome.result {
            case let .success(message):
                try await server.send(message, to: outcome.address)
            case .failure(.untrustedIdentity):
                // This device's identity key changed: ask the user first (Verifying Contacts).
                break
            case let .failure(error):
                log("not sent to \(outcome.address): \(error)")
            }
        }
        // --- end ---

        let sent = await server.sent
        XCTAssertEqual(sent.map(\.address), [bobPhone, bobLaptop], "the recipient's devices by ascending device id")
        let atPhone = try await phone.decrypt(sent[0].bytes, from: aliceAddress)
        let atLaptop = try await laptop.decrypt(sent[1].bytes, from: aliceAddress)
        XCTAssertEqual(atPhone.plaintext, Array("See you at 8".utf8))
        XCTAssertEqual(atLaptop.plaintext, Array("See you at 8".utf8))
        XCTAssertEqual(atPhone.senderIdentityKey, atLaptop.senderIdentityKey)

        // One identity per user: one safety number for both of Bob's devices.
        let phoneRecord = await aliceTrust.record(for: bobPhone)
        let laptopRecord = await aliceTrust.record(for: bobLaptop)
        let phoneKey = try XCTUnwrap(phoneRecord)
        let laptopKey = try XCTUnwrap(laptopRecord)
        XCTAssertEqual(phoneKey.identityKey, laptopKey.identityKey)
        XCTAssertEqual(phoneKey.identityKey, bobIdentity.publicKey.rawRepresentation)

        // Starting over: a fresh bundle makes a new current session; the old one still decrypts.
        let inFlight = try await alice.encrypt(Array("old session".utf8), to: bobPhone)
        let secondUpload = try PreKeyUpload(serialized: uploads[0])
        let fresh = try XCTUnwrap(secondUpload.bundle(oneTimePreKey: secondUpload.oneTimePreKeys[1]))
        try await alice.processBundle(fresh, for: bobPhone)
        let onNewSession = try await alice.encrypt(Array("new session".utf8), to: bobPhone)
        let old = try await phone.decrypt(inFlight, from: aliceAddress)
        XCTAssertEqual(old.plaintext, Array("old session".utf8))
        let new = try await phone.decrypt(onNewSession, from: aliceAddress)
        XCTAssertEqual(new.plaintext, Array("new session".utf8))
        XCTAssertTrue(new.establishedSession)

        // Replays are duplicates.
        do {
            _ = try await phone.decrypt(onNewSession, from: aliceAddress)
            XCTFail("a replay decrypted")
        } catch {
            XCTAssertEqual(error, .duplicateMessage)
        }
    }

    // MARK: SessionKit.docc/Groups.md

    func testGroupsDistributeEncryptOnceAndRemoveAMember() async throws {
        let server = DocumentationServer()
        let aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let bobPhone = try ProtocolAddress(userID: "bob", deviceID: 1)
        let carolPhone = try ProtocolAddress(userID: "carol", deviceID: 1)
        let aliceDevice = try await DocumentationDevice(aliceAddress)
        let bob = try await DocumentationDevice(bobPhone)
        let carol = try await DocumentationDevice(carolPhone)
        try await aliceDevice.startSession(with: bob)
        try await aliceDevice.startSession(with: carol)
        let alice = aliceDevice.manager

        // --- Groups.md, "Send" ---
        let group = try GroupID("book club")

        // Once per group, and again for every member device that joins: our chain, to each member
        // device, through its pairwise session (which must exist: processBundle first).
        for outcome in try await alice.distributeSenderKey(for: group, to: [bobPhone, carolPhone]) {
            if let message = outcome.ciphertext {
                try await server.send(message, to: outcome.address, kind: .senderKeyDistribution, group: group)
            }
        }

        // Then every group message: one encryption, the same bytes to every member device.
        let groupMessage = try await alice.groupEncrypt(Array("Chapter 1".utf8), for: group)
        try await server.sendToGroup(groupMessage, group: group)
        // --- end ---

        let sent = await server.sent
        XCTAssertEqual(sent.map(\.address), [bobPhone, carolPhone])
        XCTAssertEqual(sent.map(\.kind), [.senderKeyDistribution, .senderKeyDistribution])

        // Carol's distribution is late: the group message waits (unknownChain), then decrypts.
        do {
            _ = try await carol.manager.groupDecrypt(groupMessage, for: group, from: aliceAddress)
            XCTFail("decrypted without the chain")
        } catch {
            XCTAssertEqual(error, .unknownChain)
        }

        let distribution = sent[0].bytes
        let aliceAddressSeenByBob = aliceAddress
        do {
            let bob = bob.manager
            let aliceAddress = aliceAddressSeenByBob
            // --- Groups.md, "Receive" ---
            // A distribution, from the pairwise session with the sender.
            try await bob.processSenderKeyDistribution(encrypted: distribution, for: group, from: aliceAddress)

            // A group message: the group and the sender come from your envelope.
            let text = try await bob.groupDecrypt(groupMessage, for: group, from: aliceAddress)
            // --- end ---
            XCTAssertEqual(text, Array("Chapter 1".utf8))
        }
        try await carol.manager.processSenderKeyDistribution(encrypted: sent[1].bytes, for: group, from: aliceAddress)
        let atCarol = try await carol.manager.groupDecrypt(groupMessage, for: group, from: aliceAddress)
        XCTAssertEqual(atCarol, Array("Chapter 1".utf8), "retried after the distribution arrived")

        // Relabeled to another group, or re-attributed to another member: refused.
        do {
            _ = try await bob.manager.groupDecrypt(groupMessage, for: try GroupID("other"), from: aliceAddress)
            XCTFail("a relabeled message decrypted")
        } catch {
            XCTAssertEqual(error, .unknownChain)
        }

        // A device given the chain later cannot read what was sent before: messageKeyUnavailable.
        let dave = try await DocumentationDevice(try ProtocolAddress(userID: "dave", deviceID: 1))
        try await aliceDevice.startSession(with: dave)
        let second = try await alice.groupEncrypt(Array("Chapter 2".utf8), for: group)
        for outcome in try await alice.distributeSenderKey(for: group, to: [dave.address]) {
            try await dave.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(outcome.ciphertext), for: group,
                                                                from: aliceAddress)
        }
        do {
            _ = try await dave.manager.groupDecrypt(second, for: group, from: aliceAddress)
            XCTFail("a message from before the chain was given decrypted")
        } catch {
            XCTAssertEqual(error, .messageKeyUnavailable)
        }

        // Carol leaves: a new chain, for Bob (and Dave) only.
        let rotated = try await alice.removeMembers([carolPhone], from: group, remaining: [bobPhone, dave.address])
        XCTAssertEqual(rotated.map(\.address), [bobPhone, dave.address])
        try await bob.manager.processSenderKeyDistribution(encrypted: try XCTUnwrap(rotated[0].ciphertext), for: group,
                                                           from: aliceAddress)
        let afterLeaving = try await alice.groupEncrypt(Array("Chapter 3".utf8), for: group)
        let atBob = try await bob.manager.groupDecrypt(afterLeaving, for: group, from: aliceAddress)
        XCTAssertEqual(atBob, Array("Chapter 3".utf8))
        do {
            _ = try await carol.manager.groupDecrypt(afterLeaving, for: group, from: aliceAddress)
            XCTFail("a removed member read the new chain")
        } catch {
            XCTAssertEqual(error, .unknownChain)
        }
    }

    // MARK: SessionKit.docc/PostQuantumSessions.md

    func testPostQuantumSessionsTurnOnRequireAndRefuse() async throws {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            throw XCTSkip("ML-KEM-768 needs the 26 releases on Apple platforms")
        }
        let myAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let bobAddress = try ProtocolAddress(userID: "bob", deviceID: 1)
        let store = InMemoryProtocolStore(identity: try IdentityKeyPair())
        let trustStore = InMemoryTrustStore()

        // --- PostQuantumSessions.md, "Turn it on" ---
        let manager = SessionManager(store: store, trust: trustStore, localAddress: myAddress,
                                     kem: SwiftCryptoMLKEM768())
        // --- end ---

        let bob = try await DocumentationDevice(bobAddress, kem: SwiftCryptoMLKEM768())
        let upload = try await bob.manager.maintainPreKeys()
        XCTAssertEqual(upload.signedPreKey?.signsKEMPreKeys, true)
        XCTAssertNotNil(upload.lastResortKEMPreKey)
        XCTAssertEqual(upload.oneTimeKEMPreKeys.count, 50)
        let hybridBundle = try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first,
                                                       kemPreKey: upload.oneTimeKEMPreKeys.first))
        try await manager.processBundle(hybridBundle, for: bobAddress)
        let wire = try await manager.encrypt(Array("post-quantum".utf8), to: bobAddress)
        XCTAssertEqual(wire[69] & 0x02, 0x02, "a prekey message with the KEM part")
        let atBob = try await bob.manager.decrypt(wire, from: myAddress)
        XCTAssertEqual(atBob.plaintext, Array("post-quantum".utf8))
        let lastResort = try XCTUnwrap(upload.bundle(oneTimePreKey: nil, kemPreKey: nil))
        XCTAssertEqual(lastResort.kemPreKey?.id, upload.lastResortKEMPreKey?.id, "kemPreKey: nil picks the last-resort key")

        // A manager without a KEM cannot use a bundle with a KEM prekey.
        let classic = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                                     localAddress: try ProtocolAddress(userID: "carol", deviceID: 1))
        do {
            try await classic.processBundle(hybridBundle, for: bobAddress)
            XCTFail("a manager without a KEM used a KEM prekey")
        } catch {
            XCTAssertEqual(error, .kemUnavailable)
        }

        // Requiring post-quantum sessions refuses a classic bundle.
        let dave = try await DocumentationDevice(try ProtocolAddress(userID: "dave", deviceID: 1))
        let classicUpload = try await dave.manager.maintainPreKeys()
        let classicBundle = try XCTUnwrap(classicUpload.bundle(oneTimePreKey: classicUpload.oneTimePreKeys.first))
        do {
            let store = InMemoryProtocolStore(identity: try IdentityKeyPair())
            // --- PostQuantumSessions.md, "Requiring post-quantum sessions" ---
            let configuration = try SessionConfiguration(requirePostQuantum: true)
            let manager = SessionManager(store: store, trust: trustStore, localAddress: myAddress,
                                         kem: SwiftCryptoMLKEM768(), configuration: configuration)
            // --- end ---
            do {
                try await manager.processBundle(classicBundle, for: dave.address)
                XCTFail("a classic bundle was used although post-quantum sessions are required")
            } catch {
                XCTAssertEqual(error, .postQuantumRequired)
            }
        }
        // Without the requirement, a manager with a KEM starts a classic session with it.
        try await manager.processBundle(classicBundle, for: dave.address)
        let toDave = try await manager.encrypt(Array("classic".utf8), to: dave.address)
        XCTAssertEqual(toDave[69] & 0x02, 0, "no KEM part")
        let atDave = try await dave.manager.decrypt(toDave, from: myAddress)
        XCTAssertEqual(atDave.plaintext, Array("classic".utf8))
    }

    // MARK: Verification.docc/VerifyingContacts.md

    func testVerifyingContactsSafetyNumbersQRAndKeyChanges() async throws {
        func show(_ text: String) { XCTAssertEqual(text.count, 71, "12 groups of 5 digits and 11 spaces") }
        var shownCode: [UInt8] = []
        func showQRCode(_ bytes: [UInt8]) { shownCode = bytes }
        var warnings: [String] = []
        func warn(_ text: String) { warnings.append(text) }

        let aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let bobPhone = try ProtocolAddress(userID: "bob", deviceID: 1)
        let bobLaptop = try ProtocolAddress(userID: "bob", deviceID: 2)
        let aliceIdentity = try IdentityKeyPair()
        let bobIdentity = try IdentityKeyPair()
        let trust: any TrustStore = InMemoryTrustStore()
        let alice = SessionManager(store: InMemoryProtocolStore(identity: aliceIdentity), trust: trust, localAddress: aliceAddress)
        let bobsDevices = [bobPhone, bobLaptop]
        for device in bobsDevices {
            let bob = try await DocumentationDevice(device, identity: bobIdentity)
            try await bob.startSession(from: alice, at: aliceAddress)
        }

        let recorded = try await trust.record(for: bobPhone)
        XCTAssertEqual(recorded?.identityKey, bobIdentity.publicKey.rawRepresentation, "recorded on first use")
        // --- VerifyingContacts.md, "One number per pair of users" ---
        let generator = try FingerprintGenerator()   // 5,200 iterations, as libsignal

        // Bob's identity key as this device uses it: the one on record for his device.
        guard let bobKey = try await trust.record(for: bobPhone)?.identityKey else { return }
        let fingerprint = generator.fingerprint(
            version: 2,
            localUserID: "alice", localIdentityKey: aliceIdentity.publicKey,
            remoteUserID: "bob", remoteIdentityKey: try Ed25519.PublicKey(rawRepresentation: bobKey))

        show(fingerprint.displayable.formatted)   // "12345 67890 …": 12 groups of 5 digits
        showQRCode(fingerprint.scannable.serialized)
        // --- end ---

        // What Bob's phone shows.
        let bobsFingerprint = generator.fingerprint(
            version: 2, localUserID: "bob", localIdentityKey: bobIdentity.publicKey,
            remoteUserID: "alice", remoteIdentityKey: aliceIdentity.publicKey)
        XCTAssertEqual(bobsFingerprint.displayable, fingerprint.displayable)
        XCTAssertEqual(shownCode, fingerprint.scannable.serialized)

        var scannedBytes = bobsFingerprint.scannable.serialized
        // --- VerifyingContacts.md, "Scanning the other phone's code" ---
        switch try fingerprint.scannable.compare(serialized: scannedBytes) {
        case .match:
            // Each phone holds the other's key: mark the key the number was computed from.
            for device in bobsDevices {
                try await trust.markVerified(bobKey, for: device)
            }
        case .mismatch:
            warn("These safety numbers do not match. Someone may be intercepting your messages.")
        case .versionMismatch:
            warn("Ask Bob to update the app, then compare again.")
        }
        // --- end ---
        for device in bobsDevices {
            let status = try await trust.status(for: device)
            XCTAssertEqual(status, .verified)
        }
        XCTAssertEqual(warnings, [])

        // The QR payload: Bob's own code verifies him; Carol's code, scanned for Bob, does not.
        func verifyScannedPayload() async throws {
            // --- VerifyingContacts.md, "A contact's QR payload" ---
            let scanned = try QRPayload(decoding: scannedBytes)

            // The code must be Bob's (his user id, compared as bytes) and carry the key on record for him.
            guard scanned.matches(uid: bobPhone.userID, identityKey: bobKey) else {
                warn("This code does not match Bob's safety number.")
                return
            }
            for device in bobsDevices {
                try await trust.markVerified(scanned.identityKey, for: device)
            }
            // --- end ---
        }
        for device in bobsDevices { try await trust.clearVerification(for: device) }
        let carolIdentity = try IdentityKeyPair()
        for (code, verifies) in [
            (try QRPayload(uid: "bob", identityKey: bobIdentity.publicKey).encoded, true),
            (try QRPayload(uid: "carol", identityKey: carolIdentity.publicKey).encoded, false),
            (try QRPayload(uid: "carol", identityKey: bobIdentity.publicKey).encoded, false),
        ] {
            scannedBytes = code
            try await verifyScannedPayload()
            for device in bobsDevices {
                let status = try await trust.status(for: device)
                XCTAssertEqual(status, verifies ? .verified : .trusted, "\(code)")
            }
            for device in bobsDevices { try await trust.clearVerification(for: device) }
        }
        XCTAssertEqual(warnings.count, 2)

        // Bob's phone is reinstalled with a new identity: its new bundle is refused until accepted.
        let newBob = try await DocumentationDevice(bobPhone)
        let bundle = try await newBob.bundle()
        let newKey = try Ed25519.PublicKey(rawRepresentation: bundle.identityKey.rawRepresentation)
        // --- VerifyingContacts.md, "When a key changes" ---
        do {
            try await alice.processBundle(bundle, for: bobPhone)
        } catch SessionError.untrustedIdentity {
            let newKey = bundle.identityKey.rawRepresentation
            // Show the new safety number (computed with `newKey`); if the user accepts:
            _ = try await trust.observeIdentity(newKey, for: bobPhone)       // .changed(previous:)
            try await trust.acceptIdentityChange(newKey, for: bobPhone)
            try await alice.processBundle(bundle, for: bobPhone)
        }
        // --- end ---
        let phoneStatus = try await trust.status(for: bobPhone)
        XCTAssertEqual(phoneStatus, .trusted)
        let laptopStatus = try await trust.status(for: bobLaptop)
        XCTAssertEqual(laptopStatus, .trusted, "the laptop's record is its own")
        let message = try await alice.encrypt(Array("Welcome back".utf8), to: bobPhone)
        let atNewBob = try await newBob.manager.decrypt(message, from: aliceAddress)
        XCTAssertEqual(atNewBob.plaintext, Array("Welcome back".utf8))
        XCTAssertEqual(atNewBob.identityObservation, .firstUse)
        XCTAssertEqual(newKey, newBob.identity.publicKey)
    }
}

// MARK: - The app's side, which the articles leave out

/// What the articles call `server`: it keeps what the app sends.
actor DocumentationServer {
    /// How the app's envelope marks a message.
    enum Kind: Sendable, Equatable {
        case message, senderKeyDistribution
    }

    /// A message sent to one device.
    struct Sent: Sendable {
        let bytes: [UInt8]
        let address: ProtocolAddress
        let kind: Kind
    }

    private(set) var sent: [Sent] = []
    private(set) var uploads: [[UInt8]] = []
    private(set) var groupMessages: [(GroupID, [UInt8])] = []

    func send(_ bytes: [UInt8], to address: ProtocolAddress) throws {
        sent.append(Sent(bytes: bytes, address: address, kind: .message))
    }

    func send(_ bytes: [UInt8], to address: ProtocolAddress, kind: Kind, group: GroupID) throws {
        sent.append(Sent(bytes: bytes, address: address, kind: kind))
    }

    func sendToGroup(_ bytes: [UInt8], group: GroupID) throws { groupMessages.append((group, bytes)) }

    func uploadPreKeys(_ bytes: [UInt8]) throws { uploads.append(bytes) }
}

/// A device with its manager, an in-memory store and trust store.
struct DocumentationDevice {
    let address: ProtocolAddress
    let identity: IdentityKeyPair
    let manager: SessionManager

    init(_ address: ProtocolAddress, identity: IdentityKeyPair? = nil, kem: (any KeyEncapsulationMechanism)? = nil) async throws {
        self.address = address
        self.identity = try identity ?? IdentityKeyPair()
        manager = SessionManager(store: InMemoryProtocolStore(identity: self.identity), trust: InMemoryTrustStore(),
                                 localAddress: address, kem: kem)
    }

    /// A bundle of this device (with a one-time prekey).
    func bundle() async throws -> PreKeyBundle {
        let upload = try await manager.maintainPreKeys()
        return try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first))
    }

    /// Starts a session with `peer` from its bundle, and has the peer reply once.
    func startSession(with peer: DocumentationDevice) async throws {
        try await manager.processBundle(try await peer.bundle(), for: peer.address)
        let hello = try await manager.encrypt(Array("hello".utf8), to: peer.address)
        _ = try await peer.manager.decrypt(hello, from: address)
        let reply = try await peer.manager.encrypt(Array("hi".utf8), to: address)
        _ = try await manager.decrypt(reply, from: peer.address)
    }

    /// Has `other` (at `otherAddress`) start a session with this device.
    func startSession(from other: SessionManager, at otherAddress: ProtocolAddress) async throws {
        try await other.processBundle(try await bundle(), for: address)
        let hello = try await other.encrypt(Array("hello".utf8), to: address)
        _ = try await manager.decrypt(hello, from: otherAddress)
    }
}
