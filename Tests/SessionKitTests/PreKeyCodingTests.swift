import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit

/// The wire forms of `PreKeyBundle` (SPEC §3) and `PreKeyUpload` (the library's layout,
/// documented in PreKeyUpload.swift), written out by hand from the documented layouts; strict
/// decoding; and the upload `SessionManager.maintainPreKeys()` produces, through its encoding.
final class PreKeyCodingTests: XCTestCase {
    private let random = SeededRandomSource(seed: 5000)

    /// A well-formed ML-KEM-768 encapsulation key (every coefficient below q), made without a KEM.
    private func encapsulationKey(_ fill: UInt8) -> [UInt8] {
        Array(repeating: [0x00, 0x0D, 0xD0], count: 384).flatMap { $0 } + [UInt8](repeating: fill, count: 32)
    }

    private struct Parts {
        let identity: IdentityKeyPair
        let signed: SignedPreKey
        let oneTime: OneTimePreKey
        let kemKey: [UInt8]
        let kemSignature: [UInt8]
    }

    private func parts(kem: Bool) throws -> Parts {
        let identity = try IdentityKeyPair(using: random)
        let kemKey = encapsulationKey(0x5A)
        return Parts(identity: identity, signed: try SignedPreKey(id: 0x0102_0304, signedBy: identity, signsKEMPreKeys: kem, using: random),
                     oneTime: try OneTimePreKey(id: 0xA0B0_C0D0, using: random), kemKey: kemKey,
                     kemSignature: identity.privateKey.signature(for: Array("SessionKit KEM v2".utf8) + [0x0B] + kemKey))
    }

    private func bundle(_ parts: Parts, oneTime: Bool, kem: Bool) throws -> PreKeyBundle {
        try PreKeyBundle(
            identityKey: parts.identity.publicKey, signedPreKeyID: parts.signed.id, signedPreKey: parts.signed.publicKey,
            signedPreKeySignature: parts.signed.signature,
            oneTimePreKey: oneTime ? .init(id: parts.oneTime.id, publicKey: parts.oneTime.publicKey) : nil,
            kemPreKey: kem ? try .init(id: 0x0000_0777, publicKey: parts.kemKey, signature: parts.kemSignature) : nil)
    }

    /// `0x26 || IK || u32(spk_id) || SPK || spk_sig || flags || [u32(opk_id) || OPK] || [u32(kem_id) || PQPK || kem_sig]`.
    private func expectedBundleBytes(_ parts: Parts, oneTime: Bool, kem: Bool) -> [UInt8] {
        var out: [UInt8] = [0x26] + parts.identity.publicKey.rawRepresentation + [0x01, 0x02, 0x03, 0x04]
            + parts.signed.publicKey.rawRepresentation + parts.signed.signature + [(oneTime ? 1 : 0) | (kem ? 2 : 0)]
        if oneTime { out += [0xA0, 0xB0, 0xC0, 0xD0] + parts.oneTime.publicKey.rawRepresentation }
        if kem { out += [0, 0, 0x07, 0x77] + parts.kemKey + parts.kemSignature }
        return out
    }

