import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// Device lists the server can check (SPEC §9): the directory's answer to a send request
/// (stale, missing, extra), and the client turning it into archived sessions and fetched
/// bundles.
final class DeviceListTests: XCTestCase {
    private func id(_ value: UInt32) throws -> RegistrationID { try XCTUnwrap(RegistrationID(rawValue: value)) }

    /// Bob's devices 1 (id 11), 2 (id 22), 3 (published no id).
    private func bobsDirectory() throws -> DeviceDirectory {
        var directory = DeviceDirectory()
        directory.register(1, registrationID: try id(11))
        directory.register(2, registrationID: try id(22))
        directory.register(3, registrationID: nil)
        return directory
    }

    // MARK: The directory

    func testAnExactRequestIsAccepted() throws {
        let directory = try bobsDirectory()
        let mismatch = try directory.check([1: try id(11), 2: try id(22), 3: nil], excludingSenderDevice: nil)
        XCTAssertTrue(mismatch.isEmpty)
        XCTAssertEqual(mismatch, DeviceListMismatch())
        XCTAssertEqual(directory.deviceIDs, [1, 2, 3])
    }

    func testStaleMissingAndExtraAreEachFound() throws {
        let directory = try bobsDirectory()
        // 1 named with an old id, 2 not named, 3 named (published no id: never stale), 7 and 5 gone.
        let mismatch = try directory.check([1: try id(10), 3: try id(33), 7: try id(70), 5: nil], excludingSenderDevice: nil)
        XCTAssertEqual(mismatch.stale, [1])
        XCTAssertEqual(mismatch.missing, [2])
        XCTAssertEqual(mismatch.extra, [5, 7], "sorted")
        XCTAssertFalse(mismatch.isEmpty)
        XCTAssertEqual(mismatch.devicesToFetch, [1, 2])
    }

    /// A device named without an id (the sender's session recorded none) that published one is
    /// stale: the sender cannot show its session is with the current installation.
    func testADeviceNamedWithoutAnIDThatPublishedOneIsStale() throws {
        let mismatch = try bobsDirectory().check([1: nil, 2: try id(22), 3: nil], excludingSenderDevice: nil)
        XCTAssertEqual(mismatch, DeviceListMismatch(stale: [1]))
    }

    func testEachKindAloneAndSorted() throws {
        let directory = try bobsDirectory()
        XCTAssertEqual(try directory.check([1: try id(11), 2: try id(23), 3: nil], excludingSenderDevice: nil).stale, [2])
        XCTAssertEqual(try directory.check([2: try id(22)], excludingSenderDevice: nil), DeviceListMismatch(missing: [1, 3]))
        XCTAssertEqual(try directory.check([:], excludingSenderDevice: nil).missing, [1, 2, 3])
        XCTAssertEqual(
            try directory.check([1: try id(11), 2: try id(22), 3: nil, 9: try id(9), 4: try id(4)], excludingSenderDevice: nil),
            DeviceListMismatch(extra: [4, 9]))
    }

    /// The sender's own device is never missing from a request for its own user, and naming it
    /// is a malformed request; for another user the same id is an ordinary device.
    func testTheSendersOwnDeviceIsExcludedForItsOwnUser() throws {
        var ownUser = DeviceDirectory()
        ownUser.register(1, registrationID: try id(11))
        ownUser.register(2, registrationID: try id(22))
        XCTAssertTrue(try ownUser.check([2: try id(22)], excludingSenderDevice: 1).isEmpty, "device 1 sends: not missing")
        XCTAssertEqual(try ownUser.check([:], excludingSenderDevice: 1), DeviceListMismatch(missing: [2]))
        XCTAssertEqual(try ownUser.check([2: try id(22)], excludingSenderDevice: nil), DeviceListMismatch(missing: [1]))
        for named: RegistrationID? in [try id(11), nil] {
            XCTAssertThrowsError(try ownUser.check([1: named, 2: try id(22)], excludingSenderDevice: 1)) {
                XCTAssertEqual($0 as? DeviceListError, .namesSendingDevice(1))
            }
        }
        // A sender device the user does not hold (not registered yet) is simply not missing.
        XCTAssertEqual(try ownUser.check([1: try id(11)], excludingSenderDevice: 3), DeviceListMismatch(missing: [2]))
    }

