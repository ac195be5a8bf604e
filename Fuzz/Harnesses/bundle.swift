// Harness `bundle`: prekey bundles (SPEC §3) and prekey uploads: `PreKeyBundle(serialized:)`,
// `X3DH.checkBundle`, an initiator starting from the bundle (`SessionState(initiatingWith:…)`),
// and `PreKeyUpload(serialized:)`.
//
// Input: a mode byte (mod 4), then:
//   0: raw bundle bytes;
//   1: bundle parts that the harness encodes and signs itself from SPEC §3 (so the fuzzer gets
//      past the signatures to the key checks and the initiator): a control byte (bit 0 OPK,
//      bit 1 KEM prekey, bit 2 sign the SPK with the wrong `kem` bit, bit 3 corrupt kem_sig,
//      bit 4 identity seed from the input, bit 5 `ek` from a stand-in KEM seed, else raw
//      bytes padded with zeros, bit 6 corrupt spk_sig, bit 7 a registration id), [seed 32],
//      spk_id, SPK, [opk_id, OPK], [kem_id, seed 64 or a chunk of `ek` bytes], [u32 id];
//   2: raw `PreKeyUpload` bytes;
//   3: upload parts that the harness encodes (the library's layout) so that they decode.
//
// Invariants (bundles): `PreKeyBundle(serialized:)` fails exactly as the reference decoder
// written from SPEC §3 says (empty `invalidPayload`; first byte other than 0x26
// `unsupportedVersion`; a length other than 134 / +36 with flags bit 0 / +1252 with flags bit
// 1 / +4 with flags bit 2, a flag bit outside 0–2, or a registration id (SPEC §9) of 0 or above
// 2^31 − 1, `invalidPayload`); a decoded bundle re-encodes to the same bytes
// and its fields are the bytes at their offsets; `X3DH.checkBundle` fails exactly as the
// reference check says (spk_sig over "SessionKit SPK v2" || 0x05 || SPK || u8(flags bit 1), then
// kem_sig over "SessionKit KEM v2" || 0x0B || PQPK: `invalidSignature`; then SPK and OPK
// canonical, PQPK FIPS 203 well-formed: `invalidKey`) and returns PQPK; an initiator without a
// KEM refuses a bundle with a KEM prekey (`kemUnavailable`) after those checks, one requiring
// post-quantum sessions refuses a bundle without one (`postQuantumRequired`); otherwise X3DH
// succeeds exactly when IK_B is a valid point and SPK, OPK are not of small order (else
// `invalidKey`), and the new session's prefix carries the bundle's ids, the KEM ciphertext, and
// AD = IK_A || IK_B || Encode(A) || Encode(B), and the session records the bundle's registration
// id (which no signature covers).
// Invariants (uploads): decoding fails exactly as the reference decoder of the documented
// layout says (`unsupportedVersion` only for a version byte other than 1 after the magic,
// `invalidPayload` for everything else, a registration id out of range included); a decoded
// upload re-encodes to the same bytes;
// `bundle(oneTimePreKey:kemPreKey:)` follows its documented rules, and the bundles it builds
// round-trip through `PreKeyBundle(serialized:)`.
@_spi(Testing) import SessionKit
import SignalPrimitives

enum Harness {
    static let alice = must { try IdentityKeyPair(seed: fixedBytes(32, seed: 0xA11CE)) }
    static let fixedIdentity = must { try Ed25519.PrivateKey(seed: fixedBytes(32, seed: 0xB0B)) }
    /// A private key to test DH outputs against small-order points (any clamped scalar gives 0).
    static let probe = must { try X25519.PrivateKey(rawRepresentation: fixedBytes(32, seed: 0x9B0BE)) }
    static let requirePQ = must { try SessionConfiguration(requirePostQuantum: true) }
    static let spkLabel = Array("SessionKit SPK v2".utf8)
    static let kemLabel = Array("SessionKit KEM v2".utf8)

    // MARK: Reference (SPEC §3)

    struct ReferenceBundle {
        let identityKey: [UInt8]
        let spkID: UInt32
        let spk: [UInt8]
        let spkSignature: [UInt8]
        let flags: UInt8
        let opk: (id: UInt32, key: [UInt8])?
        let kem: (id: UInt32, key: [UInt8], signature: [UInt8])?
        let registrationID: UInt32?
    }

