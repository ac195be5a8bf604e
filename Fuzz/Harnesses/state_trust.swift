// Harness `state_trust`: loading persisted trust records (`TrustSnapshot`, kind 0x06).
//
// Input: a mode byte. Even: the rest is the whole blob. Odd: the next byte is the version and
// the rest the body, wrapped by the harness in a valid envelope. Invariants: failures are
// `invalidPayload` or `unsupportedVersion` only; a loaded version-2 snapshot serializes back to
// the same bytes (the format is canonical: records sorted and unique), a version-1 snapshot
// (per device, folded per user) serializes as version 2 and reloads equal; every record's
// previous key is present exactly when it is unverified, its keys are 32 bytes (Ed25519 public
// keys), its devices and superseded keys are within their limits and distinct, and no
// superseded key is the current one.
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
        if blob[5] == TrustSnapshot.formatVersion {
            invariant(snapshot.serialized == blob, "loaded snapshot does not serialize to its bytes")
        }
        for (user, record) in snapshot.records {
            invariant((1 ... 255).contains(user.utf8.count), "a user id of \(user.utf8.count) bytes")
            invariant((record.previousIdentityKey != nil) == (record.status == .unverified), "previous key and status disagree")
            invariant(record.identityKey.rawRepresentation.count == 32, "identity key of \(record.identityKey.rawRepresentation.count) bytes")
            invariant(record.previousIdentityKey != record.identityKey, "previous key equals the current one")
            invariant(record.devices.count <= TrustRecord.maximumDeviceCount, "\(record.devices.count) devices")
            invariant(Set(record.devices).count == record.devices.count, "a device listed twice")
            invariant(record.supersededIdentityKeys.count <= TrustRecord.maximumSupersededKeyCount, "too many superseded keys")
            invariant(Set(record.supersededIdentityKeys).count == record.supersededIdentityKeys.count, "a superseded key twice")
            invariant(!record.supersededIdentityKeys.contains(record.identityKey), "the current key is superseded")
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
        func user(_ uid: String) -> TrustUserID { must { try TrustUserID(uid) } }
        // "é" and "e\u{301}" are equal as Swift `String`s but distinct users (SPEC §1).
        let records: [TrustUserID: TrustRecord] = [
            user("alice"): TrustRecord(identityKey: key, status: .verified, previousIdentityKey: nil, devices: [1, 2]),
            user("bob"): TrustRecord(
                identityKey: identityKey(2), status: .unverified, previousIdentityKey: key, devices: [1],
                supersededIdentityKeys: [identityKey(3)]),
            user("é"): TrustRecord(identityKey: identityKey(7), status: .trusted, previousIdentityKey: nil, devices: [0]),
            user("e\u{301}"): TrustRecord(identityKey: identityKey(8), status: .trusted, previousIdentityKey: nil),
        ]
        var seeds: [[UInt8]] = []
        for blob in [TrustSnapshot(records: [:]).serialized, TrustSnapshot(records: records).serialized] {
            seeds.append([0] + blob)
            seeds.append([1, blob[5]] + blob[6 ..< (blob.count - 16)])
        }
        // A version-1 body (per device): bob.1 and bob.2 with two keys, carol.3 verified.
        func variable(_ bytes: [UInt8]) -> [UInt8] { u32(UInt32(bytes.count)) + bytes }
        let version1 = u32(3)
            + variable(Array("bob".utf8)) + u32(1) + [1] + variable(key.rawRepresentation)
            + variable(Array("bob".utf8)) + u32(2) + [0] + variable(identityKey(2).rawRepresentation) + variable(key.rawRepresentation)
            + variable(Array("carol".utf8)) + u32(3) + [2] + variable(identityKey(4).rawRepresentation)
        seeds.append([1, 1] + version1)
        return seeds
    }
}
