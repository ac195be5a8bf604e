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

    func testPqxdhInitiateLibrary() throws { try measureCase("pqxdh.initiate", .library) }
    func testPqxdhInitiateFloor() throws { try measureCase("pqxdh.initiate", .floor) }
    func testPqxdhInitiateSwiftCrypto() throws { try measureCase("pqxdh.initiate", .swiftCrypto) }

    func testPqxdhRespondLibrary() throws { try measureCase("pqxdh.respond", .library) }
    func testPqxdhRespondFloor() throws { try measureCase("pqxdh.respond", .floor) }
    func testPqxdhRespondSwiftCrypto() throws { try measureCase("pqxdh.respond", .swiftCrypto) }

    func testMlkem768EncapsulateLibrary() throws { try measureCase("mlkem768.encapsulate", .library) }
    func testMlkem768EncapsulateFloor() throws { try measureCase("mlkem768.encapsulate", .floor) }

    func testMlkem768DecapsulateLibrary() throws { try measureCase("mlkem768.decapsulate", .library) }
    func testMlkem768DecapsulateFloor() throws { try measureCase("mlkem768.decapsulate", .floor) }

    func testRatchetRoundtrip64BLibrary() throws { try measureCase("ratchet.roundtrip.64B", .library) }
    func testRatchetRoundtrip64BFloor() throws { try measureCase("ratchet.roundtrip.64B", .floor) }
    func testRatchetRoundtrip64BSwiftCrypto() throws { try measureCase("ratchet.roundtrip.64B", .swiftCrypto) }

    func testRatchetDhStep64BLibrary() throws { try measureCase("ratchet.dh-step.64B", .library) }
    func testRatchetDhStep64BFloor() throws { try measureCase("ratchet.dh-step.64B", .floor) }
    func testRatchetDhStep64BSwiftCrypto() throws { try measureCase("ratchet.dh-step.64B", .swiftCrypto) }

    func testForgedReject0PreviousLibrary() throws { try measureCase("forged.reject.0-previous", .library) }
    func testForgedReject0PreviousFloor() throws { try measureCase("forged.reject.0-previous", .floor) }
    func testForgedReject0PreviousSwiftCrypto() throws { try measureCase("forged.reject.0-previous", .swiftCrypto) }

    func testForgedReject40PreviousLibrary() throws { try measureCase("forged.reject.40-previous", .library) }
    func testForgedReject40PreviousFloor() throws { try measureCase("forged.reject.40-previous", .floor) }
    func testForgedReject40PreviousSwiftCrypto() throws { try measureCase("forged.reject.40-previous", .swiftCrypto) }

    func testSenderkeyEncrypt64BLibrary() throws { try measureCase("senderkey.encrypt.64B", .library) }
    func testSenderkeyEncrypt64BFloor() throws { try measureCase("senderkey.encrypt.64B", .floor) }
    func testSenderkeyEncrypt64BSwiftCrypto() throws { try measureCase("senderkey.encrypt.64B", .swiftCrypto) }

    func testSenderkeyDecrypt64BLibrary() throws { try measureCase("senderkey.decrypt.64B", .library) }
    func testSenderkeyDecrypt64BFloor() throws { try measureCase("senderkey.decrypt.64B", .floor) }
    func testSenderkeyDecrypt64BSwiftCrypto() throws { try measureCase("senderkey.decrypt.64B", .swiftCrypto) }

    func testSelfencryptionSeal1KiBLibrary() throws { try measureCase("selfencryption.seal.1KiB", .library) }
    func testSelfencryptionSeal1KiBFloor() throws { try measureCase("selfencryption.seal.1KiB", .floor) }

    func testSelfencryptionOpen1KiBLibrary() throws { try measureCase("selfencryption.open.1KiB", .library) }
    func testSelfencryptionOpen1KiBFloor() throws { try measureCase("selfencryption.open.1KiB", .floor) }

    func testSessionSaveLibrary() throws { try measureCase("session.save", .library) }
    func testSessionSaveFloor() throws { try measureCase("session.save", .floor) }

    func testSessionLoadLibrary() throws { try measureCase("session.load", .library) }
    func testSessionLoadFloor() throws { try measureCase("session.load", .floor) }

    func testSafetyNumberLibrary() throws { try measureCase("safety-number", .library) }
    func testSafetyNumberFloor() throws { try measureCase("safety-number", .floor) }
    func testSafetyNumberSwiftCrypto() throws { try measureCase("safety-number", .swiftCrypto) }

    // Attachments (SPEC §10): no swift-crypto column.
    func testAttachmentEncrypt64KiBLibrary() throws { try measureCase("attachment.encrypt.64KiB", .library) }
    func testAttachmentEncrypt64KiBFloor() throws { try measureCase("attachment.encrypt.64KiB", .floor) }
    func testAttachmentDecrypt64KiBLibrary() throws { try measureCase("attachment.decrypt.64KiB", .library) }
    func testAttachmentDecrypt64KiBFloor() throws { try measureCase("attachment.decrypt.64KiB", .floor) }
    func testAttachmentEncrypt64MiBLibrary() throws { try measureCase("attachment.encrypt.64MiB", .library) }
    func testAttachmentEncrypt64MiBFloor() throws { try measureCase("attachment.encrypt.64MiB", .floor) }
    func testAttachmentDecrypt64MiBLibrary() throws { try measureCase("attachment.decrypt.64MiB", .library) }
    func testAttachmentDecrypt64MiBFloor() throws { try measureCase("attachment.decrypt.64MiB", .floor) }
}
