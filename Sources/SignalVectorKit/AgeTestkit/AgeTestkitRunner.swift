import Foundation
import SessionKit
import SessionKitAge
import SessionKitMLKEM
import SignalPrimitives

/// Runs C2SP/CCTV age vectors (`AgeTestkitVector`) against SessionKit's age v1: each file is
/// one test, decrypted through `AgeDecryptingStream` (in pieces, as a stream reads it) with its
/// X25519 identities and passphrases, and its outcome compared with `expect`:
///
/// - the `AgeError` case must be the expected category (`header`, `noMatch`, `headerMAC`,
///   `payload`, `armor`), or no error for `success`;
/// - everything released must hash to `payload` when it is given (for `success` the whole
///   plaintext, for `payload failure` what verified before the failure), and nothing may be
///   released when the header fails, no identity matches or the MAC fails.
///
/// Post-quantum identities (`AGE-SECRET-KEY-PQ-1…`, the `mlkem768x25519` recipient) are
/// SessionKitMLKEM's `AgeHybridIdentity`. Where swift-crypto's X-Wing is unavailable (Apple
/// platforms before 26), a vector whose identities are all of that type and that has no
/// passphrase is skipped and named, never passed; so is a file with a header key the reader
/// does not know.
public enum AgeTestkitRunner {
    /// The `name` of testkit results (the suite column of the report).
    public static let name = "age (C2SP/CCTV)"
    /// The skip reason of vectors that need the hybrid post-quantum recipient type.
    public static let postQuantumSkipReason =
        "needs the mlkem768x25519 recipient type (AGE-SECRET-KEY-PQ-1… identity): SessionKitMLKEM's X-Wing needs macOS/iOS/tvOS/watchOS/visionOS 26"
    /// The largest work factor the vectors' passphrase identities accept: 22, the `age` tool's
    /// limit, which the vectors are written against (`scrypt_work_factor_23` must fail just
    /// above it). It is set explicitly: SessionKit's default, `defaultMaximumWorkFactor`, is
    /// lower (20). The vectors' own files use work factor 10.
    static let maximumWorkFactor = 22
    /// The size of the pieces the file is fed in (not a divisor of the 64 KiB chunk, so chunk
    /// boundaries fall inside pieces).
    static let pieceByteCount = 8191

    /// Runs the vector file whose contents are `data`; `path` only labels the result.
    public static func run(data: Data, path: String) -> VectorFileResult {
        var result = VectorFileResult(path: path, shape: .ageTestkit, name: name)
        do {
            result.record(try check(AgeTestkitVector(data)))
        } catch let failure as VectorFailure {
            result.recordFailure(id: nil, failure.message)
        } catch {
            result.recordFailure(id: nil, "unexpected error \(error)")
        }
        return result
    }

    /// The expectation of `error`'s category, or `nil` for an error outside the five categories.
    public static func category(of error: AgeError) -> AgeTestkitVector.Expectation? {
        switch error {
        case .header: return .headerFailure
        case .noMatch: return .noMatch
        case .headerMAC: return .hmacFailure
        case .payload: return .payloadFailure
        case .armor: return .armorFailure
        // A header over a reader limit (stanza count, scrypt work factor or memory) is refused as
        // a header, as the `age` tool refuses `scrypt_work_factor_23`.
        case .resourceLimit: return .headerFailure
        case .invalidIdentity, .invalidRecipient, .streamClosed, .file, .primitive: return nil
        }
    }

    /// Runs one vector.
    /// - Throws: `VectorFailure` describing how the outcome differs from the expected one.
    static func check(_ vector: AgeTestkitVector) throws -> VectorOutcome {
        if !vector.unknownKeys.isEmpty {
            return .skipped("unknown vector header key(s) \(vector.unknownKeys.joined(separator: ", ")) (the CCTV README: ignore such files)")
        }
        var identities: [any AgeIdentity] = []
        var postQuantum = 0
        for text in vector.identities {
            if text.hasPrefix("AGE-SECRET-KEY-PQ-1") {
                if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
                    do {
                        identities.append(try AgeHybridIdentity(text))
                    } catch {
                        throw VectorFailure("the vector's post-quantum identity does not parse: \(error)")
                    }
                } else {
                    postQuantum += 1
                }
                continue
            }
            do {
                identities.append(try AgeX25519Identity(text))
            } catch {
                throw VectorFailure("the vector's identity does not parse: \(error)")
            }
        }
        for passphrase in vector.passphrases {
            do {
                identities.append(try AgeScryptIdentity(passphrase: passphrase, maximumWorkFactor: maximumWorkFactor))
            } catch {
                throw VectorFailure("the vector's passphrase is refused: \(error)")
            }
        }
        if identities.isEmpty, postQuantum > 0 { return .skipped(postQuantumSkipReason) }

        let stream = AgeDecryptingStream(identities: identities, format: vector.armored ? .armored : .binary)
        var digest = SHA256()
        var released = 0
        let release = { (bytes: UnsafeRawBufferPointer) in
            digest.update(bytes: bytes)
            released += bytes.count
        }
        var outcome: AgeError?
        do throws(AgeError) {
            var offset = 0
            let file = [UInt8](vector.file)
            while offset < file.count {
                let end = min(offset + pieceByteCount, file.count)
                try file[offset ..< end].withBytes { (piece: UnsafeRawBufferPointer) throws(AgeError) in try stream.update(piece, releaseBytes: release) }
                offset = end
            }
            try stream.finish(releaseBytes: release)
        } catch {
            outcome = error
        }

        let actual: AgeTestkitVector.Expectation
        if let outcome {
            guard let category = category(of: outcome) else {
                throw VectorFailure("expected \(vector.expect.rawValue), got an error outside the categories: \(outcome)")
            }
            actual = category
        } else {
            actual = .success
        }
        guard actual == vector.expect else {
            throw VectorFailure("expected \(vector.expect.rawValue), got \(outcome.map { "\($0)" } ?? "success")")
        }
        switch actual {
        case .headerFailure, .noMatch, .hmacFailure:
            guard released == 0 else { throw VectorFailure("\(released) bytes released before a \(actual.rawValue)") }
        case .success, .payloadFailure, .armorFailure:
            break
        }
        if let expected = vector.payloadDigest {
            let got = digest.finalize()
            guard got == expected else {
                throw VectorFailure("the \(released) bytes released hash to \(Hex.encode(got)), expected \(Hex.encode(expected))")
            }
        } else if actual == .success {
            throw VectorFailure("a success vector without a payload hash")
        }
        return .passed
    }
}