    private func assertBundleFails(_ bytes: [UInt8], _ expected: SessionError, _ why: String,
                                   file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try PreKeyBundle(serialized: bytes), why, file: file, line: line) {
            XCTAssertEqual($0 as? SessionError, expected, why, file: file, line: line)
        }
    }

    // MARK: Bundle

    func testABundleEncodesAsSpecSection3AndDecodesBack() throws {
        for (oneTime, kem) in [(false, false), (true, false), (false, true), (true, true)] {
            let parts = try parts(kem: kem)
            let bundle = try bundle(parts, oneTime: oneTime, kem: kem)
            let bytes = bundle.serialized
            XCTAssertEqual(bytes, expectedBundleBytes(parts, oneTime: oneTime, kem: kem), "opk \(oneTime), kem \(kem)")
            XCTAssertEqual(bytes.count, 134 + (oneTime ? 36 : 0) + (kem ? 4 + 1184 + 64 : 0))
            let decoded = try PreKeyBundle(serialized: bytes)
            XCTAssertEqual(decoded, bundle)
            XCTAssertEqual(decoded.serialized, bytes)
            XCTAssertEqual(decoded.signsKEMPreKeys, kem)
            XCTAssertEqual(try X3DH.checkBundle(decoded)?.rawRepresentation, kem ? parts.kemKey : nil, "a decoded bundle passes the checks")
        }
    }

    func testBundleDecodingChecksTheLayoutStrictly() throws {
        let parts = try parts(kem: true)
        let full = try bundle(parts, oneTime: true, kem: true).serialized
        assertBundleFails([], .invalidPayload, "empty")
        for first: UInt8 in [0x00, 0x01, 0x21, 0x22, 0x25, 0x27, 0xFF] {
            assertBundleFails([first] + full.dropFirst(), .unsupportedVersion, "first byte \(first)")
        }
        assertBundleFails([0x05], .unsupportedVersion, "a lone other byte")
        for length in 1 ..< full.count { assertBundleFails(Array(full.prefix(length)), .invalidPayload, "length \(length)") }
        assertBundleFails(full + [0], .invalidPayload, "a trailing byte")
        let flagsOffset = 133
        for flags: UInt8 in [0x04, 0x07, 0x80] {
            assertBundleFails(replacing(full, at: flagsOffset, with: [flags]), .invalidPayload, "flags \(flags)")
        }
        let classic = try bundle(parts, oneTime: false, kem: false).serialized
        assertBundleFails(replacing(classic, at: flagsOffset, with: [0x01]), .invalidPayload, "flag bit 0 without the one-time prekey")
        assertBundleFails(replacing(classic, at: flagsOffset, with: [0x02]), .invalidPayload, "flag bit 1 without the KEM prekey")
        assertBundleFails(replacing(full, at: flagsOffset, with: [0x01]), .invalidPayload, "the KEM prekey present, its flag clear")
        XCTAssertEqual(try PreKeyBundle(serialized: classic).serialized, classic)
    }

    /// Decoding checks the layout only: signatures and keys are X3DH's checks, in SPEC §3's
    /// order (signatures first).
    func testADecodedBundleIsCheckedBySignaturesThenKeys() throws {
        let parts = try parts(kem: true)
        let full = try bundle(parts, oneTime: true, kem: true).serialized
        let forgedSignature = try PreKeyBundle(serialized: flipped(full, at: 69 + 10))
        XCTAssertThrowsError(try X3DH.checkBundle(forgedSignature)) { XCTAssertEqual($0 as? SessionError, .invalidSignature) }
        let kemSignatureOffset = 134 + 36 + 4 + 1184
        let forgedKEMSignature = try PreKeyBundle(serialized: flipped(full, at: kemSignatureOffset + 3))
        XCTAssertThrowsError(try X3DH.checkBundle(forgedKEMSignature)) { XCTAssertEqual($0 as? SessionError, .invalidSignature) }
        // A non-canonical one-time prekey (bit 255 set) decodes and fails as a key.
        let nonCanonical = try PreKeyBundle(serialized: flipped(full, at: 134 + 4 + 31, bit: 7))
        XCTAssertThrowsError(try X3DH.checkBundle(nonCanonical)) { XCTAssertEqual($0 as? SessionError, .invalidKey) }
        // A correctly signed but malformed ek (its first coefficient q) decodes and fails as a key.
        var malformed = parts.kemKey
        malformed[0] = 0x01
        malformed[1] = 0x0D
        let signedMalformed = parts.identity.privateKey.signature(for: Array("SessionKit KEM v2".utf8) + [0x0B] + malformed)
        let malformedBytes = Array(full.prefix(134 + 36 + 4)) + malformed + signedMalformed
        XCTAssertThrowsError(try X3DH.checkBundle(try PreKeyBundle(serialized: malformedBytes))) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
        // Its signature flipped too: the signature is reported first.
        XCTAssertThrowsError(try X3DH.checkBundle(try PreKeyBundle(serialized: flipped(malformedBytes, at: malformedBytes.count - 1)))) {
            XCTAssertEqual($0 as? SessionError, .invalidSignature)
        }
    }

    func testTheBundleInitializersRefuseWrongSignatureAndKeyLengths() throws {
        let parts = try parts(kem: false)
        for count in [0, 63, 65] {
            XCTAssertThrowsError(try PreKeyBundle(identityKey: parts.identity.publicKey, signedPreKeyID: 1, signedPreKey: parts.signed.publicKey,
                                                  signedPreKeySignature: [UInt8](repeating: 1, count: count), oneTimePreKey: nil)) {
                XCTAssertEqual($0 as? SessionError, .invalidSignature, "\(count) bytes")
            }
        }
        XCTAssertThrowsError(try PreKeyBundle.KEMKey(id: 1, publicKey: Array(parts.kemKey.dropLast()), signature: parts.kemSignature)) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
        XCTAssertThrowsError(try PreKeyBundle.KEMKey(id: 1, publicKey: parts.kemKey, signature: parts.kemSignature + [0])) {
            XCTAssertEqual($0 as? SessionError, .invalidSignature)
        }
    }

    // MARK: Upload

    /// `"SKPU" || u8(1) || IK || flags || [u32(spk_id) || SPK || u8(kem) || spk_sig]
    /// || [u32(kem_id) || PQPK || kem_sig] || u32(n) || n × (u32(opk_id) || OPK) || u32(m) || m × (u32(kem_id) || PQPK || kem_sig)`.
    func testAnUploadEncodesAsDocumentedAndDecodesBack() throws {
        let parts = try parts(kem: true)
        let otherOneTime = try OneTimePreKey(id: 9, using: random)
        let lastResort = try PreKeyBundle.KEMKey(id: 0x0000_0777, publicKey: parts.kemKey, signature: parts.kemSignature)
        let oneTimeKEMKey = encapsulationKey(0x6B)
        let oneTimeKEM = try PreKeyBundle.KEMKey(
            id: 0x0000_0778, publicKey: oneTimeKEMKey,
            signature: parts.identity.privateKey.signature(for: Array("SessionKit KEM v2".utf8) + [0x0B] + oneTimeKEMKey))
        let upload = PreKeyUpload(
            identityKey: parts.identity.publicKey, signedPreKey: PreKeyUpload.SignedKey(parts.signed), lastResortKEMPreKey: lastResort,
            oneTimePreKeys: [.init(id: parts.oneTime.id, publicKey: parts.oneTime.publicKey), .init(id: 9, publicKey: otherOneTime.publicKey)],
            oneTimeKEMPreKeys: [oneTimeKEM])
        var expected = Array("SKPU".utf8) + [0x01] + parts.identity.publicKey.rawRepresentation + [0x03]
        expected += [0x01, 0x02, 0x03, 0x04] + parts.signed.publicKey.rawRepresentation + [0x01] + parts.signed.signature
        expected += [0, 0, 0x07, 0x77] + parts.kemKey + parts.kemSignature
        expected += u32(2) + [0xA0, 0xB0, 0xC0, 0xD0] + parts.oneTime.publicKey.rawRepresentation + u32(9) + otherOneTime.publicKey.rawRepresentation
        expected += u32(1) + [0, 0, 0x07, 0x78] + oneTimeKEMKey + oneTimeKEM.signature
        XCTAssertEqual(upload.serialized, expected)
        let decoded = try PreKeyUpload(serialized: expected)
        XCTAssertEqual(decoded, upload)
        XCTAssertEqual(decoded.serialized, expected)

        // Nothing to upload: no signed prekey and two empty lists.
        let empty = PreKeyUpload(identityKey: parts.identity.publicKey, signedPreKey: nil, oneTimePreKeys: [])
        XCTAssertTrue(empty.isEmpty)
        let emptyBytes = Array("SKPU".utf8) + [0x01] + parts.identity.publicKey.rawRepresentation + [0x00] + u32(0) + u32(0)
        XCTAssertEqual(empty.serialized, emptyBytes)
        XCTAssertEqual(try PreKeyUpload(serialized: emptyBytes), empty)
    }

    func testUploadDecodingIsStrict() throws {
        let parts = try parts(kem: true)
        let lastResort = try PreKeyBundle.KEMKey(id: 0x0000_0777, publicKey: parts.kemKey, signature: parts.kemSignature)
        let upload = PreKeyUpload(identityKey: parts.identity.publicKey, signedPreKey: PreKeyUpload.SignedKey(parts.signed),
                                  lastResortKEMPreKey: lastResort,
                                  oneTimePreKeys: [.init(id: parts.oneTime.id, publicKey: parts.oneTime.publicKey)])
        let bytes = upload.serialized
        func assertFails(_ candidate: [UInt8], _ expected: SessionError, _ why: String) {
            XCTAssertThrowsError(try PreKeyUpload(serialized: candidate), why) { XCTAssertEqual($0 as? SessionError, expected, why) }
        }
        let flagsOffset = 4 + 1 + 32, kemByteOffset = flagsOffset + 1 + 4 + 32
        XCTAssertEqual(bytes[kemByteOffset], 0x01)
        assertFails(replacing(bytes, at: 0, with: Array("SKPV".utf8)), .invalidPayload, "magic")
        for version: UInt8 in [0, 2, 0xFF] { assertFails(replacing(bytes, at: 4, with: [version]), .unsupportedVersion, "version \(version)") }
        assertFails(replacing(bytes, at: flagsOffset, with: [0x07]), .invalidPayload, "flag bit 2")
        assertFails(replacing(bytes, at: kemByteOffset, with: [0x02]), .invalidPayload, "kem byte 2")
        assertFails(replacing(bytes, at: kemByteOffset, with: [0x00]), .invalidPayload, "a last-resort KEM prekey for kem = 0")
        // kem = 1 without the last-resort KEM prekey.
        let withoutLastResort = replacing(Array(bytes.prefix(kemByteOffset + 1 + 64)), at: flagsOffset, with: [0x01])
            + bytes[(kemByteOffset + 1 + 64 + 4 + 1184 + 64)...]
        assertFails(withoutLastResort, .invalidPayload, "kem = 1 without its last-resort KEM prekey")
        // A last-resort KEM prekey without a signed prekey.
        let orphan = Array("SKPU".utf8) + [0x01] + parts.identity.publicKey.rawRepresentation + [0x02]
            + [0, 0, 0x07, 0x77] + parts.kemKey + parts.kemSignature + u32(0) + u32(0)
        assertFails(orphan, .invalidPayload, "a last-resort KEM prekey without a signed prekey")
        let noSignedKey = Array("SKPU".utf8) + [0x01] + parts.identity.publicKey.rawRepresentation + [0x00]
        assertFails(noSignedKey + u32(UInt32(LocalPreKeys.maximumOneTimePreKeyCount + 1)), .invalidPayload, "too many one-time prekeys")
        assertFails(noSignedKey + u32(0) + u32(UInt32(LocalPreKeys.maximumOneTimePreKeyCount + 1)), .invalidPayload,
                    "too many one-time KEM prekeys")
        assertFails(noSignedKey + u32(1) + u32(0), .invalidPayload, "a count beyond the keys present")
        for length in 0 ..< bytes.count { assertFails(Array(bytes.prefix(length)), .invalidPayload, "length \(length)") }
        assertFails(bytes + [0], .invalidPayload, "a trailing byte")
        XCTAssertEqual(try PreKeyUpload(serialized: bytes), upload)
    }

    func testTheBundleAServerBuildsFromAnUpload() throws {
        let parts = try parts(kem: true)
        let lastResort = try PreKeyBundle.KEMKey(id: 0x0000_0777, publicKey: parts.kemKey, signature: parts.kemSignature)
        let oneTime = PreKeyBundle.OneTimeKey(id: parts.oneTime.id, publicKey: parts.oneTime.publicKey)
        let oneTimeKEM = try PreKeyBundle.KEMKey(id: 0x0000_0778, publicKey: encapsulationKey(1), signature: [UInt8](repeating: 3, count: 64))
        let upload = PreKeyUpload(identityKey: parts.identity.publicKey, signedPreKey: PreKeyUpload.SignedKey(parts.signed),
                                  lastResortKEMPreKey: lastResort, oneTimePreKeys: [oneTime], oneTimeKEMPreKeys: [oneTimeKEM])
        XCTAssertEqual(upload.bundle(oneTimePreKey: oneTime)?.kemPreKey, lastResort, "no one-time KEM prekey given: the last-resort one")
        XCTAssertEqual(upload.bundle(oneTimePreKey: nil, kemPreKey: oneTimeKEM)?.kemPreKey, oneTimeKEM)
        XCTAssertEqual(upload.bundle(oneTimePreKey: oneTime)?.serialized, try bundle(parts, oneTime: true, kem: true).serialized)

        let classicParts = try self.parts(kem: false)
        let classic = PreKeyUpload(identityKey: classicParts.identity.publicKey, signedPreKey: PreKeyUpload.SignedKey(classicParts.signed),
                                   oneTimePreKeys: [])
        XCTAssertNil(classic.bundle(oneTimePreKey: nil)?.kemPreKey)
        XCTAssertNotNil(classic.bundle(oneTimePreKey: nil))
        XCTAssertNil(classic.bundle(oneTimePreKey: nil, kemPreKey: oneTimeKEM), "a KEM prekey for a signed prekey signed with kem = 0")
        XCTAssertNil(PreKeyUpload(identityKey: parts.identity.publicKey, signedPreKey: nil, oneTimePreKeys: [oneTime])
            .bundle(oneTimePreKey: oneTime), "no signed prekey: no bundle")
    }

    // MARK: The manager's upload

    func testTheManagersUploadRoundTripsThroughItsEncodingAndStartsASession() async throws {
        let server = FakeServer()
        let clock = FakeClock()
        var kems: [(any KeyEncapsulationMechanism)?] = [nil]
        if let kem = try? mlkem() { kems.append(kem) }
        for (index, kem) in kems.enumerated() {
            let seed = 5100 + UInt64(index) * 10
            let bob = try await TestDevice("bob\(index)", 1, seed: seed, server: server, clock: clock, kem: kem, publish: false)
            let alice = try await TestDevice("alice\(index)", 1, seed: seed + 1, server: server, kem: kem)
            let upload = try await bob.manager.maintainPreKeys()
            let bytes = upload.serialized
            let decoded = try PreKeyUpload(serialized: bytes)
            XCTAssertEqual(decoded, upload)
            XCTAssertEqual(decoded.serialized, bytes)
            XCTAssertEqual(decoded.oneTimePreKeys.count, 50)
            XCTAssertEqual(decoded.oneTimeKEMPreKeys.count, kem == nil ? 0 : 50)
            XCTAssertEqual(decoded.signedPreKey?.signsKEMPreKeys, kem != nil)

            // A server that stored only the bytes hands out a working bundle.
            let bundle = try XCTUnwrap(decoded.bundle(oneTimePreKey: decoded.oneTimePreKeys.last, kemPreKey: decoded.oneTimeKEMPreKeys.last))
            XCTAssertEqual(try PreKeyBundle(serialized: bundle.serialized), bundle)
            try await alice.manager.processBundle(try PreKeyBundle(serialized: bundle.serialized), for: bob.address)
            let message = try await alice.manager.encrypt(utf8("from the decoded upload"), to: bob.address)
            let received = try await bob.manager.decrypt(message, from: alice.address)
            XCTAssertEqual(received.plaintext, utf8("from the decoded upload"))

            // A later upkeep's upload (a rotation only) and an empty one round-trip too.
            let nothing = try await bob.manager.maintainPreKeys()
            XCTAssertTrue(nothing.isEmpty)
            XCTAssertEqual(try PreKeyUpload(serialized: nothing.serialized), nothing)
            clock.advance(bySeconds: Days.seconds(7))
            let rotation = try await bob.manager.maintainPreKeys()
            XCTAssertNotNil(rotation.signedPreKey)
            XCTAssertEqual(rotation.lastResortKEMPreKey != nil, kem != nil)
            XCTAssertEqual(try PreKeyUpload(serialized: rotation.serialized), rotation)
        }
    }
}
