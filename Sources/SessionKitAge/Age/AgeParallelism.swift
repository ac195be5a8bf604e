#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch

/// How the file-to-file paths (age and attachments, `FilePipe`) run the STREAM payload
/// (issue 20): the file is read in pieces of `chunksPerPiece` chunks, the whole chunks of a
/// piece that are known not to be final are sealed or opened on all cores
/// (`DispatchQueue.concurrentPerform`), and the output is written by a background queue
/// (`BackgroundFileWriter`) while the next piece is read and processed. Chunks are independent
/// (their nonce is the counter and the final flag), so the output is byte for byte the
/// sequential one; memory grows to about four pieces (8 MiB: the piece read, the batch, two
/// write buffers).
///
/// Files shorter than `minimumParallelByteCount` keep the sequential path (64 KiB pieces, no
/// thread).
package struct AgeParallelism: Sendable {
    /// Whether chunks run on several threads (with one core it is not worth a thread hop).
    package let isParallel: Bool
    /// Chunks per piece read from the file and per batch.
    package let chunksPerPiece: Int
    /// Files shorter than this (in bytes of the file read) use the sequential path.
    package let minimumParallelByteCount: UInt64

    /// The library's choice: parallel on more than one active core, 32-chunk (2 MiB) pieces,
    /// from two pieces on.
    package static let automatic: AgeParallelism = {
        let chunks = 32
        return AgeParallelism(
            isParallel: ProcessInfo.processInfo.activeProcessorCount > 1, chunksPerPiece: chunks,
            minimumParallelByteCount: UInt64(2 * chunks * AgePayloadCipher.sealedChunkByteCount))
    }()

    /// Everything sequential, as before issue 20.
    package static let sequential = AgeParallelism(isParallel: false, chunksPerPiece: 1, minimumParallelByteCount: .max)

    /// The batch size a payload codec uses (1: no batches).
    package var batchChunks: Int { isParallel ? max(1, chunksPerPiece) : 1 }

    /// Runs `body(0 ..< count)` on all cores when there is more than one index, in order
    /// otherwise. `body` must only touch memory that belongs to its index.
    package static func forEachIndex(_ count: Int, _ body: @Sendable (Int) -> Void) {
        if count < 2 {
            for index in 0 ..< count { body(index) }
        } else {
            DispatchQueue.concurrentPerform(iterations: count, execute: body)
        }
    }
}

/// Memory that the threads of one batch share, each touching only its own index's part (raw
/// buffers are not `Sendable`; the batch owns them until `forEachIndex` returns).
struct SharedBatchMemory<Value>: @unchecked Sendable {
    /// The buffer.
    let value: Value
}