    static func referenceDecode(_ bytes: [UInt8]) -> Result<ReferenceBundle, SessionError> {
        guard let type = bytes.first else { return .failure(.invalidPayload) }
        guard type == 0x26 else { return .failure(.unsupportedVersion) }
        guard bytes.count >= 134 else { return .failure(.invalidPayload) }
        let flags = bytes[133]
        guard flags & 0xF8 == 0 else { return .failure(.invalidPayload) }
        let length = 134 + (flags & 1 != 0 ? 36 : 0) + (flags & 2 != 0 ? 4 + 1184 + 64 : 0) + (flags & 4 != 0 ? 4 : 0)
        guard bytes.count == length else { return .failure(.invalidPayload) }
        var registrationID: UInt32?
        if flags & 4 != 0 {
            let id = readU32(bytes[(length - 4) ..< length])
            guard id >= 1, id <= 0x7FFF_FFFF else { return .failure(.invalidPayload) }
            registrationID = id
        }
        var offset = 134
        var opk: (UInt32, [UInt8])?
        if flags & 1 != 0 {
            opk = (readU32(bytes[offset ..< offset + 4]), Array(bytes[offset + 4 ..< offset + 36]))
            offset += 36
        }
        var kem: (UInt32, [UInt8], [UInt8])?
        if flags & 2 != 0 {
            kem = (readU32(bytes[offset ..< offset + 4]), Array(bytes[offset + 4 ..< offset + 1188]),
                   Array(bytes[offset + 1188 ..< offset + 1252]))
        }
        return .success(ReferenceBundle(identityKey: Array(bytes[1 ..< 33]), spkID: readU32(bytes[33 ..< 37]),
                                        spk: Array(bytes[37 ..< 69]), spkSignature: Array(bytes[69 ..< 133]),
                                        flags: flags, opk: opk, kem: kem, registrationID: registrationID))
    }

    /// FIPS 203's encapsulation-key check: 1184 bytes, every 12-bit coefficient of the first
    /// 1152 bytes below q = 3329.
    static func isWellFormedEK(_ ek: [UInt8]) -> Bool {
        guard ek.count == 1184 else { return false }
        for at in stride(from: 0, to: 1152, by: 3) {
            let c0 = Int(ek[at]) | (Int(ek[at + 1]) & 0x0F) << 8
            let c1 = Int(ek[at + 1]) >> 4 | Int(ek[at + 2]) << 4
            if c0 >= 3329 || c1 >= 3329 { return false }
        }
        return true
    }

    static func verify(_ key: [UInt8], _ signature: [UInt8], _ message: [UInt8]) -> Bool {
        guard let identity = try? Ed25519.PublicKey(rawRepresentation: key) else { return false }
        return identity.isValidSignature(signature, for: message)
    }

    /// SPEC §3's initiator checks of a bundle, in order.
    static func referenceCheck(_ bundle: ReferenceBundle) -> SessionError? {
        let kemBit: UInt8 = bundle.flags & 2 != 0 ? 1 : 0
        guard verify(bundle.identityKey, bundle.spkSignature, spkLabel + [0x05] + bundle.spk + [kemBit]) else { return .invalidSignature }
        if let kem = bundle.kem, !verify(bundle.identityKey, kem.signature, kemLabel + [0x0B] + kem.key) { return .invalidSignature }
        guard isCanonicalX25519(bundle.spk[...]), bundle.opk.map({ isCanonicalX25519($0.key[...]) }) ?? true else { return .invalidKey }
        if let kem = bundle.kem, !isWellFormedEK(kem.key) { return .invalidKey }
        return nil
    }

    /// Whether X25519 with `key` gives the all-zero output (a point of small order).
    static func isSmallOrder(_ key: [UInt8]) -> Bool {
        guard let point = try? X25519.PublicKey(rawRepresentation: key) else { return true }
        return (try? probe.sharedSecret(with: point)) == nil
    }

