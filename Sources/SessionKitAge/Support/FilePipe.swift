#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import SignalPrimitives

/// The file-to-file loop of the age and attachment file paths (`AgeEncryptor` and
/// `AgeDecryptor`'s `contentsOf:to:`, `Attachment.encrypt(contentsOf:to:using:)` and
/// `Attachment.decrypt(contentsOf:pointer:to:)`): reads the source in pieces, pushes them
/// through a codec, writes what the codec hands out to a temporary file (`AtomicFileWriter`)
/// and syncs and renames it over the destination once the codec finished without an error.
package enum FilePipe {
    /// The codec the pipe drives: `update` and `finish` hand their output to the closure they
    /// are given (valid only during the call).
    package struct Codec<Failure: Error> {
        /// Pushes a piece of the source.
        package let update: (UnsafeRawBufferPointer, (UnsafeRawBufferPointer) -> Void) throws(Failure) -> Void
        /// Ends the source.
        package let finish: ((UnsafeRawBufferPointer) -> Void) throws(Failure) -> Void

        /// A codec of the two closures.
        package init(
            update: @escaping (UnsafeRawBufferPointer, (UnsafeRawBufferPointer) -> Void) throws(Failure) -> Void,
            finish: @escaping ((UnsafeRawBufferPointer) -> Void) throws(Failure) -> Void
        ) {
            self.update = update
            self.finish = finish
        }
    }

    /// Runs `source` through the codec that `makeCodec` returns into `destination`.
    /// `makeCodec` is called once the source is open, before the temporary file is created,
    /// with the source's length and the batch size its STREAM codec should use:
    /// `parallelism.batchChunks` when the source has at least `minimumParallelByteCount` bytes
    /// (the source is then read `batchChunks` units at a time), 1 otherwise (one unit at a
    /// time).
    /// - Parameter unit: the bytes of one chunk in the source (plaintext or sealed chunk).
    /// - Parameter fileError: the error for a file that cannot be read or written.
    /// - Throws: what `makeCodec` and the codec throw; `fileError(reason)` when a file cannot be
    ///   read or written. The temporary file is removed and `destination` untouched on any
    ///   error.
    package static func run<Failure: Error>(
        from source: URL, to destination: URL, unit: Int, parallelism: AgeParallelism, fileError: (String) -> Failure,
        makeCodec: (_ sourceByteCount: UInt64, _ batchChunks: Int) throws(Failure) -> Codec<Failure>
    ) throws(Failure) {
        let input: ReadableFile, sourceByteCount: UInt64
        do {
            input = try ReadableFile(source)
            sourceByteCount = try input.byteCount()
        } catch {
            throw fileError(error.description)
        }
        let batchChunks = parallelism.isParallel && sourceByteCount >= parallelism.minimumParallelByteCount ? parallelism.batchChunks : 1
        let codec = try makeCodec(sourceByteCount, batchChunks)
        let output: AtomicFileWriter
        do { output = try AtomicFileWriter(destination) } catch { throw fileError(error.description) }
        // Parallel runs write on a background queue while the next piece is read and sealed
        // or opened; sequential runs write on the calling thread.
        let background = batchChunks > 1 ? BackgroundFileWriter(output, capacity: unit * batchChunks) : nil
        // On any failure the queue is drained and the temporary file removed before returning
        // (the queue may hold a reference to the writer a little longer).
        defer {
            background?.close()
            output.discard()
        }
        var writeFailure: FileAccessError?
        let write = { (bytes: UnsafeRawBufferPointer) in
            guard writeFailure == nil else { return }
            if let background {
                background.write(bytes)
                writeFailure = background.failure
            } else {
                do throws(FileAccessError) { try output.write(bytes) } catch { writeFailure = error }
            }
        }
        do throws(FileError<Failure>) {
            try input.forEachPiece(size: unit * batchChunks) { (piece: UnsafeRawBufferPointer) throws(Failure) in
                try codec.update(piece, write)
                if let writeFailure { throw fileError(writeFailure.description) }
            }
        } catch {
            switch error {
            case let .access(failure): throw fileError(failure.description)
            case let .body(failure): throw failure
            }
        }
        try codec.finish(write)
        if let background, writeFailure == nil { writeFailure = background.close() }
        if let writeFailure { throw fileError(writeFailure.description) }
        do { try output.commit() } catch { throw fileError(error.description) }
    }
}

/// Writes to an `AtomicFileWriter` on a serial background queue, so that the caller produces
/// the next bytes meanwhile: bytes are copied into one of two buffers of `capacity` bytes; a
/// full buffer is handed to the queue while the caller fills the other (it waits when the
/// other is still being written). The buffers are wiped (they may hold plaintext) and freed by
/// `close`, which waits for the queue.
final class BackgroundFileWriter: @unchecked Sendable {
    // Thread safety: `buffers`, `current` and `filled` belong to the caller's thread; the
    // queue reads a buffer only between its hand-over and the `idle` signal that follows, and
    // `pendingFailure` is written by the queue only before that signal and read by the caller
    // only after waiting for it (or after `close` drained the queue).
    private let output: AtomicFileWriter
    private let queue = DispatchQueue(label: "SessionKit.BackgroundFileWriter")
    private let idle = DispatchSemaphore(value: 1)
    private let capacity: Int
    private var buffers: [UnsafeMutableRawBufferPointer]
    private var current = 0
    private var filled = 0
    private var pendingFailure: FileAccessError?
    private var closed = false

    /// The first write error known to the caller (set when a buffer is handed over).
    private(set) var failure: FileAccessError?

    init(_ output: AtomicFileWriter, capacity: Int) {
        self.output = output
        self.capacity = max(1, capacity)
        buffers = (0 ..< 2).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, capacity), alignment: 16) }
    }

    deinit { close() }

    /// Appends `bytes` (copied; handed to the queue a buffer at a time).
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !closed, failure == nil else { return }
        var offset = 0
        while offset < bytes.count {
            let take = min(capacity - filled, bytes.count - offset)
            UnsafeMutableRawBufferPointer(rebasing: buffers[current][filled ..< filled + take])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + take]))
            filled += take
            offset += take
            if filled == capacity { handOver() }
        }
    }

    /// Hands the current buffer to the queue once the previous one is written.
    private func handOver() {
        guard filled > 0 else { return }
        idle.wait()
        if failure == nil { failure = pendingFailure }
        guard failure == nil else {
            idle.signal()
            filled = 0
            return
        }
        let buffer = SharedBatchMemory(value: UnsafeRawBufferPointer(rebasing: buffers[current][0 ..< filled]))
        queue.async { [self] in
            do throws(FileAccessError) { try output.write(buffer.value) } catch { pendingFailure = error }
            idle.signal()
        }
        current ^= 1
        filled = 0
    }

    /// Writes what is left, waits for the queue, wipes and frees the buffers; returns the first
    /// write error. Later calls return the same and do nothing else.
    @discardableResult
    func close() -> FileAccessError? {
        guard !closed else { return failure }
        handOver()
        idle.wait()
        if failure == nil { failure = pendingFailure }
        idle.signal()
        closed = true
        for buffer in buffers {
            SecureMemory.zero(buffer)
            buffer.deallocate()
        }
        buffers = []
        return failure
    }
}
