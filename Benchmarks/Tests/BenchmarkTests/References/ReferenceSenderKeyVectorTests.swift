@testable import BenchmarkCases
import XCTest

/// The naive sender keys of both references reproduce SPEC §5's vectors: every send, every
/// receive and every error (group and sender binding, the commitment before the AEAD,
/// `messageKeyUnavailable`, further distributions), so the benchmarks compare the library with
/// the same work.
final class ReferenceSenderKeyVectorTests: XCTestCase {
    func testFloorSenderKeysMatchTheVectors() throws { try check(SodiumBackend.self) }

    func testSwiftCryptoSenderKeysMatchTheVectors() throws { try check(SwiftCryptoBackend.self) }

    private func check<B: ReferenceBackend>(_ backend: B.Type) throws {
        var checked = 0, errors = 0
        for test in try VectorFiles.tests(["sender_key.json", "sender_key_2.json"]) {
            let id = try test.int("id")
            let group = try test.hex("group_id")
            let senderAddress = try test.address("sender_address")
            var sender = try ReferenceSenderChain<B>(
                group: group, sender: senderAddress, chainKey: test.hex("chain_key"), signingSeed: test.hex("signing_seed"))
            sender.advance(to: UInt64(try test.int("iteration")))
            XCTAssertEqual(hexString(sender.distribution), hexString(try test.hex("distribution")), "test \(id) distribution")
            // One receiver; its chains are held per (group, sender), as the context gives them.
            var receivers: [[UInt8]: ReferenceSenderKeyReceiver<B>] = [:]
            func key(_ group: [UInt8], _ sender: ReferenceAddress) -> [UInt8] { encodeGroup(group) + sender.encoded }
            func expect(_ error: Error, _ expected: String, _ what: String) {
                if expected != "any" { XCTAssertEqual("\(error)", expected, "test \(id) \(what)") }
                errors += 1
            }
            var main = ReferenceSenderKeyReceiver<B>()
            try main.process(distribution: try test.hex("distribution"), group: group)
            receivers[key(group, senderAddress)] = main
            for (index, entry) in ((test["more_distributions"] as? [[String: Any]]) ?? []).enumerated() {
                let entryGroup = try entry.hex("group_id")
                let from = entry["from_address"] == nil ? senderAddress : try entry.address("from_address")
                var receiver = receivers[key(entryGroup, from)] ?? ReferenceSenderKeyReceiver<B>()
                do {
                    try receiver.process(distribution: try entry.hex("distribution"), group: entryGroup)
                    XCTAssertNil(entry["error"], "test \(id) distribution \(index) accepted")
                    receivers[key(entryGroup, from)] = receiver
                } catch {
                    guard let expected = entry["error"] as? String else {
                        XCTFail("test \(id) distribution \(index): \(error)")
                        continue
                    }
                    expect(error, expected, "distribution \(index)")
                }
            }
            var sent: [[UInt8]] = []
            for event in (test["events"] as? [[String: Any]]) ?? [] {
                switch try event.string("op") {
                case "send":
                    let message = try sender.encrypt(try event.hex("plaintext"))
                    XCTAssertEqual(hexString(message), hexString(try event.hex("message")), "test \(id) send \(sent.count)")
                    sent.append(message)
                case "recv":
                    let message = try event.optionalHex("message") ?? sent[try event.int("send")]
                    let eventGroup = try event.optionalHex("group_id") ?? group
                    let from = event["from_address"] == nil ? senderAddress : try event.address("from_address")
                    var receiver = receivers[key(eventGroup, from)] ?? ReferenceSenderKeyReceiver<B>()
                    do {
                        let plaintext = try receiver.decrypt(message, group: eventGroup, sender: from)
                        XCTAssertNil(event["error"], "test \(id): a message that must fail decrypted")
                        XCTAssertEqual(plaintext, try event.hex("plaintext"), "test \(id) recv")
                        receivers[key(eventGroup, from)] = receiver
                    } catch {
                        guard let expected = event["error"] as? String else {
                            XCTFail("test \(id) recv: \(error)")
                            continue
                        }
                        expect(error, expected, "recv")
                    }
                default:
                    XCTFail("test \(id): unknown op")
                }
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 40)
        XCTAssertGreaterThan(errors, 50)
    }
}
