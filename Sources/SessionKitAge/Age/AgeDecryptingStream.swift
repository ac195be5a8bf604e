#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignalPrimitives

/// How `AgeDecryptor` reads its input.
public enum AgeInputFormat: Sendable, Hashable {
    /// Armored when the first non-whitespace character is `-` (the BEGIN line), binary
    /// otherwise (a binary file starts with `age-encryption.org/`).
    case automatic
    /// The binary format only.
    case binary
    /// The ASCII armor only.
    case armored
}

/// Decrypts an age file pushed in pieces of any size, in constant memory (the header, at most
/// 4 MiB, and two 64 KiB chunks).
///
/// Plaintext is released chunk by chunk, through the `release` closure, as soon as a chunk's
/// tag verifies; a chunk that does not verify is never released. The file is complete and
/// intact only when `finish` returns: until then, released plaintext is authentic but may be
/// a prefix (a truncated file), and after an error nothing more is released (every later call
/// throws the same error). To release nothing before the end, use
/// `AgeDecryptor.decrypt(_:)` or `AgeDecryptor.decrypt(contentsOf:to:)`.
///
/// Not thread-safe: use one stream from one task at a time.
public final class AgeDecryptingStream {
    private enum Mode {
        /// Format `.automatic`, before the first non-whitespace byte (held in `seen`).
        case detecting
        case binary
        case armored
    }

    private var mode: Mode
    private var seen: [UInt8] = []
    private var armor = AgeArmorDecoder()
    private var file: AgeFileDecoder
    private var failure: AgeError?
    private var finished = false

    /// A stream that unwraps the file key with the first of `identities` that matches.
    public init(identities: [any AgeIdentity], format: AgeInputFormat = .automatic) {
        file = AgeFileDecoder(identities: identities)
        switch format {
        case .automatic: mode = .detecting
        case .binary: mode = .binary
        case .armored: mode = .armored
        }
    }

    /// The most payload chunks opened together on all cores (`AgePayloadDecoder`); 1 (the
    /// default) opens them one by one on the calling thread. Set by the file path.
    var batchChunks: Int {
        get { file.batchChunks }
        set { file.batchChunks = newValue }
    }

    /// Adds the next bytes of the file; verified plaintext goes to `releaseBytes`, in order (the
    /// buffer is valid only during the call).
    /// - Throws: `AgeError` (`header`, `noMatch`, `headerMAC`, `payload`, `armor`,
    ///   `resourceLimit`) as soon as the bytes so far show the file is bad or over a limit, then
    ///   the same error on every later call;
    ///   `AgeError.streamClosed` after `finish`.
    public func update(_ bytes: UnsafeRawBufferPointer, releaseBytes release: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        try run { (stream: AgeDecryptingStream) throws(AgeError) in try stream.feed(bytes, release) }
    }

    /// Adds the next bytes of the file; verified plaintext goes to `release`, in order.
    /// - Throws: as `update(_:releaseBytes:)`.
    public func update(_ bytes: Data, release: (Data) -> Void) throws(AgeError) {
        try bytes.withBytes { (b: UnsafeRawBufferPointer) throws(AgeError) in
            try update(b, releaseBytes: { release(Data($0)) })
        }
    }

    /// Ends the file: releases the last chunk to `releaseBytes` once it verifies as the final
    /// one.
    /// - Throws: `AgeError` when the file is truncated or its end is bad (and whatever error
    ///   an earlier call threw); `AgeError.streamClosed` when called twice.
    public func finish(releaseBytes release: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        try run { (stream: AgeDecryptingStream) throws(AgeError) in try stream.end(release) }
        finished = true
    }

    /// Ends the file: releases the last chunk to `release` once it verifies as the final one.
    /// - Throws: as `finish(releaseBytes:)`.
    public func finish(release: (Data) -> Void) throws(AgeError) {
        try finish(releaseBytes: { release(Data($0)) })
    }

    /// Runs `body`, making any error sticky.
    private func run(_ body: (AgeDecryptingStream) throws(AgeError) -> Void) throws(AgeError) {
        if let failure { throw failure }
        guard !finished else { throw .streamClosed }
        do {
            try body(self)
        } catch {
            failure = error
            throw error
        }
    }

    private func feed(_ bytes: UnsafeRawBufferPointer, _ release: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        switch mode {
        case .detecting:
            seen.append(contentsOf: bytes)
            let held = seen
            if let first = held.first(where: { !AgeArmor.isWhitespace($0) }) {
                mode = first == UInt8(ascii: "-") ? .armored : .binary
            } else if held.count > AgeArmor.maximumWhitespace {
                // Only whitespace, beyond what armor allows: it cannot be armored.
                mode = .binary
            } else {
                return
            }
            seen = []
            try held.withBytes { (s: UnsafeRawBufferPointer) throws(AgeError) in try feed(s, release) }
        case .binary:
            try file.update(bytes, output: release)
        case .armored:
            try armor.update(bytes) { (decoded: UnsafeRawBufferPointer) throws(AgeError) in try file.update(decoded, output: release) }
        }
    }

    private func end(_ release: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        switch mode {
        case .detecting:
            mode = .binary
            let held = seen
            seen = []
            try held.withBytes { (s: UnsafeRawBufferPointer) throws(AgeError) in try file.update(s, output: release) }
            try file.finish(output: release)
        case .binary:
            try file.finish(output: release)
        case .armored:
            try armor.finish { (decoded: UnsafeRawBufferPointer) throws(AgeError) in try file.update(decoded, output: release) }
            try file.finish(output: release)
        }
    }
}
