#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The file-to-file loop of `AgeEncryptor.encrypt(contentsOf:to:)` and
/// `AgeDecryptor.decrypt(contentsOf:to:)`: reads the source in pieces, pushes them through a
/// stream, writes what the stream hands out to a temporary file (`AtomicFileWriter`) and
/// renames it over the destination once the stream finished without an error.
enum AgeFilePipe {
    /// The codec the pipe drives: `update` and `finish` hand their output to the closure they
    /// are given (valid only during the call).
    struct Codec {
        /// Sets the batch size of the payload codec, before the first `update`.
        let useBatches: (_ batchChunks: Int) -> Void
        /// Pushes a piece of the source.
        let update: (UnsafeRawBufferPointer, (UnsafeRawBufferPointer) -> Void) throws(AgeError) -> Void
        /// Ends the source.
        let finish: ((UnsafeRawBufferPointer) -> Void) throws(AgeError) -> Void
    }

    /// Runs `source` through `codec` into `destination`. The codec's batch size is
    /// `parallelism`'s when the source has at least `minimumParallelByteCount` bytes (the source
    /// is then read `chunksPerPiece` units at a time), 1 otherwise (read one unit at a time).
    /// - Parameter unit: the bytes of one chunk in the source (plaintext or sealed chunk).
    /// - Throws: what the codec throws; `AgeError.file` when a file cannot be read or written
    ///   (the temporary file is removed and `destination` is untouched on any error).
    static func run(from source: URL, to destination: URL, unit: Int, parallelism: AgeParallelism,
                    codec: Codec) throws(AgeError) {
        do {
            let input = try ReadableFile(source)
            let size = try input.byteCount()
            let parallel = parallelism.isParallel && size >= parallelism.minimumParallelByteCount
            let batchChunks = parallel ? parallelism.batchChunks : 1
            codec.useBatches(batchChunks)
            let output = try AtomicFileWriter(destination)
            var writeFailure: FileAccessError?
            let write = { (bytes: UnsafeRawBufferPointer) in
                guard writeFailure == nil else { return }
                do throws(FileAccessError) { try output.write(bytes) } catch { writeFailure = error }
            }
            do throws(FileError<AgeError>) {
                try input.forEachPiece(size: unit * batchChunks) { (piece: UnsafeRawBufferPointer) throws(AgeError) in
                    try codec.update(piece, write)
                    if let writeFailure { throw .file(writeFailure.description) }
                }
            } catch {
                switch error {
                case let .access(failure): throw AgeError.file(failure.description)
                case let .body(failure): throw failure
                }
            }
            try codec.finish(write)
            if let writeFailure { throw AgeError.file(writeFailure.description) }
            try output.commit()
        } catch let error as FileAccessError {
            throw .file(error.description)
        } catch let error as AgeError {
            throw error
        } catch {
            throw .file("\(error)")
        }
    }
}
