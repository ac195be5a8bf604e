@testable import BenchmarkCases
import XCTest

/// The naive sender keys of both references reproduce SPEC §5's vectors (the tests without
/// error events: the benchmarks only take the happy path).
final class ReferenceSenderKeyVectorTests: XCTestCase {
    func testFloorSenderKeysMatchTheVectors() throws { try check(SodiumBackend.self) }

    func testSwiftCryptoSenderKeysMatchTheVectors() throws { try check(SwiftCryptoBackend.self) }

    private func check<B: ReferenceBackend>(_ backend: B.Type) throws {
        var checked = 0
        for test in try VectorFiles.tests("sender_key.json") {
            let id = try test.int("id")
            guard let events = test["events"] as? [[String: Any]], !events.contains(where: \.hasError) else { continue }
            var sender = try ReferenceSenderChain<B>(chainKey: test.hex("chain_key"), signingSeed: test.hex("signing_seed"))
            sender.advance(to: UInt64(try test.int("iteration")))
            XCTAssertEqual(sender.distribution, try test.hex("distribution"), "test \(id) distribution")
            var receiver = ReferenceSenderKeyReceiver<B>()
            try receiver.process(distribution: sender.distribution)
            var sent: [[UInt8]] = []
            for event in events {
                switch try event.string("op") {
                case "send":
                    let message = try sender.encrypt(try event.hex("plaintext"))
                    XCTAssertEqual(message, try event.hex("message"), "test \(id) send \(sent.count)")
                    sent.append(message)
                case "recv":
                    let message = try event.optionalHex("message") ?? sent[try event.int("send")]
                    XCTAssertEqual(try receiver.decrypt(message), try event.hex("plaintext"), "test \(id) recv")
                default:
                    XCTFail("test \(id): unknown op")
                }
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 0)
    }
}
