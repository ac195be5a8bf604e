import BenchmarkHarness
import XCTest

/// XCTest `measure` blocks for every protocol case and contender of the catalog.
/// Run in release: `swift test -c release -Xswiftc -enable-testing --filter ProtocolPerformanceTests`.
final class ProtocolPerformanceTests: XCTestCase {
    func testX3dhInitiateLibrary() throws { try measureCase("x3dh.initiate", .library) }
    func testX3dhInitiateFloor() throws { try measureCase("x3dh.initiate", .floor) }
    func testX3dhInitiateSwiftCrypto() throws { try measureCase("x3dh.initiate", .swiftCrypto) }

    func testX3dhRespondLibrary() throws { try measureCase("x3dh.respond", .library) }
    func testX3dhRespondFloor() throws { try measureCase("x3dh.respond", .floor) }
    func testX3dhRespondSwiftCrypto() throws { try measureCase("x3dh.respond", .swiftCrypto) }

    func testRatchetRoundtrip64BLibrary() throws { try measureCase("ratchet.roundtrip.64B", .library) }
    func testRatchetRoundtrip64BFloor() throws { try measureCase("ratchet.roundtrip.64B", .floor) }
    func testRatchetRoundtrip64BSwiftCrypto() throws { try measureCase("ratchet.roundtrip.64B", .swiftCrypto) }

    func testRatchetDhStep64BLibrary() throws { try measureCase("ratchet.dh-step.64B", .library) }
    func testRatchetDhStep64BFloor() throws { try measureCase("ratchet.dh-step.64B", .floor) }
    func testRatchetDhStep64BSwiftCrypto() throws { try measureCase("ratchet.dh-step.64B", .swiftCrypto) }

    func testSenderkeyEncrypt64BLibrary() throws { try measureCase("senderkey.encrypt.64B", .library) }
    func testSenderkeyEncrypt64BFloor() throws { try measureCase("senderkey.encrypt.64B", .floor) }
    func testSenderkeyEncrypt64BSwiftCrypto() throws { try measureCase("senderkey.encrypt.64B", .swiftCrypto) }

    func testSenderkeyDecrypt64BLibrary() throws { try measureCase("senderkey.decrypt.64B", .library) }
    func testSenderkeyDecrypt64BFloor() throws { try measureCase("senderkey.decrypt.64B", .floor) }
    func testSenderkeyDecrypt64BSwiftCrypto() throws { try measureCase("senderkey.decrypt.64B", .swiftCrypto) }

    func testSessionSaveLibrary() throws { try measureCase("session.save", .library) }
    func testSessionSaveFloor() throws { try measureCase("session.save", .floor) }

    func testSessionLoadLibrary() throws { try measureCase("session.load", .library) }
    func testSessionLoadFloor() throws { try measureCase("session.load", .floor) }

    func testSafetyNumberLibrary() throws { try measureCase("safety-number", .library) }
    func testSafetyNumberFloor() throws { try measureCase("safety-number", .floor) }
    func testSafetyNumberSwiftCrypto() throws { try measureCase("safety-number", .swiftCrypto) }
}
