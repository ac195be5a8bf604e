// Harness `state_trust`: loading persisted trust records (`TrustSnapshot`, kind 0x06).
//
// Input: a mode byte. Even: the rest is the whole blob. Odd: the next byte is the version and
// the rest the body, wrapped by the harness in a valid envelope. Invariants: failures are
// `invalidPayload` or `unsupportedVersion` only; a loaded snapshot serializes back to the same
// bytes (the format is canonical: records sorted and unique), every record's previous key is
// present exactly when it is unverified, and its keys are 32 bytes (Ed25519 public keys).
@_spi(Testing) import SessionKit
@_spi(Testing) import Verification
import SignalPrimitives

enum Harness {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        let blob = mode & 1 == 0 ? input.rest() : envelope(kind: 0x06, version: input.byte(), body: input.rest())
        let snapshot: TrustSnapshot
        do {
            snapshot = try TrustSnapshot(serialized: blob)
        } catch {
            invariant(error == .invalidPayload || error == .unsupportedVersion, "load threw \(error)")
            return
        }
        invariant(snapshot.serialized == blob, "loaded snapshot does not serialize to its bytes")
        for (address, record) in snapshot.records {
            invariant((1 ... 255).contains(address.userIDBytes.count), "a user id of \(address.userIDBytes.count) bytes")
            invariant((record.previousIdentityKey != nil) == (record.status == .unverified), "previous key and status disagree")
            invariant(record.identityKey.rawRepresentation.count == 32, "identity key of \(record.identityKey.rawRepresentation.count) bytes")
            invariant(record.previousIdentityKey != record.identityKey, "previous key equals the current one")
        }
        do {
            let again = try TrustSnapshot(serialized: snapshot.serialized)
            invariant(again == snapshot, "reloaded snapshot differs")
        } catch {
            fail("a snapshot the library wrote does not load: \(error)")
        }
    }

    static func seeds() -> [[UInt8]] {
        func identityKey(_ seed: UInt64) -> Ed25519.PublicKey { must { try Ed25519.PublicKey(rawRepresentation: fixedBytes(32, seed: seed)) } }
        let key = identityKey(1)
        func address(_ uid: String, _ device: UInt32) -> ProtocolAddress { must { try ProtocolAddress(userID: uid, deviceID: device) } }
        // "é" and "e\u{301}" are equal as Swift `String`s but distinct addresses (SPEC §1).
        let records: [ProtocolAddress: TrustRecord] = [
            address("alice", 1): TrustRecord(identityKey: key, status: .trusted, previousIdentityKey: nil),
            address("alice", 2): TrustRecord(identityKey: key, status: .verified, previousIdentityKey: nil),
            address("bob", 1): TrustRecord(identityKey: identityKey(2), status: .unverified, previousIdentityKey: key),
            address("é", 0): TrustRecord(identityKey: identityKey(7), status: .trusted, previousIdentityKey: nil),
            address("e\u{301}", 0): TrustRecord(identityKey: identityKey(8), status: .trusted, previousIdentityKey: nil),
        ]
        var seeds: [[UInt8]] = []
        for blob in [TrustSnapshot(records: [:]).serialized, TrustSnapshot(records: records).serialized] {
            seeds.append([0] + blob)
            seeds.append([1, blob[5]] + blob[6 ..< (blob.count - 16)])
        }
        return seeds
    }
}
