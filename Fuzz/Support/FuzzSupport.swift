// Shared by every harness: the libFuzzer entry points, the input reader, invariant traps and
// seed emission. Each harness file defines `enum Harness` with `run(_:)` and `seeds()`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Testing) import SessionKit
import SignalPrimitives

/// libFuzzer's per-input entry point: runs the harness on one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    Harness.run(bytes)
    return 0
}

/// libFuzzer's start-up hook. With `FUZZ_EMIT_SEEDS=<dir>` in the environment the harness
/// writes its seed inputs (valid encodings made by the library, plus edge cases) into `<dir>`
/// and exits instead of fuzzing; `Fuzz/run.sh seeds` uses this to build `Fuzz/corpus/`.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>?,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    if let directory = getenv("FUZZ_EMIT_SEEDS") {
        let path = String(cString: directory)
        var written = 0
        for seed in Harness.seeds() {
            let name = Hex.encode(Array(SHA256.hash(seed).prefix(10)))
            guard let file = fopen(path + "/seed-" + name, "wb") else { fail("cannot write seeds into \(path)") }
            _ = seed.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            written += 1
        }
        print("wrote \(written) seeds into \(path)")
        exit(0)
    }
    return 0
}

/// Reports a violated invariant and traps: libFuzzer records the input as a crash (a finding).
func fail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text = "FUZZ INVARIANT VIOLATED (\(file):\(line)): \(message)\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    abort()
}

/// Traps unless `condition` holds.
func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
               file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fail(message(), file: file, line: line) }
}

/// Consumes a fuzz input from the front. Reads past the end give zeros or short arrays, so
/// every input is a valid program for the harness.
struct FuzzInput {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been consumed.
    var isAtEnd: Bool { offset >= bytes.count }

    /// The next byte, or 0 at the end.
    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A big-endian u16 from the next two bytes.
    mutating func u16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    /// A big-endian u32 from the next four bytes.
    mutating func u32() -> UInt32 { UInt32(u16()) << 16 | UInt32(u16()) }

    /// Up to `count` bytes.
    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + max(count, 0))
        defer { offset = end }
        return Array(bytes[min(offset, end) ..< end])
    }

    /// A length-prefixed chunk: a u16 length, then up to that many bytes.
    mutating func chunk() -> [UInt8] { take(Int(u16())) }

    /// Everything not yet consumed.
    mutating func rest() -> [UInt8] { take(bytes.count - offset) }
}

/// Builds a length-prefixed chunk as `FuzzInput.chunk()` reads it (for seeds).
func chunk(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8(truncatingIfNeeded: bytes.count >> 8), UInt8(truncatingIfNeeded: bytes.count)] + bytes
}

/// A deterministic byte string for fixed harness keys (SplitMix64 over `seed`); never a real key.
func fixedBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    var out = [UInt8]()
    out.reserveCapacity(count)
    while out.count < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        for shift in stride(from: 0, to: 64, by: 8) where out.count < count {
            out.append(UInt8(truncatingIfNeeded: z >> UInt64(shift)))
        }
    }
    return out
}

/// A random source that hands out fixed bytes (nonces for seeds and re-encoding checks).
struct FixedRandomSource: RandomSource {
    let bytes: [UInt8]
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for index in buffer.indices { buffer[index] = index < bytes.count ? bytes[index] : 0 }
    }
}

/// Wraps `body` in the persisted-state envelope (SessionKit's `StateWriter` layout:
/// "SKST" || kind || version || body || first 16 bytes of SHA-256), so that a harness can
/// reach the body parsers behind the checksum.
func envelope(kind: UInt8, version: UInt8, body: [UInt8]) -> [UInt8] {
    let head = Array("SKST".utf8) + [kind, version] + body
    return head + SHA256.hash(head).prefix(16)
}

/// A deterministic random source (SplitMix64) that counts its draws, so a harness can check
/// that a failed decryption drew nothing (SPEC §4). Harnesses are single-threaded.
final class CountingRandomSource: RandomSource, @unchecked Sendable {
    private var state: UInt64
    private(set) var draws = 0

    init(seed: UInt64) { state = seed }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        draws += 1
        for index in 0 ..< buffer.count {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            buffer[index] = UInt8(truncatingIfNeeded: z ^ (z >> 31))
        }
    }
}

