import Foundation
@_spi(Storage) import SessionKit

/// The prekeys as the store last read or wrote them, with the sealed value they came from, so
/// that a prekey message (which reads the prekeys to decrypt and again in its commit) does not
/// open and load the blob each time: loading recomputes the public key of every one-time and
/// signed prekey held, a scalar multiplication each.
///
/// An entry is used only when the sealed value in the file is byte for byte the one it came
/// from (its nonce is random per write), so prekeys another process wrote, or a write whose
/// transaction rolled back, are read again, never trusted from here. It holds the prekeys the
/// store loaded anyway; their secrets are in wiping storage (`LocalPreKeys`' keys).
final class PreKeysCache: @unchecked Sendable {
    private let lock = NSLock()
    private var sealed: [UInt8]?
    private var keys: LocalPreKeys?

    /// The prekeys loaded from `sealed`, when they are the last read or written.
    func keys(sealedAs sealed: [UInt8]) -> LocalPreKeys? {
        lock.lock()
        defer { lock.unlock() }
        return self.sealed == sealed ? keys : nil
    }

    /// Remembers `keys`, read from or written as `sealed`.
    func store(_ keys: LocalPreKeys, sealedAs sealed: [UInt8]) {
        lock.lock()
        defer { lock.unlock() }
        self.sealed = sealed
        self.keys = keys
    }
}