    /// What SPEC §3's initiator does after the bundle's checks passed: X3DH converts IK_B and
    /// computes DH1…DH4 (`invalidKey` for an invalid IK_B point or an all-zero DH).
    static func referenceInitiation(_ bundle: ReferenceBundle) -> SessionError? {
        guard let identity = try? Ed25519.PublicKey(rawRepresentation: bundle.identityKey), identity.isValidPoint else { return .invalidKey }
        if isSmallOrder(bundle.spk) { return .invalidKey }
        if let opk = bundle.opk, isSmallOrder(opk.key) { return .invalidKey }
        return nil
    }

    // MARK: Bundles

    static func checkBundle(_ bytes: [UInt8]) {
        let reference = referenceDecode(bytes)
        let bundle: PreKeyBundle
        do {
            bundle = try PreKeyBundle(serialized: bytes)
        } catch {
            guard case let .failure(expected) = reference else { fail("decoding threw \(error), SPEC §3 decodes it") }
            invariant(error == expected, "decoding threw \(error), SPEC §3 says \(expected)")
            return
        }
        guard case let .success(parts) = reference else { fail("decoded a bundle SPEC §3 rejects: \(reference)") }
        invariant(bundle.serialized == bytes, "bundle does not re-encode to its bytes")
        invariant(bundle.identityKey.rawRepresentation == parts.identityKey, "IK_B")
        invariant(bundle.signedPreKeyID == parts.spkID && bundle.signedPreKey.rawRepresentation == parts.spk, "SPK")
        invariant(bundle.signedPreKeySignature == parts.spkSignature, "spk_sig")
        invariant(bundle.oneTimePreKey?.id == parts.opk?.id && bundle.oneTimePreKey?.publicKey.rawRepresentation == parts.opk?.key, "OPK")
        invariant(bundle.kemPreKey?.id == parts.kem?.id && bundle.kemPreKey?.publicKey == parts.kem?.key
                  && bundle.kemPreKey?.signature == parts.kem?.signature, "KEM prekey")
        invariant(bundle.signsKEMPreKeys == (parts.flags & 2 != 0), "signsKEMPreKeys")
        invariant(bundle.registrationID?.rawValue == parts.registrationID, "registration id")
        do {
            let rebuilt = try PreKeyBundle(identityKey: bundle.identityKey, signedPreKeyID: bundle.signedPreKeyID,
                                           signedPreKey: bundle.signedPreKey, signedPreKeySignature: bundle.signedPreKeySignature,
                                           oneTimePreKey: bundle.oneTimePreKey, kemPreKey: bundle.kemPreKey,
                                           registrationID: bundle.registrationID)
            invariant(rebuilt == bundle && rebuilt.serialized == bytes, "a bundle rebuilt from its parts differs")
        } catch {
            fail("rebuilding a decoded bundle threw \(error)")
        }

        let expected = referenceCheck(parts)
        do {
            let key = try X3DH.checkBundle(bundle)
            invariant(expected == nil, "checkBundle accepted a bundle SPEC §3 rejects with \(String(describing: expected))")
            invariant(key?.rawRepresentation == parts.kem?.key, "checkBundle returned another KEM key")
        } catch {
            invariant(error == expected, "checkBundle threw \(error), SPEC §3 says \(String(describing: expected))")
        }
        initiate(bundle, parts, bundleError: expected)
    }

    static func initiate(_ bundle: PreKeyBundle, _ parts: ReferenceBundle, bundleError: SessionError?) {
        let hasKEM = parts.kem != nil
        let afterChecks = bundleError == nil ? referenceInitiation(parts) : bundleError
        // Without a KEM, with the stand-in KEM, and requiring post-quantum sessions.
        let attempts: [(kem: (any KeyEncapsulationMechanism)?, configuration: SessionConfiguration, expected: SessionError?)] = [
            (nil, .default, bundleError ?? (hasKEM ? .kemUnavailable : afterChecks)),
            (StandInKEM(), .default, afterChecks),
            (StandInKEM(), requirePQ, bundleError ?? (hasKEM ? afterChecks : .postQuantumRequired)),
        ]
        for (index, attempt) in attempts.enumerated() where index != 2 || !hasKEM || bundleError != nil {
            let random = CountingRandomSource(seed: 0x1A17)
            do {
                var session = try SessionState(initiatingWith: bundle, identity: alice, localAddress: Addresses.alice,
                                               remoteAddress: Addresses.bob, kem: attempt.kem,
                                               configuration: attempt.configuration, random: random)
                invariant(attempt.expected == nil, "initiation \(index) succeeded, SPEC §3 says \(String(describing: attempt.expected))")
                checkSession(&session, parts)
            } catch {
                invariant(error == attempt.expected, "initiation \(index) threw \(error), SPEC §3 says \(String(describing: attempt.expected))")
            }
        }
    }