/// The common part of the persisted-state harnesses. Input: a mode byte. Even: the rest is
/// the whole blob. Odd: the next byte is the version and the rest the body, wrapped by the
/// harness in a valid envelope of `kind` (so the fuzzer reaches the body parser behind the
/// checksum). Checks that loading fails only with `invalidPayload` or `unsupportedVersion`
/// and that a loaded value serializes back to the same bytes (the formats are canonical);
/// returns the loaded value and its blob for further checks.
///
/// `normalize`, when given, is applied to a blob that does not serialize back to itself: the
/// serialization must then equal the normalized blob (a known, reported non-canonicity that
/// `FUZZ_TOLERATE` lets the harness look past, see `isTolerated`).
func loadState<T>(_ bytes: [UInt8], kind: UInt8, load: ([UInt8]) throws(SessionError) -> T,
                  serialize: (T) -> [UInt8], normalize: (([UInt8]) -> [UInt8])? = nil) -> (T, [UInt8])? {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    let blob = mode & 1 == 0 ? input.rest() : envelope(kind: kind, version: input.byte(), body: input.rest())
    let value: T
    do {
        value = try load(blob)
    } catch {
        invariant(error == .invalidPayload || error == .unsupportedVersion, "load threw \(error)")
        return nil
    }
    let serialized = serialize(value)
    if serialized != blob, let normalize {
        invariant(serialized == normalize(blob), "a loaded state does not serialize to its (normalized) bytes")
        return (value, serialized)
    }
    invariant(serialized == blob, "a loaded state does not serialize to its bytes")
    return (value, blob)
}

/// Whether the known finding `name` is to be looked past: `FUZZ_TOLERATE` holds a
/// comma-separated list of names (Fuzz/README.md, Findings). Unset: every invariant is strict.
func isTolerated(_ name: String) -> Bool {
    guard let value = getenv("FUZZ_TOLERATE") else { return false }
    return String(cString: value).split(separator: ",").contains { $0 == name }
}

/// Replaces the checksum of a persisted-state blob (the first 16 bytes of SHA-256 over
/// everything before it).
func resealed(_ blob: [UInt8]) -> [UInt8] {
    let head = Array(blob.dropLast(16))
    return head + SHA256.hash(head).prefix(16)
}

/// Seeds for a persisted-state harness from valid blobs: each whole, and as version + body.
func stateSeeds(_ blobs: [[UInt8]]) -> [[UInt8]] {
    blobs.flatMap { blob in [[0] + blob, [1, blob[5]] + blob[6 ..< (blob.count - 16)]] }
}

// MARK: - SPEC v2 helpers shared by the harnesses

/// Runs harness set-up that cannot fail for the fixed inputs given; traps (a harness bug) if it does.
func must<T>(_ what: @autoclosure () -> String = "set-up", _ body: () throws -> T) -> T {
    do { return try body() } catch { fail("\(what()) failed: \(error)") }
}

