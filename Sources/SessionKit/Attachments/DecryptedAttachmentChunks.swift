#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SessionKitAge
import SignalPrimitives

/// The content of an attachment whose ciphertext arrives as an `AsyncSequence`, released as
/// its chunks verify (`Attachment.decryptedChunks(of:pointer:)`).
///
/// **It releases verified chunks before the digest is known**: each element is authentic
/// content (its chunk's tag verified, in order, at most the first n bytes), but only the end of
/// the iteration without an error says the ciphertext was complete, of the right length and
/// the one the pointer names. Errors: `SessionError.invalidMessage` (too much or too little
/// ciphertext, a chunk that does not verify, a wrong digest) or the base sequence's own error;
/// after an error the iteration ends.
///
/// Memory: one chunk, plus the content of one element of the base sequence.
public struct DecryptedAttachmentChunks<Base: AsyncSequence>: AsyncSequence where Base.Element: ContiguousBytes {
    /// Each element: the content released by one piece of ciphertext (never empty).
    public typealias Element = Data

    let base: Base
    let pointer: AttachmentPointer

    /// Starts an iteration.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), pointer: pointer)
    }

    /// The iterator: pulls ciphertext from the base sequence until a chunk completes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: Base.AsyncIterator
        private var decoder: AttachmentDecoder?
        private var failure: SessionError?
        private var done = false

        init(base: Base.AsyncIterator, pointer: AttachmentPointer) {
            self.base = base
            do throws(SessionError) {
                decoder = try AttachmentDecoder(pointer: pointer)
            } catch {
                failure = error
            }
        }

        /// The next verified content, or `nil` once the whole ciphertext verified.
        /// - Throws: `SessionError.invalidMessage`, or the base sequence's error.
        public mutating func next() async throws -> Data? {
            while !done {
                if let failure {
                    done = true
                    throw failure
                }
                guard var decoder else { return nil }
                let piece: Base.Element?
                do {
                    piece = try await base.next()
                } catch {
                    done = true
                    throw error
                }
                guard let piece else {
                    done = true
                    try decoder.finish()
                    return nil
                }
                var content = Data()
                let result: Result<Void, SessionError> = piece.withUnsafeBytes { bytes in
                    Result { () throws(SessionError) in try decoder.update(bytes) { content.append(contentsOf: $0) } }
                }
                if case let .failure(error) = result {
                    failure = error
                    continue
                }
                self.decoder = decoder
                if !content.isEmpty { return content }
            }
            return nil
        }
    }
}