    static func checkSession(_ session: inout SessionState, _ parts: ReferenceBundle) {
        guard let prefix = session.pendingPreKeyPrefix else { fail("a new initiator has no prekey prefix") }
        invariant(prefix.identityKey == alice.publicKey, "IK_A")
        invariant(prefix.signedPreKeyID == parts.spkID, "spk_id")
        invariant(prefix.oneTimePreKeyID == parts.opk?.id, "opk_id")
        invariant(prefix.kem?.preKeyID == parts.kem?.id, "kem_id")
        if let kem = parts.kem {
            invariant(prefix.kem?.ciphertext == StandInKEM.encapsulate(to: kem.key, randomness: []).ciphertext, "CT is not the KEM's")
        }
        invariant(session.remoteIdentityKey.rawRepresentation == parts.identityKey, "remote identity")
        invariant(session.remoteRegistrationID?.rawValue == parts.registrationID, "the session records the bundle's registration id")
        invariant(prefix.registrationID == nil, "the prefix carries an id the initiator was not given")
        let ad = alice.publicKey.rawRepresentation + parts.identityKey + encodeAddress(uid: "alice", device: 1) + encodeAddress(uid: "bob", device: 7)
        invariant(session.associatedDataBytes == ad, "AD is not IK_A || IK_B || Encode(A) || Encode(B)")
        do {
            let message = try session.encrypt(Array("hi".utf8))
            let decoded = try PreKeyMessage(serialized: message)
            invariant(decoded.prefix == prefix, "the first message carries another prefix")
            invariant(Array(message[1 ..< 1 + prefix.byteCount]) == prefix.bytes, "P is not after the type byte")
        } catch {
            fail("a new initiator cannot send: \(error)")
        }
    }

    /// A bundle built and signed from SPEC §3 by the harness (mode 1).
    static func signedBundle(_ input: inout FuzzInput) -> [UInt8] {
        let control = input.byte()
        var identity = fixedIdentity
        if control & 0x10 != 0 {
            let seed = input.take(32)
            identity = must { try Ed25519.PrivateKey(seed: seed + [UInt8](repeating: 0, count: 32 - seed.count)) }
        }
        func key32() -> [UInt8] { let key = input.take(32); return key + [UInt8](repeating: 0, count: 32 - key.count) }
        let spkID = input.u32()
        let spk = key32()
        var flags: UInt8 = 0
        var tail: [UInt8] = []
        if control & 1 != 0 {
            flags |= 1
            let id = input.u32()
            tail += u32(id) + key32()
        }
        if control & 2 != 0 {
            flags |= 2
            let id = input.u32()
            var ek: [UInt8]
            if control & 0x20 != 0 {
                let seed = input.take(64)
                ek = StandInKEM.encapsulationKeyBytes(seed: seed + [UInt8](repeating: 0, count: 64 - seed.count))
            } else {
                ek = Array(input.chunk().prefix(1184))
                ek += [UInt8](repeating: 0, count: 1184 - ek.count)
            }
            var signature = identity.signature(for: kemLabel + [0x0B] + ek)
            if control & 0x08 != 0 { signature[Int(id % 64)] ^= 0x20 }
            tail += u32(id) + ek + signature
        }
        if control & 0x80 != 0 {
            flags |= 4
            tail += u32(input.u32())
        }
        let kemBit: UInt8 = (flags & 2 != 0) != (control & 0x04 != 0) ? 1 : 0
        var spkSignature = identity.signature(for: spkLabel + [0x05] + spk + [kemBit])
        if control & 0x40 != 0 { spkSignature[Int(spkID % 64)] ^= 0x01 }
        return [0x26] + identity.publicKey.rawRepresentation + u32(spkID) + spk + spkSignature + [flags] + tail
    }