/// `u32(value)`, 4 bytes big-endian (SPEC notation).
func u32(_ value: UInt32) -> [UInt8] {
    [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
     UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
}

/// A big-endian u32 from (at most) four bytes.
func readU32(_ bytes: ArraySlice<UInt8>) -> UInt32 { bytes.reduce(0) { $0 << 8 | UInt32($1) } }

/// SPEC §1: a canonical X25519 public key on the wire has bit 255 clear and u < p = 2^255 − 19.
/// Written bit-level from the SPEC, independently of the library's field arithmetic: with bit
/// 255 clear, the values ≥ p are 0x7f ff … ff (ed … ff), little-endian.
func isCanonicalX25519(_ key: ArraySlice<UInt8>) -> Bool {
    let bytes = Array(key)
    guard bytes.count == 32, bytes[31] & 0x80 == 0 else { return false }
    let atLeastP = bytes[31] == 0x7F && bytes[1 ..< 31].allSatisfy { $0 == 0xFF } && bytes[0] >= 0xED
    return !atLeastP
}

/// SPEC §1's `Encode(address)`, written from the text (independent of `ProtocolAddress.encoded`).
func encodeAddress(uid: String, device: UInt32) -> [UInt8] {
    [UInt8(uid.utf8.count)] + Array(uid.utf8) + u32(device)
}

/// Addresses used by the harnesses.
enum Addresses {
    static let alice = must { try ProtocolAddress(userID: "alice", deviceID: 1) }
    static let bob = must { try ProtocolAddress(userID: "bob", deviceID: 7) }
    /// Another device of Alice's user: a re-attributed message claims to come from it.
    static let aliceOther = must { try ProtocolAddress(userID: "alice", deviceID: 2) }
    /// A user id whose `String` equals "é" but whose UTF-8 bytes differ (SPEC §1: never equal).
    static let decomposed = must { try ProtocolAddress(userID: "e\u{301}", deviceID: 1) }
}

/// SPEC §4's wire layout of received pairwise messages, as a reference decoder written from the
/// SPEC text (independent of `IncomingMessage`): which error decoding must report, or nil.
enum WireReference {
    static let ratchetType: UInt8 = 0x21
    static let preKeyType: UInt8 = 0x22
    /// header (41) + tag (16).
    static let minimumRatchetLength = 57
    static let basePrefixLength = 70
    static let oneTimePartLength = 4
    static let kemPartLength = 4 + 1088
    /// SPEC §9: the initiator's registration id (flags bit 2).
    static let registrationIDPartLength = 4

    /// The prefix length (type byte included) for a flags byte with bits 0–2 only.
    static func prefixLength(flags: UInt8) -> Int {
        basePrefixLength + (flags & 1 != 0 ? oneTimePartLength : 0) + (flags & 2 != 0 ? kemPartLength : 0)
            + (flags & 4 != 0 ? registrationIDPartLength : 0)
    }

    /// SPEC §4's order: type byte (`unsupportedVersion`); lengths and the flags byte
    /// (`invalidMessage`; at least 41 + 16 bytes; the prekey prefix's 70 / +4 / +1092 / +4
    /// bytes, then a whole inner message) and, with flags bit 2, a registration id in
    /// 1 … 2^31 − 1 (`invalidMessage`, SPEC §9); the inner type byte (`unsupportedVersion`);
    /// key canonicity of EK_A and the ratchet key (`invalidKey`). IK_A is X3DH's check.
    static func expectedError(_ bytes: [UInt8]) -> SessionError? {
        guard let type = bytes.first else { return .invalidMessage }
        switch type {
        case ratchetType:
            guard bytes.count >= minimumRatchetLength else { return .invalidMessage }
            return isCanonicalX25519(bytes[1 ..< 33]) ? nil : .invalidKey
        case preKeyType:
            guard bytes.count >= basePrefixLength else { return .invalidMessage }
            let flags = bytes[69]
            guard flags & ~0x07 == 0 else { return .invalidMessage }
            let prefix = prefixLength(flags: flags)
            guard bytes.count >= prefix + minimumRatchetLength else { return .invalidMessage }
            if flags & 4 != 0 {
                let id = bytes[(prefix - 4) ..< prefix].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                guard id >= 1, id <= 0x7FFF_FFFF else { return .invalidMessage }
            }
            guard bytes[prefix] == ratchetType else { return .unsupportedVersion }
            guard isCanonicalX25519(bytes[33 ..< 65]), isCanonicalX25519(bytes[(prefix + 1) ..< (prefix + 33)]) else {
                return .invalidKey
            }
            return nil
        default:
            return .unsupportedVersion
        }
    }
}

/// A small deterministic stand-in for ML-KEM-768 that conforms to SessionKit's
/// `KeyEncapsulationMechanism` (the harnesses test SessionKit's handling of the KEM, not ML-KEM,
/// and need not link swift-crypto). It has ML-KEM-768's sizes and behaviour at SessionKit's
/// boundary: a 64-byte seed gives a FIPS 203 well-formed 1184-byte `ek` (768 twelve-bit
/// coefficients reduced mod q, then 32 bytes); a 1088-byte ciphertext always decapsulates
/// (implicit rejection: a wrong one gives another secret); SS is bound to the whole `ek` and the
/// ciphertext: SS = SHA-256("SS" || ek || CT). Not secure (anyone holding `ek` computes SS).
struct StandInKEM: KeyEncapsulationMechanism {
    static let ciphertextByteCount = 1088

    /// SHA-256 in counter mode: `count` bytes from `label` and `input`.
    static func expand(_ input: [UInt8], label: String, count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count + 32)
        var block: UInt32 = 0
        while out.count < count {
            out += SHA256.hash(Array(label.utf8) + u32(block) + input)
            block += 1
        }
        return Array(out.prefix(count))
    }

    /// The `ek` of `seed`: ByteEncode12 of 768 coefficients < 3329, then 32 bytes.
    static func encapsulationKeyBytes(seed: [UInt8]) -> [UInt8] {
        let stream = expand(seed, label: "ek", count: 1536 + 32)
        var ek = [UInt8]()
        ek.reserveCapacity(1184)
        for pair in 0 ..< 384 {
            let at = pair * 4
            let c0 = (UInt16(stream[at]) | UInt16(stream[at + 1]) << 8) % 3329
            let c1 = (UInt16(stream[at + 2]) | UInt16(stream[at + 3]) << 8) % 3329
            ek.append(UInt8(truncatingIfNeeded: c0))
            ek.append(UInt8(truncatingIfNeeded: c0 >> 8) | UInt8(truncatingIfNeeded: (c1 & 0x0F) << 4))
            ek.append(UInt8(truncatingIfNeeded: c1 >> 4))
        }
        return ek + stream[1536 ..< 1568]
    }

    static func sharedSecret(ek: [UInt8], ciphertext: [UInt8]) -> [UInt8] {
        SHA256.hash(Array("SS".utf8) + ek + ciphertext)
    }

    /// A deterministic encapsulation to `ek` with the harness's `randomness`.
    static func encapsulate(to ek: [UInt8], randomness: [UInt8]) -> KEMEncapsulation {
        let ciphertext = expand(ek + randomness, label: "ct", count: ciphertextByteCount)
        return must("stand-in encapsulation") {
            try KEMEncapsulation(ciphertext: ciphertext, sharedSecret: SecureBytes(copying: sharedSecret(ek: ek, ciphertext: ciphertext)))
        }
    }

    func encapsulationKey(fromSeed seed: SecureBytes) throws(SessionError) -> KEMEncapsulationKey {
        guard seed.count == KEMSeed.byteCount else { throw .invalidKey }
        return try KEMEncapsulationKey(rawRepresentation: Self.encapsulationKeyBytes(seed: seed.bytes))
    }

    func encapsulate(to key: KEMEncapsulationKey) throws(SessionError) -> KEMEncapsulation {
        Self.encapsulate(to: key.rawRepresentation, randomness: [])
    }

    func decapsulate(_ ciphertext: [UInt8], seed: SecureBytes) throws(SessionError) -> SecureBytes {
        guard ciphertext.count == Self.ciphertextByteCount else { throw .invalidMessage }
        guard seed.count == KEMSeed.byteCount else { throw .invalidKey }
        return SecureBytes(copying: Self.sharedSecret(ek: Self.encapsulationKeyBytes(seed: seed.bytes), ciphertext: ciphertext))
    }
}

