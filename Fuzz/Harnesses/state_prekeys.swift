// Harness `state_prekeys`: loading persisted `LocalPreKeys` (kind 0x04, version 3: signed
// prekeys with their `kem` bit, last-resort KEM prekeys and the number of EK_A replay records
// held under them, one-time prekeys, one-time KEM prekeys; version 2, whose entries hold the
// records themselves, through `LocalPreKeys.upgrading(serialized:)`).
//
// Input as `loadState` reads it. Invariants: failures are `invalidPayload` or
// `unsupportedVersion` only; loaded prekeys serialize back to the same bytes (the format is
// canonical); ids are distinct within each series and every key is found by its id (one-time
// prekeys; one-time and last-resort KEM prekeys, with their kind; current and previous signed
// prekeys); a signed prekey carries a last-resort KEM prekey exactly when it is signed with
// `kem` = 1; descriptions show no private key; removing a one-time prekey removes exactly that
// one; applying a consumption (one-time prekey, one-time KEM prekey, EK_A under the current
// signed prekey, and EK_A alone under the most recently retired one) removes exactly those and
// counts one more record when the signed prekey holds fewer records than the cap
// (`ProtocolLimits.maximumRecordedBaseKeys` by default; also with the cap at its count and one
// above), and otherwise throws `unknownPreKey` (a full replay record refuses new sessions: the
// count is a u32 in the blob, and a library older than the cap or a version-2 blob may have
// counted more) and changes nothing; one naming a key not held throws `unknownPreKey` and
// changes nothing. A version-2 blob that `upgrading` loads
// hands out records (strictly ascending per signed prekey, under signed prekeys held) whose
// number per signed prekey is the count the version-3 blob it serializes to holds.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let newBaseKey = must { try X25519.PrivateKey(rawRepresentation: fixedBytes(32, seed: 0xEEA)).publicKey }

    static func run(_ bytes: [UInt8]) {
        checkUpgrade(bytes)
        guard let (keys, blob) = loadState(bytes, kind: 0x04, load: { (blob: [UInt8]) throws(SessionError) in try LocalPreKeys(serialized: blob) },
                                           serialize: { (keys: LocalPreKeys) in keys.serialized() }) else { return }
        let ids = keys.oneTimePreKeys.map(\.id)
        invariant(Set(ids).count == ids.count, "repeated one-time prekey ids")
        invariant(keys.oneTimePreKeyCount == ids.count, "count disagrees")
        for key in keys.oneTimePreKeys.prefix(16) {
            invariant(keys.oneTimePreKey(id: key.id)?.publicKey == key.publicKey, "one-time prekey \(key.id) not found by id")
        }
        let entries = keys.signedPreKeyEntries
        invariant(Set(entries.map(\.key.id)).count == entries.count, "repeated signed prekey ids")
        invariant(entries.allSatisfy { $0.key.id != 0 } && ids.allSatisfy { $0 != 0 }, "an id 0")
        let lastResort = entries.compactMap(\.lastResortKEMPreKey)
        let kemIDs = keys.oneTimeKEMPreKeys.map(\.id) + lastResort.map(\.id)
        invariant(Set(kemIDs).count == kemIDs.count && !kemIDs.contains(0), "repeated or zero KEM prekey ids")
        for entry in entries {
            invariant(keys.signedPreKey(id: entry.key.id)?.publicKey == entry.key.publicKey, "signed prekey \(entry.key.id) not found by id")
            invariant(entry.key.signsKEMPreKeys == (entry.lastResortKEMPreKey != nil), "kem bit and last-resort KEM prekey disagree")
            invariant(entry.lastResortKEMPreKey.map { $0.kind == .lastResort } ?? true, "a last-resort KEM prekey of another kind")
        }
        invariant(keys.currentSignedPreKey.retiredAt == nil && keys.previousSignedPreKeys.allSatisfy { $0.retiredAt != nil },
                  "retirement dates")
        for key in (keys.oneTimeKEMPreKeys.prefix(8) + lastResort) {
            invariant(keys.kemPreKey(id: key.id)?.publicKey == key.publicKey && keys.kemPreKey(id: key.id)?.kind == key.kind,
                      "KEM prekey \(key.id) not found by id")
        }
        invariant(keys.oneTimeKEMPreKeys.allSatisfy { $0.kind == .oneTime }, "a one-time KEM prekey of another kind")
        var secrets = keys.oneTimePreKeys.prefix(4).map { Hex.encode($0.privateKey.rawRepresentation) }
        secrets += entries.prefix(4).map { Hex.encode($0.key.privateKey.rawRepresentation) }
        for secret in secrets {
            invariant(!keys.description.contains(secret) && !keys.debugDescription.contains(secret), "description shows a private key")
        }
        if let first = ids.first {
            var copy = keys
            invariant(copy.removeOneTimePreKey(id: first)?.id == first, "removal returned another key")
            invariant(copy.oneTimePreKey(id: first) == nil && copy.oneTimePreKeyCount == ids.count - 1, "removal did not remove exactly one")
        }
        // Applying what an X3DH used: accepted exactly while the signed prekey's replay record
        // has room under the cap (the default one, then one equal to its count, then one above).
        let current = keys.currentSignedPreKey.key.id
        let kemID = keys.oneTimeKEMPreKeys.first?.id
        let consumption = PreKeyConsumption(signedPreKeyID: current, baseKey: newBaseKey, oneTimePreKeyID: ids.first,
                                            oneTimeKEMPreKeyID: kemID)
        let held = keys.recordedBaseKeyCount(signedPreKeyID: current)
        invariant(held == keys.currentSignedPreKey.recordedBaseKeyCount, "the current signed prekey's count")
        for cap in [ProtocolLimits.maximumRecordedBaseKeys, max(held, 1), held + 1] {
            var applied = keys
            do {
                try applied.apply(consumption, maximumRecordedBaseKeys: cap)
                invariant(held < cap, "a consumption was applied to a full replay record (\(held) of \(cap))")
                invariant(applied.recordedBaseKeyCount(signedPreKeyID: current) == held + 1, "EK_A not counted")
                invariant(applied.oneTimePreKeyCount == max(0, ids.count - 1), "one-time prekeys after apply")
                invariant(applied.oneTimeKEMPreKeys.count == max(0, keys.oneTimeKEMPreKeys.count - 1), "one-time KEM prekeys after apply")
                if let first = ids.first { invariant(applied.oneTimePreKey(id: first) == nil, "the one-time prekey is still held") }
                if let kemID { invariant(applied.kemPreKey(id: kemID) == nil, "the one-time KEM prekey is still held") }
            } catch {
                invariant(held >= cap, "applying a consumption of held keys threw \(error) (\(held) records of \(cap))")
                invariant(error == .unknownPreKey, "a full replay record: apply threw \(error)")
                invariant(applied.serialized() == blob, "a refused apply changed the prekeys")
            }
        }
        // EK_A alone under a retired signed prekey (its grace period).
        if let retired = keys.previousSignedPreKeys.first {
            var applied = keys
            let count = retired.recordedBaseKeyCount
            do {
                try applied.apply(PreKeyConsumption(signedPreKeyID: retired.key.id, baseKey: newBaseKey, oneTimePreKeyID: nil,
                                                    oneTimeKEMPreKeyID: nil))
                invariant(count < ProtocolLimits.maximumRecordedBaseKeys, "a consumption was applied to a retired full replay record")
                invariant(applied.recordedBaseKeyCount(signedPreKeyID: retired.key.id) == count + 1, "EK_A not counted (retired)")
                invariant(applied.recordedBaseKeyCount(signedPreKeyID: current) == held, "a retired consumption counted under the current key")
            } catch {
                invariant(count >= ProtocolLimits.maximumRecordedBaseKeys, "applying a consumption to a retired key threw \(error)")
                invariant(error == .unknownPreKey, "a full retired replay record: apply threw \(error)")
                invariant(applied.serialized() == blob, "a refused apply changed the prekeys")
            }
        }
        let unknown = (ids.max() ?? 0) &+ 1
        var unchanged = keys
        do {
            try unchanged.apply(PreKeyConsumption(signedPreKeyID: current, baseKey: newBaseKey, oneTimePreKeyID: unknown == 0 ? 1 : unknown,
                                                  oneTimeKEMPreKeyID: nil))
            if unknown != 0 { fail("applying a consumption of an unknown one-time prekey succeeded") }
        } catch {
            invariant(error == .unknownPreKey, "apply threw \(error)")
            invariant(unchanged.serialized() == blob, "a failed apply changed the prekeys")
        }
    }

    /// A version-2 blob (records inside) loaded with `upgrading(serialized:)`: version 3 loads
    /// through it with no record, and a version-2 blob's records are counted where they were.
    static func checkUpgrade(_ bytes: [UInt8]) {
        // The input as `loadState` reads it.
        var input = FuzzInput(bytes)
        let mode = input.byte()
        let blob = mode & 1 == 0 ? input.rest() : envelope(kind: 0x04, version: input.byte(), body: input.rest())
        guard blob.count > 6 else { return }
        let version = blob[5]
        let upgraded: (preKeys: LocalPreKeys, baseKeyRecords: [BaseKeyRecord])
        do { upgraded = try LocalPreKeys.upgrading(serialized: blob) } catch {
            invariant(error == .invalidPayload || error == .unsupportedVersion, "upgrading threw \(error)")
            return
        }
        let (keys, records) = upgraded
        invariant(version == 2 || records.isEmpty, "a version-3 blob handed out records")
        invariant(Set(records).count == records.count, "a record handed out twice")
        for entry in keys.signedPreKeyEntries {
            invariant(records.filter { $0.signedPreKeyID == entry.key.id }.count == entry.recordedBaseKeyCount || version == 3,
                      "the count of signed prekey \(entry.key.id) is not its number of records")
        }
        invariant(records.allSatisfy { keys.signedPreKey(id: $0.signedPreKeyID) != nil }, "a record under a signed prekey not held")
        let upgradedBlob = keys.serialized()
        let reloaded: LocalPreKeys
        do { reloaded = try LocalPreKeys(serialized: upgradedBlob) } catch { fail("an upgraded blob does not load: \(error)") }
        invariant(reloaded.serialized() == upgradedBlob, "an upgraded blob does not load back the same")
    }

    static func seeds() -> [[UInt8]] {
        must("seed prekeys") {
            let random = CountingRandomSource(seed: 7)
            let kem = StandInKEM()
            let identity = try IdentityKeyPair(using: random)
            let start = Timestamp(secondsSince1970: 1_700_000_000)
            let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 3, oneTimePreKeyLowWaterMark: 1)
            var keys = try LocalPreKeys(identity: identity, now: start, policy: policy, random: random)
            var blobs = [keys.serialized()]
            _ = try keys.rotateSignedPreKey(identity: identity, now: start.adding(seconds: 86_400 * 8), random: random)
            _ = keys.removeOneTimePreKey(id: 2)
            blobs.append(keys.serialized())
            var hybrid = try LocalPreKeys(identity: identity, now: start, policy: policy, kem: kem, random: random)
            blobs.append(hybrid.serialized())
            // Replay records (two, so that their order matters), a rotation, a consumed KEM prekey.
            for seed in UInt64(1) ... 2 {
                let ek = try X25519.PrivateKey(rawRepresentation: fixedBytes(32, seed: seed)).publicKey
                try hybrid.apply(PreKeyConsumption(signedPreKeyID: hybrid.currentSignedPreKey.key.id, baseKey: ek,
                                                   oneTimePreKeyID: nil, oneTimeKEMPreKeyID: hybrid.oneTimeKEMPreKeys.first?.id))
            }
            _ = try hybrid.maintain(identity: identity, now: start.adding(seconds: 86_400 * 8), policy: policy, kem: kem, random: random)
            blobs.append(hybrid.serialized())
            // A version-2 body: version 3's with no record counted reads the same as version 2.
            let noRecords = blobs[1]
            var seeds = stateSeeds(blobs) + [[1, 2] + noRecords[6 ..< (noRecords.count - 16)]]
            // The current signed prekey's replay record full (the cap), one below and far above
            // it: its count (u32) follows its entry, which starts after the three next-id
            // counters (a classic entry: id, key, signature, kem byte, createdAt).
            let countOffset = 12 + 4 + 32 + 64 + 1 + 8
            for count in [UInt32(ProtocolLimits.maximumRecordedBaseKeys), UInt32(ProtocolLimits.maximumRecordedBaseKeys - 1), .max] {
                var body = Array(noRecords[6 ..< (noRecords.count - 16)])
                body.replaceSubrange(countOffset ..< countOffset + 4, with: u32(count))
                seeds.append([1, 3] + body)
            }
            return seeds
        }
    }
}