    // MARK: Uploads (the library's layout, PreKeyUpload's documentation)

    struct ReferenceUpload {
        var identityKey: [UInt8] = []
        var signed: (id: UInt32, key: [UInt8], kem: Bool, signature: [UInt8])?
        var lastResort: (id: UInt32, key: [UInt8], signature: [UInt8])?
        var oneTime: [(id: UInt32, key: [UInt8])] = []
        var oneTimeKEM: [(id: UInt32, key: [UInt8], signature: [UInt8])] = []
        var registrationID: UInt32?
    }

    static func referenceDecodeUpload(_ bytes: [UInt8]) -> Result<ReferenceUpload, SessionError> {
        var offset = 0
        func take(_ count: Int) -> [UInt8]? {
            guard bytes.count - offset >= count else { return nil }
            defer { offset += count }
            return Array(bytes[offset ..< offset + count])
        }
        guard let magic = take(4), magic == Array("SKPU".utf8), let version = take(1) else { return .failure(.invalidPayload) }
        guard version == [1] else { return .failure(.unsupportedVersion) }
        var upload = ReferenceUpload()
        guard let identity = take(32), let flags = take(1)?.first, flags & 0xF8 == 0 else { return .failure(.invalidPayload) }
        upload.identityKey = identity
        if flags & 1 != 0 {
            guard let id = take(4), let key = take(32), let kem = take(1)?.first, kem <= 1, let signature = take(64) else {
                return .failure(.invalidPayload)
            }
            upload.signed = (readU32(id[...]), key, kem == 1, signature)
        }
        if flags & 2 != 0 {
            guard let id = take(4), let key = take(1184), let signature = take(64) else { return .failure(.invalidPayload) }
            upload.lastResort = (readU32(id[...]), key, signature)
        }
        guard (upload.signed?.kem ?? false) == (upload.lastResort != nil) else { return .failure(.invalidPayload) }
        if flags & 4 != 0 {
            guard let id = take(4).map({ readU32($0[...]) }), id >= 1, id <= 0x7FFF_FFFF else { return .failure(.invalidPayload) }
            upload.registrationID = id
        }
        guard let n = take(4).map({ readU32($0[...]) }), n <= 100_000 else { return .failure(.invalidPayload) }
        for _ in 0 ..< n {
            guard let id = take(4), let key = take(32) else { return .failure(.invalidPayload) }
            upload.oneTime.append((readU32(id[...]), key))
        }
        guard let m = take(4).map({ readU32($0[...]) }), m <= 100_000 else { return .failure(.invalidPayload) }
        for _ in 0 ..< m {
            guard let id = take(4), let key = take(1184), let signature = take(64) else { return .failure(.invalidPayload) }
            upload.oneTimeKEM.append((readU32(id[...]), key, signature))
        }
        guard offset == bytes.count else { return .failure(.invalidPayload) }
        return .success(upload)
    }

    static func encodeUpload(_ upload: ReferenceUpload) -> [UInt8] {
        var out = Array("SKPU".utf8) + [1] + upload.identityKey
        out.append((upload.signed == nil ? 0 : 1) | (upload.lastResort == nil ? 0 : 2) | (upload.registrationID == nil ? 0 : 4))
        if let signed = upload.signed { out += u32(signed.id) + signed.key + [signed.kem ? 1 : 0] + signed.signature }
        if let lastResort = upload.lastResort { out += u32(lastResort.id) + lastResort.key + lastResort.signature }
        if let registrationID = upload.registrationID { out += u32(registrationID) }
        out += u32(UInt32(upload.oneTime.count))
        for key in upload.oneTime { out += u32(key.id) + key.key }
        out += u32(UInt32(upload.oneTimeKEM.count))
        for key in upload.oneTimeKEM { out += u32(key.id) + key.key + key.signature }
        return out
    }

