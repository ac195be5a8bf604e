#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignalPrimitives

/// Encrypts plaintext pushed in pieces of any size into an age file, in constant memory (two
/// 64 KiB chunks). Made by `AgeEncryptor.makeStream()`.
///
/// Each call returns the file bytes that are ready: the header and nonce first, then whole
/// chunks; `finish` returns the final chunk (and the armor's END line). The concatenation of
/// everything returned is the file. A full chunk is held until more plaintext arrives, since
/// only the last chunk carries the final flag.
///
/// Not thread-safe: use one stream from one task at a time. Encrypting the same plaintext
/// twice gives different files (a new file key and nonce per stream).
public final class AgeEncryptingStream {
    private var prefix: [UInt8]?
    private var payload: AgePayloadEncoder
    private var armor: AgeArmorEncoder?
    private var failure: AgeError?

    init(header: [UInt8], nonce: [UInt8], cipher: AgePayloadCipher, armored: Bool) {
        prefix = header + nonce
        payload = AgePayloadEncoder(cipher: cipher)
        armor = armored ? AgeArmorEncoder() : nil
    }

    /// The most payload chunks sealed together on all cores (`AgePayloadEncoder`); 1 (the
    /// default) seals them one by one on the calling thread. Set by the file path.
    var batchChunks: Int {
        get { payload.batchChunks }
        set { payload.batchChunks = newValue }
    }

    /// Hands `bytes` to `output`, through the armor when armored.
    private func emit(_ bytes: UnsafeRawBufferPointer, _ output: (UnsafeRawBufferPointer) -> Void) {
        if armor != nil {
            armor?.update(bytes, output: output)
        } else {
            output(bytes)
        }
    }

    /// Encrypts `plaintext`; the file bytes that are ready go to `output` (the buffer is valid
    /// only during the call).
    /// - Throws: `AgeError.streamClosed` after `finish`.
    public func update(_ plaintext: UnsafeRawBufferPointer, outputBytes output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        if let failure { throw failure }
        if let header = prefix {
            prefix = nil
            header.withUnsafeBytes { emit($0, output) }
        }
        do {
            try payload.update(plaintext) { emit($0, output) }
        } catch {
            failure = error
            throw error
        }
    }

    /// Encrypts `plaintext` and returns the file bytes that are ready.
    /// - Throws: `AgeError.streamClosed` after `finish`.
    public func update(_ plaintext: Data) throws(AgeError) -> Data {
        var out = Data()
        try plaintext.withBytes { (p: UnsafeRawBufferPointer) throws(AgeError) in
            try update(p, outputBytes: { out.append(contentsOf: $0) })
        }
        return out
    }

    /// Seals the final chunk; the remaining file bytes go to `output`.
    /// - Throws: `AgeError.streamClosed` when called twice.
    public func finish(outputBytes output: (UnsafeRawBufferPointer) -> Void) throws(AgeError) {
        if let failure { throw failure }
        if let header = prefix {
            prefix = nil
            header.withUnsafeBytes { emit($0, output) }
        }
        do {
            try payload.finish { emit($0, output) }
        } catch {
            failure = error
            throw error
        }
        armor?.finish(output: output)
        failure = .streamClosed
    }

    /// Seals the final chunk and returns the remaining file bytes.
    /// - Throws: `AgeError.streamClosed` when called twice.
    public func finish() throws(AgeError) -> Data {
        var out = Data()
        try finish(outputBytes: { out.append(contentsOf: $0) })
        return out
    }
}
