import SessionKit
import SessionKitMLKEM
import TestSupport
import Verification
import XCTest

/// The main code samples of the DocC articles of SessionKit and Verification, compiled and run
/// as an app would write them (no `@testable`). Each sample sits between `// --- <article>`
/// and `// --- end` markers; keep the two in sync. The app's server is `DocumentationServer`.
final class DocumentationExampleTests: XCTestCase {
    // MARK: The articles show the lines that run here

    /// Every sample between `// --- <Article>.md, "<section>" ---` and `// --- end ---` in the
    /// documentation tests appears in its article, line for line (indentation and blank lines
    /// aside), so that the articles cannot drift from the code that is compiled and run.
    func testTheArticlesShowTheLinesTheseTestsRun() throws {
        let root = PackageDocuments.root
        var articles: [String: [String]] = [:]
        for module in ["SessionKit", "Verification", "SessionKitSQLite"] {
            let catalog = root.appendingPathComponent("Sources/\(module)/\(module).docc")
            for name in try FileManager.default.contentsOfDirectory(atPath: catalog.path) where name.hasSuffix(".md") {
                let text = try String(contentsOf: catalog.appendingPathComponent(name), encoding: .utf8)
                articles[name] = Self.significantLines(text)
            }
        }
        var checked = 0
        for test in ["Tests/VerificationTests/DocumentationExampleTests.swift",
                     "Tests/SessionKitSQLiteTests/DocumentationExampleTests.swift"] {
            let lines = try String(contentsOf: root.appendingPathComponent(test), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var index = 0
            while index < lines.count {
                let line = lines[index].trimmingCharacters(in: .whitespaces)
                index += 1
                guard line.hasPrefix("// --- "), line.hasSuffix(" ---"), line != "// --- end ---",
                      let comma = line.range(of: ".md, ")
                else { continue }
                let article = String(line[line.index(line.startIndex, offsetBy: 7) ..< comma.lowerBound]) + ".md"
                var sample: [String] = []
                while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "// --- end ---" {
                    sample.append(lines[index])
                    index += 1
                }
                let shown = Self.significantLines(sample.joined(separator: "\n"))
                let text = try XCTUnwrap(articles[article], "\(test): no article \(article)")
                let found = !shown.isEmpty && (0 ... max(0, text.count - shown.count)).contains { start in
                    Array(text[start ..< min(text.count, start + shown.count)]) == shown
                }
                XCTAssertTrue(found, "\(test): \(line) is not in \(article) as it runs here")
                checked += 1
            }
        }
        XCTAssertGreaterThanOrEqual(checked, 18, "the samples of every article")
    }

    /// The non-empty lines of `text`, trimmed.
    private static func significantLines(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

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
        guard let bundle = onServer.bundle(oneTimePreKey: onServer.oneTimePreKeys.first) else { fatalError("no bundle") }
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

        // --- GettingStarted.md, "Envelopes" ---
        // Alice: a text envelope for any transport that carries text.
        let envelope = try await alice.encryptEnvelope(Array("Are you there?".utf8), to: bobAddress)
        let text = envelope.encodedText()

        // Bob: one call for every kind of incoming envelope.
        let incoming = try await bob.receive(try MessageEnvelope(text: text))
        if case let .message(message) = incoming {
            print(String(decoding: message.plaintext, as: UTF8.self))   // Are you there?
        }
        // --- end ---
        XCTAssertEqual(incoming.plaintext, Array("Are you there?".utf8))
        XCTAssertEqual(incoming.sender, aliceAddress)
        XCTAssertEqual(envelope.recipient, bobAddress)
        XCTAssertEqual(envelope.kind, .message)
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
        do {
            // The server's side, for the phone: its first upload, a later one, one bundle.
            let firstUpload = uploads[0]
            let laterUpload = try await phone.maintainPreKeys().serialized   // nothing new: merging changes nothing
            // --- SessionsAndDevices.md, "Prekey upkeep", the server ---
            var published = try PublishedPreKeys(registering: PreKeyUpload(serialized: firstUpload))
            try published.merge(PreKeyUpload(serialized: laterUpload))
            let bundle = published.takeBundle()        // bundle.serialized → the device starting a session
            // --- end ---
            let upload = try PreKeyUpload(serialized: firstUpload)
            XCTAssertEqual(bundle.oneTimePreKey, upload.oneTimePreKeys.first)
            XCTAssertEqual(published.oneTimePreKeys, Array(upload.oneTimePreKeys.dropFirst()))
        }
        let phoneUpload = try PreKeyUpload(serialized: uploads[0])
        let laptopUpload = try PreKeyUpload(serialized: uploads[1])
        let phoneBundle = try XCTUnwrap(phoneUpload.bundle(oneTimePreKey: phoneUpload.oneTimePreKeys.first))
        let laptopBundle = try XCTUnwrap(laptopUpload.bundle(oneTimePreKey: laptopUpload.oneTimePreKeys.first))

        // --- SessionsAndDevices.md, "One identity per user, one session per device" ---
        // Alice has processed a bundle of each of Bob's devices.
        try await alice.processBundle(phoneBundle, for: bobPhone)
        try await alice.processBundle(laptopBundle, for: bobLaptop)

        for outcome in try await alice.encrypt(Array("See you at 8".utf8), toUser: "bob", devices: [1, 2]) {
            switch outcome.result {
            case .success:
                if let envelope = outcome.envelope { try await server.send(envelope.encodedText()) }
            case .failure(.untrustedIdentity):
                // This device's identity key changed: ask the user first (Verifying Contacts).
                break
            case let .failure(error):
                log("not sent to \(outcome.address): \(error)")
            }
        }
        // --- end ---

        let texts = await server.texts
        let envelopes = try texts.map { text throws in try MessageEnvelope(text: text) }
        XCTAssertEqual(envelopes.map(\.recipient), [bobPhone, bobLaptop], "the recipient's devices by ascending device id")
        guard case let .message(atPhone) = try await phone.receive(envelopes[0]),
              case let .message(atLaptop) = try await laptop.receive(envelopes[1])
        else { return XCTFail("not pairwise messages") }
        XCTAssertEqual(atPhone.plaintext, Array("See you at 8".utf8))
        XCTAssertEqual(atLaptop.plaintext, Array("See you at 8".utf8))
        XCTAssertEqual(atPhone.senderIdentityKey, atLaptop.senderIdentityKey)

        // A listed device without a session is reported, not skipped.
        let three = try await alice.encrypt(Array("three".utf8), toUser: "bob", devices: [1, 3])
        XCTAssertEqual(three.map(\.address.deviceID), [1, 3])
        XCTAssertEqual(three[1].error, .noSession)

        // One identity per user: one safety number for both of Bob's devices.
        let phoneRecord = try await aliceTrust.record(forUser: bobPhone.userID)
        let laptopRecord = try await aliceTrust.record(forUser: bobLaptop.userID)
        let phoneKey = try XCTUnwrap(phoneRecord)
        let laptopKey = try XCTUnwrap(laptopRecord)
        XCTAssertEqual(phoneKey.identityKey, laptopKey.identityKey)
        XCTAssertEqual(phoneKey.identityKey, bobIdentity.publicKey)

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
        for member in [bob, carol] { try await member.manager.setGroupMembers([aliceAddress], for: try GroupID("book club")) }

        // --- Groups.md, "Send" ---
        let group = try GroupID("book club")
        // The member devices, from your server's roster (every member's device lists the others).
        try await alice.setGroupMembers([bobPhone, carolPhone], for: group)

        // Once per group, and again for every member device that joins: our chain, to each member
        // device, through its pairwise session (which must exist: processBundle first).
        for outcome in try await alice.distributeSenderKey(for: group, to: [bobPhone, carolPhone]) {
            if let envelope = outcome.envelope { try await server.send(envelope.encodedText()) }
        }

        // Then every group message: one encryption, the same envelope for every member device.
        // First replace the chain when it is due (after 1,000 messages or 7 days: SenderKeyPolicy).
        for outcome in try await alice.rotateSenderKeyIfDue(for: group) {
            if let envelope = outcome.envelope { try await server.send(envelope.encodedText()) }
        }
        let groupMessage = try await alice.groupEncryptEnvelope(Array("Chapter 1".utf8), for: group)
        try await server.sendToGroup(groupMessage.encodedText(), group: group)
        // --- end ---

        let texts = await server.texts
        let distributions = try texts.map { text throws in try MessageEnvelope(text: text) }
        XCTAssertEqual(distributions.map(\.recipient), [bobPhone, carolPhone])
        XCTAssertEqual(distributions.map(\.kind), [.senderKeyDistribution, .senderKeyDistribution])
        XCTAssertEqual(distributions.map(\.group), [group, group])
        let groupTexts = await server.groupTexts
        XCTAssertEqual(groupTexts.map(\.0), [group])

        // Carol's distribution is late: the group message waits (unknownChain), then decrypts.
        do {
            _ = try await carol.manager.receive(groupMessage)
            XCTFail("decrypted without the chain")
        } catch {
            XCTAssertEqual(error, .unknownChain)
            XCTAssertEqual(error.disposition, .retryLater)
        }

        var shown: [String] = []
        var sent: [MessageEnvelope] = []
        var changed: [String] = []
        func send(_ envelope: MessageEnvelope) { sent.append(envelope) }
        func keyChanged(_ user: String) { changed.append(user) }
        func show(_ plaintext: [UInt8], from sender: ProtocolAddress, in group: GroupID? = nil) {
            shown.append("\(sender) \(group.map { String(decoding: $0.rawRepresentation, as: UTF8.self) } ?? "-"): \(String(decoding: plaintext, as: UTF8.self))")
        }
        let bobManager = bob.manager
        do {
            _ = try await bobManager.receive(groupMessage)
            XCTFail("decrypted without the chain")
        } catch {
            XCTAssertEqual(error, .unknownChain, "kept by the manager until the distribution arrives")
        }
        for text in [texts[0]] {
            let bob = bobManager
            // --- Groups.md, "Receive" ---
            // Whatever arrives: a distribution (with the group messages that waited for it) or a message.
            switch try await bob.receive(try MessageEnvelope(text: text)) {
            case let .groupMessage(message):
                show(message.plaintext, from: message.sender, in: message.group)
            case let .senderKeyDistribution(_, sender, observation, released, undecryptable):
                // The pairwise message that carried it reports key changes like any other.
                if case .changed = observation { keyChanged(sender.userID) }
                for message in released { show(message.plaintext, from: message.sender, in: message.group) }
                // Kept messages older than the distribution: as if they arrived after it.
                for failure in undecryptable { if let notice = failure.retryNotice { send(notice) } }
            case let .message(message):
                show(message.plaintext, from: message.sender)
            case let .undecryptable(failure):
                // State for the sender is lost (SPEC §9): send the notice; see "Errors and Recovery".
                if let notice = failure.retryNotice { send(notice) }
            case .retryNotice:
                break    // a peer's request to act; see "Errors and Recovery"
            }
            // --- end ---
        }
        XCTAssertEqual(shown, ["alice.1 book club: Chapter 1"], "the kept message, released with the distribution")
        XCTAssertEqual(sent, [], "nothing was undecryptable")
        XCTAssertEqual(changed, [], "Alice's key was new to Bob, not changed")
        let stillKept = try await bob.manager.store.loadPendingGroupMessages(for: group, sender: aliceAddress)
        XCTAssertEqual(stillKept, [])

        shown = []
        do {
            let bob = carol.manager
            let distribution = distributions[1].body
            let groupMessageBytes = try await alice.groupEncrypt(Array("Chapter 1, part 2".utf8), for: group)
            // --- Groups.md, "Receive", without envelopes ---
            try await bob.processSenderKeyDistribution(encrypted: distribution, for: group, from: aliceAddress)
            for message in try await bob.releasePendingGroupMessages(for: group, from: aliceAddress) {
                show(message.plaintext, from: aliceAddress, in: group)   // those that arrived before the chain
            }
            let plaintext = try await bob.groupDecrypt(groupMessageBytes, for: group, from: aliceAddress)
            // --- end ---
            XCTAssertEqual(shown, ["alice.1 book club: Chapter 1"], "Carol's kept message")
            XCTAssertEqual(plaintext, Array("Chapter 1, part 2".utf8))
        }

        // Relabeled to another group (of which Alice is not a member here): refused.
        do {
            _ = try await bob.manager.groupDecrypt(groupMessage.body, for: try GroupID("other"), from: aliceAddress)
            XCTFail("a relabeled message decrypted")
        } catch {
            XCTAssertEqual(error, .notAGroupMember)
        }

        // A device given the chain later cannot read what was sent before: messageKeyUnavailable.
        let dave = try await DocumentationDevice(try ProtocolAddress(userID: "dave", deviceID: 1))
        try await dave.manager.setGroupMembers([aliceAddress, bobPhone], for: group)
        try await alice.addGroupMembers([dave.address], to: group)
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
        // --- PostQuantumSessions.md, "Which sessions are post-quantum" ---
        let hybrid = try await manager.isPostQuantum(sessionWith: bobAddress)
        let pinned = try await manager.requiresPostQuantum(for: bobAddress)
        // --- end ---
        XCTAssertTrue(hybrid)
        XCTAssertTrue(pinned)
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
        let daveHybrid = try await manager.isPostQuantum(sessionWith: dave.address)
        let davePinned = try await manager.requiresPostQuantum(for: dave.address)
        XCTAssertFalse(daveHybrid)
        XCTAssertFalse(davePinned)
    }

    // MARK: SessionKit.docc/ErrorsAndRecovery.md

    func testErrorsAndRecoveryHandlesEveryIncomingEnvelopeByDisposition() async throws {
        let server = DocumentationServer()
        let aliceDevice = try await DocumentationDevice(try ProtocolAddress(userID: "alice", deviceID: 1))
        let bobDevice = try await DocumentationDevice(try ProtocolAddress(userID: "bob", deviceID: 1))
        try await aliceDevice.startSession(with: bobDevice)
        let manager = bobDevice.manager

        /// The app's side of the sample.
        actor App {
            var events: [String] = []
            func note(_ event: String) { events.append(event) }
        }
        let app = App()
        func show(_ received: ReceivedMessage) async throws {
            await app.note("show \(String(decoding: received.plaintext ?? [], as: UTF8.self))")
        }
        func showPlaceholder(from sender: ProtocolAddress) async throws { await app.note("placeholder \(sender)") }
        func startNewSession(with sender: ProtocolAddress) async throws { await app.note("new session \(sender)") }
        func askUserAboutKeyChange(of sender: ProtocolAddress) async throws { await app.note("ask \(sender)") }
        func handleRetryNotice(_ outcome: RetryNoticeOutcome) async throws { await app.note("notice \(outcome.sender)") }
        func reportDamagedStore(_ error: SessionError) { XCTFail("\(error)") }

        func handle(_ text: String, envelopeID: String) async throws {
            // --- ErrorsAndRecovery.md, "Overview" ---
            guard let envelope = try? MessageEnvelope(text: text) else {
                try await server.acknowledge(envelopeID)         // not an envelope: it can never be processed
                return
            }
            do {
                switch try await manager.receive(envelope) {
                case let .undecryptable(failure):
                    // This device lost its state for the sender (see "Recovery" below).
                    try await showPlaceholder(from: failure.sender)
                    if let notice = failure.retryNotice { try await server.send(notice) }
                    if failure.startsNewSession { try await startNewSession(with: failure.sender) }
                case let .retryNotice(outcome):
                    // The sender lost its state for this device (see "Recovery" below).
                    try await handleRetryNotice(outcome)
                case let received:
                    try await show(received)
                }
                try await server.acknowledge(envelopeID)
            } catch let error as SessionError {
                switch error.disposition {
                case .drop:
                    try await server.acknowledge(envelopeID)     // forged, damaged or refused
                case .dropSilently:
                    try await server.acknowledge(envelopeID)     // a replay: the user has seen it
                case .neverDecryptable:
                    try await server.acknowledge(envelopeID)
                    try await showPlaceholder(from: envelope.sender)
                case .retryLater:
                    try await server.acknowledge(envelopeID)     // kept by the manager until its distribution
                case .startNewSession:
                    try await server.acknowledge(envelopeID)
                    try await startNewSession(with: envelope.sender)   // fetch a bundle, processBundle, send
                case .askUser:
                    try await askUserAboutKeyChange(of: envelope.sender)
                case .retry:
                    break                                        // do not acknowledge: it comes again
                case .stopAndReport:
                    reportDamagedStore(error)                    // stop using the store
                case .fixCaller:
                    assertionFailure("\(error)")                 // a bug in the app
                }
            }
            // --- end ---
        }

        let message = try await aliceDevice.manager.encryptEnvelope(Array("hi".utf8), to: bobDevice.address)
        var forgedBody = message.body
        forgedBody[forgedBody.count - 1] ^= 1
        let forged = try MessageEnvelope(sender: message.sender, recipient: message.recipient, kind: .message, body: forgedBody)
        let group = try GroupID("early")
        try await manager.setGroupMembers([aliceDevice.address], for: group)
        _ = try await aliceDevice.manager.senderKeyDistributionMessage(for: group)
        let early = try await aliceDevice.manager.groupEncryptEnvelope(Array("too early".utf8), for: group)
        let stranger = try await DocumentationDevice(try ProtocolAddress(userID: "carol", deviceID: 1))
        try await stranger.startSession(with: aliceDevice)   // a session with Alice, none with Bob
        let carolToBob = try MessageEnvelope(sender: stranger.address, recipient: bobDevice.address, kind: .message,
                                             body: Array(message.body))

        try await handle(message.encodedText(), envelopeID: "1")
        try await handle(message.encodedText(), envelopeID: "2")      // replayed
        try await handle(forged.encodedText(), envelopeID: "3")
        try await handle(early.encodedText(), envelopeID: "4")
        try await handle("not an envelope", envelopeID: "5")
        try await handle(carolToBob.encodedText(), envelopeID: "6")   // re-attributed, no session

        let acknowledged = await server.acknowledged
        XCTAssertEqual(acknowledged, ["1", "2", "3", "4", "5", "6"])
        let events = await app.events
        XCTAssertEqual(events, ["show hi", "placeholder carol.1", "new session carol.1"],
                       "no session with carol: undecryptable, a placeholder and the advice to start a session")
        let sent = await server.texts
        XCTAssertEqual(sent, [], "no retry notice: Bob knows no identity key for carol.1 (no session, no trust record)")
        let kept = try await manager.store.loadPendingGroupMessages(for: group, sender: aliceDevice.address)
        XCTAssertEqual(kept.map(\.message), [early.body], "the manager keeps the early group message")
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

        let recorded = try await trust.record(forUser: bobPhone.userID)
        XCTAssertEqual(recorded?.identityKey, bobIdentity.publicKey, "recorded on first use")
        // --- VerifyingContacts.md, "One number per pair of users" ---
        let generator = try FingerprintGenerator()   // 5,200 iterations, as libsignal

        // Bob's identity key as this device uses it: the one on record for the user.
        guard let bobKey = try await trust.record(forUser: "bob")?.identityKey else { return }
        let fingerprint = generator.fingerprint(
            version: 2,
            localUserID: "alice", localIdentityKey: aliceIdentity.publicKey,
            remoteUserID: "bob", remoteIdentityKey: bobKey)

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
            // Each phone holds the other's key: mark the key the number was computed from
            // (every device of Bob's with that key is then verified).
            try await trust.markVerified(bobKey, forUser: "bob")
        case .mismatch:
            warn("These safety numbers do not match. Someone may be intercepting your messages.")
        case .versionMismatch:
            warn("Ask Bob to update the app, then compare again.")
        }
        // --- end ---
        for device in bobsDevices {
            let status = try await trust.status(forUser: device.userID)
            XCTAssertEqual(status, .verified)
        }
        XCTAssertEqual(warnings, [])

        // The QR payload: Bob's own code verifies him; Carol's code, scanned for Bob, does not.
        func verifyScannedPayload() async throws {
            // --- VerifyingContacts.md, "A contact's QR payload" ---
            let scanned = try QRPayload(decoding: scannedBytes)
            do {
                // Verifies only Bob's own code (his user id, compared as bytes) with the key on record.
                try await trust.markVerified(scanned: scanned, forUser: "bob")
            } catch .payloadForAnotherUser, .identityKeyMismatch {
                warn("This code does not match Bob's safety number.")
            }
            // --- end ---
        }
        try await trust.clearVerification(forUser: "bob")
        let carolIdentity = try IdentityKeyPair()
        for (code, verifies) in [
            (try QRPayload(uid: "bob", identityKey: bobIdentity.publicKey).encoded, true),
            (try QRPayload(uid: "carol", identityKey: carolIdentity.publicKey).encoded, false),
            (try QRPayload(uid: "carol", identityKey: bobIdentity.publicKey).encoded, false),
        ] {
            scannedBytes = code
            try await verifyScannedPayload()
            for device in bobsDevices {
                let status = try await trust.status(forUser: device.userID)
                XCTAssertEqual(status, verifies ? .verified : .trusted, "\(code)")
            }
            try await trust.clearVerification(forUser: "bob")
        }
        XCTAssertEqual(warnings.count, 2)

        // Bob's phone is reinstalled with a new identity: its new bundle is refused until accepted.
        let newBob = try await DocumentationDevice(bobPhone)
        let bundle = try await newBob.bundle()
        let newKey = bundle.identityKey
        // --- VerifyingContacts.md, "When a key changes" ---
        do {
            try await alice.processBundle(bundle, for: bobPhone)
        } catch SessionError.untrustedIdentity {
            // Show the new safety number (computed with `bundle.identityKey`); if the user accepts:
            try await alice.acceptIdentityChange(bundle.identityKey, forUser: "bob")
            try await alice.processBundle(bundle, for: bobPhone)
        }
        // --- end ---
        let phoneStatus = try await trust.status(forUser: bobPhone.userID)
        XCTAssertEqual(phoneStatus, .trusted)
        let record = try await trust.record(forUser: "bob")
        XCTAssertEqual(record?.identityKey, newKey)
        // A key that was not on record (a refused bundle's) supersedes nothing: if a listed device
        // still presented the old key, it would be reported, not silently refused.
        XCTAssertEqual(record?.supersededIdentityKeys, [])
        do {
            _ = try await alice.encrypt(Array("to the old laptop".utf8), to: bobLaptop)
            XCTFail("the laptop's session under the old key was retired")
        } catch {
            XCTAssertEqual(error, .noSession)
        }
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
    private(set) var texts: [String] = []
    private(set) var uploads: [[UInt8]] = []
    private(set) var groupTexts: [(GroupID, String)] = []
    private(set) var acknowledged: [String] = []

    func send(_ text: String) throws { texts.append(text) }

    func send(_ envelope: MessageEnvelope) throws { texts.append(envelope.encodedText()) }

    func sendToGroup(_ text: String, group: GroupID) throws { groupTexts.append((group, text)) }

    func uploadPreKeys(_ bytes: [UInt8]) throws { uploads.append(bytes) }

    func acknowledge(_ envelopeID: String) throws { acknowledged.append(envelopeID) }
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