    /// Upload parts from the input, encoded so that they decode (mode 3).
    static func builtUpload(_ input: inout FuzzInput) -> [UInt8] {
        let control = input.byte()
        func bytes(_ count: Int) -> [UInt8] { let part = input.take(count); return part + [UInt8](repeating: 0, count: count - part.count) }
        func ek() -> [UInt8] { let part = Array(input.chunk().prefix(1184)); return part + [UInt8](repeating: 0, count: 1184 - part.count) }
        var upload = ReferenceUpload()
        upload.identityKey = bytes(32)
        if control & 1 != 0 {
            upload.signed = (input.u32(), bytes(32), control & 2 != 0, bytes(64))
            if control & 2 != 0 { upload.lastResort = (input.u32(), ek(), bytes(64)) }
        }
        for _ in 0 ..< Int(control >> 2) % 4 { upload.oneTime.append((input.u32(), bytes(32))) }
        for _ in 0 ..< Int(control >> 4) % 3 { upload.oneTimeKEM.append((input.u32(), ek(), bytes(64))) }
        if control & 0x80 != 0 { upload.registrationID = input.u32() }
        return encodeUpload(upload)
    }

    static func checkUpload(_ bytes: [UInt8]) {
        let reference = referenceDecodeUpload(bytes)
        let upload: PreKeyUpload
        do {
            upload = try PreKeyUpload(serialized: bytes)
        } catch {
            guard case let .failure(expected) = reference else { fail("upload decoding threw \(error), the layout decodes it") }
            invariant(error == expected, "upload decoding threw \(error), the layout says \(expected)")
            return
        }
        guard case let .success(parts) = reference else { fail("decoded an upload the layout rejects: \(reference)") }
        invariant(upload.serialized == bytes, "upload does not re-encode to its bytes")
        invariant(upload.identityKey.rawRepresentation == parts.identityKey, "IK")
        invariant(upload.signedPreKey?.id == parts.signed?.id && upload.signedPreKey?.publicKey.rawRepresentation == parts.signed?.key
                  && upload.signedPreKey?.signsKEMPreKeys == parts.signed?.kem && upload.signedPreKey?.signature == parts.signed?.signature,
                  "signed prekey")
        invariant(upload.lastResortKEMPreKey?.id == parts.lastResort?.id && upload.lastResortKEMPreKey?.publicKey == parts.lastResort?.key
                  && upload.lastResortKEMPreKey?.signature == parts.lastResort?.signature, "last-resort KEM prekey")
        invariant(upload.oneTimePreKeys.map(\.id) == parts.oneTime.map(\.id)
                  && upload.oneTimePreKeys.map(\.publicKey.rawRepresentation) == parts.oneTime.map(\.key), "one-time prekeys")
        invariant(upload.oneTimeKEMPreKeys.map(\.id) == parts.oneTimeKEM.map(\.id)
                  && upload.oneTimeKEMPreKeys.map(\.publicKey) == parts.oneTimeKEM.map(\.key)
                  && upload.oneTimeKEMPreKeys.map(\.signature) == parts.oneTimeKEM.map(\.signature), "one-time KEM prekeys")
        invariant(upload.registrationID?.rawValue == parts.registrationID, "registration id")
        invariant(upload.isEmpty == (parts.signed == nil && parts.oneTime.isEmpty && parts.oneTimeKEM.isEmpty), "isEmpty")
        invariant(PreKeyUpload(identityKey: upload.identityKey, signedPreKey: upload.signedPreKey, lastResortKEMPreKey: upload.lastResortKEMPreKey,
                               oneTimePreKeys: upload.oneTimePreKeys, oneTimeKEMPreKeys: upload.oneTimeKEMPreKeys,
                               registrationID: upload.registrationID) == upload,
                  "an upload rebuilt from its parts differs")

        // The bundles a server builds from it (the documented rules).
        let opk = upload.oneTimePreKeys.first
        for kem in [nil, upload.oneTimeKEMPreKeys.first] {
            let bundle = upload.bundle(oneTimePreKey: opk, kemPreKey: kem)
            guard let signed = upload.signedPreKey else {
                invariant(bundle == nil, "a bundle without a signed prekey")
                continue
            }
            let expectedKEM: PreKeyBundle.KEMKey?? = signed.signsKEMPreKeys ? .some(kem ?? upload.lastResortKEMPreKey) : (kem == nil ? .some(nil) : .none)
            guard case let .some(chosen) = expectedKEM, !(signed.signsKEMPreKeys && chosen == nil) else {
                invariant(bundle == nil, "a bundle with a KEM prekey for a signed prekey signed with kem = 0")
                continue
            }
            guard let bundle else { fail("no bundle from an upload with a signed prekey") }
            invariant(bundle.identityKey == upload.identityKey && bundle.signedPreKeyID == signed.id
                      && bundle.signedPreKey == signed.publicKey && bundle.signedPreKeySignature == signed.signature
                      && bundle.oneTimePreKey == opk && bundle.kemPreKey == chosen && bundle.registrationID == upload.registrationID,
                      "the bundle is not the upload's parts")
            do {
                let decoded = try PreKeyBundle(serialized: bundle.serialized)
                invariant(decoded == bundle, "an upload's bundle does not round-trip")
            } catch {
                fail("an upload's bundle does not decode: \(error)")
            }
        }
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        switch input.byte() % 4 {
        case 0: checkBundle(input.rest())
        case 1: checkBundle(signedBundle(&input))
        case 2: checkUpload(input.rest())
        default: checkUpload(builtUpload(&input))
        }
    }

