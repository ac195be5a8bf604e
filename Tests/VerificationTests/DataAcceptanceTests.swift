import Foundation
import SessionKit
import Verification
import XCTest

/// The `Data` forms an iOS app uses, each giving the same result as the `[UInt8]` form.
final class DataAcceptanceTests: XCTestCase {
    func testAFlowHeldInDataGivesTheSameResults() async throws {
        let bobIdentity = try IdentityKeyPair()
        let bobAddress = try ProtocolAddress(userID: "bob", deviceID: 1)
        let aliceAddress = try ProtocolAddress(userID: "alice", deviceID: 1)
        let bob = SessionManager(store: InMemoryProtocolStore(identity: bobIdentity), trust: InMemoryTrustStore(), localAddress: bobAddress)
        let alice = SessionManager(store: InMemoryProtocolStore(identity: try IdentityKeyPair()), trust: InMemoryTrustStore(),
                                   localAddress: aliceAddress)

        // Keys, uploads and bundles as Data.
        let keyData = bobIdentity.publicKey.dataRepresentation
        XCTAssertEqual(try Ed25519.PublicKey(rawRepresentation: keyData), bobIdentity.publicKey)
        XCTAssertThrowsError(try Ed25519.PublicKey(rawRepresentation: keyData.dropLast()))
        let uploadData = Data(try await bob.maintainPreKeys().serialized)
        let upload = try PreKeyUpload(serialized: uploadData)
        let bundle = try XCTUnwrap(upload.bundle(oneTimePreKey: upload.oneTimePreKeys.first))
        try await alice.processBundle(try PreKeyBundle(serialized: Data(bundle.serialized)), for: bobAddress)

        // Messages as Data, and an envelope read from Data.
        let message = try await alice.encrypt(Data("one".utf8), to: bobAddress)
        let first = try await bob.decrypt(Data(message), from: aliceAddress)
        XCTAssertEqual(first.plaintextData, Data("one".utf8))
        let envelope = try await bob.encryptEnvelope(Data("two".utf8), to: aliceAddress)
        let received = try await alice.receive(try MessageEnvelope(jsonData: envelope.encodedJSON()))
        XCTAssertEqual(received.plaintext, Array("two".utf8))
        let team = try GroupID(data: Data([0x01, 0x02]))
        XCTAssertEqual(team, try GroupID(rawRepresentation: [0x01, 0x02]))

        // A scanned QR code as Data.
        let code = Data(try QRPayload(uid: "bob", identityKey: bobIdentity.publicKey).encoded)
        XCTAssertEqual(try QRPayload(decoding: code).identityKey, bobIdentity.publicKey)
        XCTAssertThrowsError(try QRPayload(decoding: Data())) { XCTAssertEqual($0 as? VerificationError, .invalidPayload) }
    }
}