    func testAnUnknownUserHasEveryNamedDeviceExtra() throws {
        let mismatch = try DeviceDirectory().check([2: try id(2), 1: nil], excludingSenderDevice: nil)
        XCTAssertEqual(mismatch, DeviceListMismatch(extra: [1, 2]))
        XCTAssertTrue(try DeviceDirectory().check([:], excludingSenderDevice: nil).isEmpty)
    }

    func testARequestNamingTooManyDevicesIsRefused() throws {
        let limit = DeviceDirectory.maximumRequestedDevices
        let atLimit = Dictionary(uniqueKeysWithValues: (1 ... UInt32(limit)).map { ($0, RegistrationID?.none) })
        XCTAssertEqual(try DeviceDirectory().check(atLimit, excludingSenderDevice: nil).extra.count, limit)
        var over = atLimit
        over[UInt32(limit) + 1] = .some(nil)
        XCTAssertThrowsError(try DeviceDirectory().check(over, excludingSenderDevice: nil)) {
            XCTAssertEqual($0 as? DeviceListError, .tooManyDevices(limit: limit))
        }
    }

    func testCheckingIsIdempotentAndTheDirectoryFollowsRegistrations() throws {
        var directory = try bobsDirectory()
        let before = directory
        let request: [UInt32: RegistrationID?] = [1: try id(11), 4: try id(44)]
        let first = try directory.check(request, excludingSenderDevice: nil)
        XCTAssertEqual(try directory.check(request, excludingSenderDevice: nil), first)
        XCTAssertEqual(directory, before, "checking changes nothing")
        XCTAssertEqual(first, DeviceListMismatch(missing: [2, 3], extra: [4]))

        directory.register(1, registrationID: try id(12))   // device 1 re-registered
        directory.remove(2)
        directory.remove(2)
        XCTAssertFalse(directory.contains(2))
        XCTAssertTrue(directory.contains(3))
        XCTAssertNil(directory.registrationID(of: 3))
        XCTAssertEqual(directory.registrationID(of: 1), try id(12))
        XCTAssertEqual(try directory.check([1: try id(11), 2: try id(22), 3: nil], excludingSenderDevice: nil),
                       DeviceListMismatch(stale: [1], extra: [2]))
    }

    func testTheDirectoryIsBuiltFromPublishedPreKeys() async throws {
        let server = FakeServer()
        let phone = try await TestDevice("bob", 1, seed: 9101, server: server, publish: false)
        let laptop = try await TestDevice("bob", 2, seed: 9102, server: server, identity: phone.identity, publish: false)
        let directory = DeviceDirectory([
            1: try PublishedPreKeys(registering: try await phone.manager.maintainPreKeys()),
            2: try PublishedPreKeys(registering: try await laptop.manager.maintainPreKeys()),
        ])
        let phoneID = try await phone.manager.localRegistrationID()
        let laptopID = try await laptop.manager.localRegistrationID()
        XCTAssertNotEqual(phoneID, laptopID)
        XCTAssertEqual(directory.registrationID(of: 1), phoneID)
        XCTAssertEqual(directory.registrationID(of: 2), laptopID)
        XCTAssertTrue(try directory.check([1: phoneID, 2: laptopID], excludingSenderDevice: nil).isEmpty)
        XCTAssertEqual(try directory.check([1: laptopID, 2: laptopID], excludingSenderDevice: nil).stale, [1])
    }

    func testTheAnswerIsNormalised() {
        let mismatch = DeviceListMismatch(stale: [3, 1, 3], missing: [5, 1, 2], extra: [2, 9, 9, 3])
        XCTAssertEqual(mismatch.stale, [1, 3])
        XCTAssertEqual(mismatch.missing, [2, 5], "a device is in one list only (stale first)")
        XCTAssertEqual(mismatch.extra, [9])
        XCTAssertEqual(mismatch.devicesToFetch, [1, 2, 3, 5])
        XCTAssertTrue(DeviceListMismatch().isEmpty)
    }

    // MARK: The client