    static func seeds() -> [[UInt8]] {
        let random = CountingRandomSource(seed: 0xB7)
        let kem = StandInKEM()
        return must("seed bundles") {
            let bob = try IdentityKeyPair(seed: fixedBytes(32, seed: 0xB0B))
            let policy = try PreKeyPolicy(oneTimePreKeyBatchSize: 2, oneTimePreKeyLowWaterMark: 1)
            let classic = try LocalPreKeys(identity: bob, now: Timestamp(secondsSince1970: 1_700_000_000), policy: policy, random: random)
            let hybrid = try LocalPreKeys(identity: bob, now: Timestamp(secondsSince1970: 1_700_000_000), policy: policy, kem: kem, random: random)
            var seeds: [[UInt8]] = []
            for keys in [classic, hybrid] {
                let kemIDs: [UInt32?] = keys.oneTimeKEMPreKeys.isEmpty ? [nil] : [nil, keys.oneTimeKEMPreKeys[0].id]
                for opk in [nil, keys.oneTimePreKeys.first?.id] {
                    for kemID in kemIDs {
                        if let bundle = keys.bundle(identityKey: bob.publicKey, oneTimePreKeyID: opk, kemPreKeyID: kemID) {
                            seeds.append([0] + bundle.serialized)
                        }
                    }
                }
                seeds.append([2] + keys.fullUpload(identityKey: bob.publicKey).serialized)
            }
            // Signed by the harness: every control combination with short parts.
            for control: UInt8 in [0x00, 0x01, 0x02, 0x03, 0x22, 0x23, 0x06, 0x0A, 0x40, 0x13, 0x80, 0x83] {
                var parts: [UInt8] = [1, control]
                if control & 0x10 != 0 { parts += fixedBytes(32, seed: 5) }
                parts += [0, 0, 0, 7] + fixedBytes(31, seed: 6) + [0x10]
                if control & 1 != 0 { parts += [0, 0, 0, 3] + fixedBytes(31, seed: 7) + [0x20] }
                if control & 2 != 0 { parts += [0, 0, 0, 9] + (control & 0x20 != 0 ? fixedBytes(64, seed: 8) : chunk([0x01, 0x02, 0x03])) }
                if control & 0x80 != 0 { parts += [0x12, 0x34, 0x56, 0x78] }
                seeds.append(parts)
            }
            // A small-order SPK (u = 0) with valid signatures.
            seeds.append([1, 0x00, 0, 0, 0, 7] + [UInt8](repeating: 0, count: 32))
            seeds.append([3, 0x3F] + fixedBytes(40, seed: 9))
            seeds.append([3, 0x01] + fixedBytes(140, seed: 10))
            seeds.append([2] + Array("SKPU".utf8) + [2])
            seeds.append([0, 0x26])
            seeds.append([0, 0x06])
            seeds.append([0])
            return seeds
        }
    }
}