// MARK: - The Double Ratchet receiver model (ratchet_message, session_routing)

/// The expected state of one receiver (SPEC §4).
struct ReceiverModel {
    struct Key: Hashable {
        let dh: [UInt8]
        let n: Int
    }

    var dhr: [UInt8]
    var hasChain: Bool
    var nr: Int
    var stored: [Key] = []
    var leftChains: Set<[UInt8]> = []
    let maxSkip: Int
    let maxStored: Int

    enum Outcome: Equatable {
        case success
        case error(SessionError?)   // nil: some error (SPEC: "fails with some error")
    }

    private mutating func store(_ keys: [Key]) {
        stored.append(contentsOf: keys)
        if stored.count > maxStored { stored.removeFirst(stored.count - maxStored) }
    }

    /// The outcome of an authentic message with header (dh, pn, n); applies it on success.
    mutating func deliver(dh: [UInt8], pn: Int, n: Int) -> Outcome {
        if let index = stored.firstIndex(of: Key(dh: dh, n: n)) {
            stored.remove(at: index)
            return .success
        }
        if dh == dhr {
            guard hasChain else { return .error(.invalidMessage) }
            if n < nr { return .error(.duplicateMessage) }
            guard n - nr <= maxSkip else { return .error(.tooManySkippedMessages) }
            store((nr ..< n).map { Key(dh: dh, n: $0) })
            nr = n + 1
            return .success
        }
        if leftChains.contains(dh) { return .error(nil) }
        guard pn <= nr + maxSkip, n <= maxSkip else { return .error(.tooManySkippedMessages) }
        if hasChain { store((nr ..< max(nr, pn)).map { Key(dh: dhr, n: $0) }) }
        leftChains.insert(dhr)
        dhr = dh
        hasChain = true
        store((0 ..< n).map { Key(dh: dh, n: $0) })
        nr = n + 1
        return .success
    }
}

/// Decrypts the binary age `file` with `identities` through `AgeDecryptingStream`, fed in pieces
/// of `pieceSize` bytes (at least 1): what the stream released, and the error it ended with
/// (nil: the whole file decrypted). For the age harnesses.
func ageDecrypt(_ file: [UInt8], identities: [any AgeIdentity], pieceSize: Int) -> (released: [UInt8], error: AgeError?) {
    let stream = AgeDecryptingStream(identities: identities, format: .binary)
    var released: [UInt8] = []
    do throws(AgeError) {
        var offset = 0
        while offset < file.count {
            let end = min(offset + max(pieceSize, 1), file.count)
            try file[offset ..< end].withBytes { (b: UnsafeRawBufferPointer) throws(AgeError) in
                try stream.update(b, releaseBytes: { released += $0 })
            }
            offset = end
        }
        try stream.finish(releaseBytes: { released += $0 })
        return (released, nil)
    } catch {
        return (released, error)
    }
}