    /// Bob's phone reinstalls (same identity, new registration id): Alice's request is answered
    /// stale; she archives the session, fetches the new bundle through the fan-out, and the
    /// new installation reads the message. Her next request is accepted.
    func testAReRegisteredDeviceIsStaleAndTheClientRecovers() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 9201, server: server)
        let bob = try await TestDevice("bob", 1, seed: 9202, server: server)
        try await alice.startSession(with: bob.address, server: server)
        _ = try await bob.manager.receive(try await alice.manager.encryptEnvelope(utf8("before"), to: bob.address))
        let oldID = try await bob.manager.localRegistrationID()
        var directory = DeviceDirectory()
        directory.register(1, registrationID: await server.registrationID(for: bob.address))

        let request = try await alice.manager.deviceListRequest(forUser: "bob")
        XCTAssertEqual(request, [1: .some(oldID)])
        XCTAssertTrue(try directory.check(request, excludingSenderDevice: nil).isEmpty)

        // Bob reinstalls: a new store with the same identity draws a new id and publishes again.
        let reinstalled = try await TestDevice("bob", 1, seed: 9203, server: server, identity: bob.identity)
        let newID = try await reinstalled.manager.localRegistrationID()
        XCTAssertNotEqual(newID, oldID)
        directory.register(1, registrationID: await server.registrationID(for: bob.address))

        let mismatch = try directory.check(try await alice.manager.deviceListRequest(forUser: "bob"), excludingSenderDevice: nil)
        XCTAssertEqual(mismatch, DeviceListMismatch(stale: [1]))
        let toFetch = try await alice.manager.applyDeviceListMismatch(mismatch, forUser: "bob")
        XCTAssertEqual(toFetch, [1])
        let afterArchive = try await alice.manager.deviceListRequest(forUser: "bob")
        XCTAssertEqual(afterArchive, [:], "no current session with bob.1 any more")
        await assertThrowsAsync(.noSession) { try await alice.manager.encrypt(utf8("lost"), to: bob.address) }

        let outcomes = try await alice.manager.encrypt(
            utf8("after"), toUser: "bob", devices: directory.deviceIDs, fetchingBundles: { await server.bundle(for: $0) })
        XCTAssertEqual(outcomes.map(\.address), [bob.address])
        let envelope = try XCTUnwrap(outcomes.first?.envelope)
        let received = try await reinstalled.manager.receive(envelope)
        XCTAssertEqual(received.plaintext, utf8("after"))
        let atAlice = try await alice.manager.registrationID(of: bob.address)
        XCTAssertEqual(atAlice, newID)
        let finalRequest = try await alice.manager.deviceListRequest(forUser: "bob")
        XCTAssertTrue(try directory.check(finalRequest, excludingSenderDevice: nil).isEmpty)
    }

    /// Missing devices are fetched, extra ones archived (not deleted: the archived session
    /// still decrypts what the device sent before), the local device is never touched, and
    /// applying the same answer twice changes nothing more.
    func testMissingAndExtraDevicesAndApplyingTwice() async throws {
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 9301, server: server)
        let aliceLaptop = try await TestDevice("alice", 2, seed: 9302, server: server, identity: alice.identity)
        let bob = try await TestDevice("bob", 1, seed: 9303, server: server)
        let bobTablet = try await TestDevice("bob", 3, seed: 9304, server: server, identity: bob.identity)
        try await alice.startSession(with: bobTablet.address, server: server)
        try await alice.startSession(with: aliceLaptop.address, server: server)
        let tabletID = try await bobTablet.manager.localRegistrationID()
        let laptopID = try await aliceLaptop.manager.localRegistrationID()
        let ownRequest = try await alice.manager.deviceListRequest(forUser: "alice")
        XCTAssertEqual(ownRequest, [2: .some(laptopID)], "the local device left out")
        // Bob's tablet sent something Alice has not read yet.
        _ = try await bobTablet.manager.receive(try await alice.manager.encryptEnvelope(utf8("hi tablet"), to: bobTablet.address))
        let late = try await bobTablet.manager.encryptEnvelope(utf8("late"), to: alice.address)

        var directory = DeviceDirectory()
        directory.register(1, registrationID: await server.registrationID(for: bob.address))   // only the phone is left
        let mismatch = try directory.check(try await alice.manager.deviceListRequest(forUser: "bob"), excludingSenderDevice: nil)
        XCTAssertEqual(mismatch, DeviceListMismatch(stale: [], missing: [1], extra: [3]))
        let tabletAtAlice = try await alice.manager.registrationID(of: bobTablet.address)
        XCTAssertEqual(tabletAtAlice, tabletID)
        let toFetch = try await alice.manager.applyDeviceListMismatch(mismatch, forUser: "bob")
        XCTAssertEqual(toFetch, [1])
        let once = await alice.snapshot()
        let again = try await alice.manager.applyDeviceListMismatch(mismatch, forUser: "bob")
        XCTAssertEqual(again, [1])
        let twice = await alice.snapshot()
        XCTAssertEqual(once, twice, "applying the same answer again changes nothing")
        await assertThrowsAsync(.noSession) { try await alice.manager.encrypt(utf8("x"), to: bobTablet.address) }
        let lateReceived = try await alice.manager.receive(late)
        XCTAssertEqual(lateReceived.plaintext, utf8("late"), "the archived session still decrypts")

        let outcomes = try await alice.manager.encrypt(
            utf8("hi"), toUser: "bob", devices: directory.deviceIDs, fetchingBundles: { await server.bundle(for: $0) })
        XCTAssertEqual(outcomes.map(\.address), [bob.address])
        let atPhone = try await bob.manager.receive(try XCTUnwrap(outcomes.first?.envelope))
        XCTAssertEqual(atPhone.plaintext, utf8("hi"))
        let finalRequest = try await alice.manager.deviceListRequest(forUser: "bob")
        XCTAssertTrue(try directory.check(finalRequest, excludingSenderDevice: nil).isEmpty)

        // An answer naming the local device (a confused or lying server) leaves it alone.
        let own = try await alice.manager.applyDeviceListMismatch(DeviceListMismatch(stale: [1, 2]), forUser: "alice")
        XCTAssertEqual(own, [2])
        let ownAfter = try await alice.manager.deviceListRequest(forUser: "alice")
        XCTAssertEqual(ownAfter, [:], "the laptop's session archived")
        let localRecord = await alice.base.loadSession(for: alice.address)
        XCTAssertNil(localRecord, "nothing written for the local device")
    }

    /// Archiving keeps the device's post-quantum pin: a server that answers "stale" cannot
    /// downgrade the next session to a classic one.
    func testArchivingKeepsThePostQuantumPin() async throws {
        let kem = try mlkem()
        let server = FakeServer()
        let alice = try await TestDevice("alice", 1, seed: 9401, server: server, kem: kem)
        let bob = try await TestDevice("bob", 1, seed: 9402, server: server, kem: kem)
        try await alice.startSession(with: bob.address, server: server)
        let pinned = try await alice.manager.requiresPostQuantum(for: bob.address)
        XCTAssertTrue(pinned)
        try await alice.manager.applyDeviceListMismatch(DeviceListMismatch(stale: [1]), forUser: "bob")
        let stillPinned = try await alice.manager.requiresPostQuantum(for: bob.address)
        XCTAssertTrue(stillPinned, "the pin stays")
        // A classic bundle under Bob's identity (made by a classic device of his), as a server
        // would hand out for the "new installation".
        let classicDevice = try await TestDevice("bob", 5, seed: 9403, server: server, identity: bob.identity)
        let fetched = await server.bundle(for: classicDevice.address)
        let classic = try XCTUnwrap(fetched)
        XCTAssertNil(classic.kemPreKey)
        await assertThrowsAsync(.postQuantumRequired) { try await alice.manager.processBundle(classic, for: bob.address) }
        // Control: without the pin (a device that never had a post-quantum session with Bob)
        // the same bundle starts a session.
        let carol = try await TestDevice("carol", 1, seed: 9404, server: server, kem: kem)
        try await carol.manager.processBundle(classic, for: bob.address)
    }

    func testBadUserIDsAreRefused() async throws {
        let alice = try await TestDevice("alice", 1, seed: 9501, server: FakeServer())
        await assertThrowsAsync(.invalidAddress) { try await alice.manager.deviceListRequest(forUser: "") }
        await assertThrowsAsync(.invalidAddress) { try await alice.manager.applyDeviceListMismatch(DeviceListMismatch(), forUser: "") }
    }
}
