import BenchmarkHarness
@_spi(Testing) import SessionKit
import SignalPrimitives

/// `prekeys.published.merge.100000`: a server's `PublishedPreKeys` merging a device's upload of
/// 100,000 one-time prekeys (the most it holds), then the same upload again (a retry: every key
/// already held), against the same all-or-nothing merge written naively on a dictionary.
enum PublishedPreKeysCase {
    /// The number of one-time prekeys merged.
    static let keyCount = 100_000

    /// Linear like the floor: ≤ 1.25 of it (the library also checks each id against the ids it
    /// handed out and keeps the keys as `PreKeyBundle.OneTimeKey` values).
    static let target = RatioTargets(floor: 1.25)

    static var merge: BenchmarkCase {
        .probing(
            name: "prekeys.published.merge.100000",
            summary: "PublishedPreKeys.merge of an upload of 100,000 one-time prekeys into a record holding none, then its retry",
            group: .protocol, targets: target,
            library: { try library() }, floor: { try floor() }, swiftCrypto: nil)
    }

    /// 100,000 distinct canonical X25519 keys with ids 1…100,000 (the merge checks canonicity,
    /// so no key needs generating).
    static let keys: [(id: UInt32, key: [UInt8])] = (1 ... UInt32(keyCount)).map { id in
        var bytes = [UInt8](repeating: 0x11, count: 32)
        withUnsafeBytes(of: id.bigEndian) { bytes.replaceSubrange(0 ..< 4, with: $0) }
        return (id, bytes)
    }

    /// What is held after the merge, oldest first: u32(id) || key, for the check.
    static func output(_ held: [(UInt32, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(held.count * 36)
        for (id, key) in held {
            withUnsafeBytes(of: id.bigEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: key)
        }
        return out
    }

    static func library() throws -> Probe {
        let identity = try IdentityKeyPair()
        let signed = PreKeyUpload.SignedKey(try SignedPreKey(id: 1, signedBy: identity))
        let registered = try PublishedPreKeys(registering: PreKeyUpload(
            identityKey: identity.publicKey, signedPreKey: signed, oneTimePreKeys: []))
        let upload = PreKeyUpload(
            identityKey: identity.publicKey, signedPreKey: nil,
            oneTimePreKeys: try keys.map { PreKeyBundle.OneTimeKey(id: $0.id, publicKey: try X25519.PublicKey(rawRepresentation: $0.key)) })
        func merged() throws -> PublishedPreKeys {
            var published = registered
            try published.merge(upload)
            try published.merge(upload)
            return published
        }
        return Probe(
            workload: .repeating { blackHole(try merged()) },
            output: { output(try merged().oneTimePreKeys.map { ($0.id, $0.publicKey.rawRepresentation) }) })
    }

    static func floor() throws -> Probe {
        let upload = keys
        func merged() throws -> NaivePublishedKeys {
            var published = NaivePublishedKeys()
            try published.merge(upload)
            try published.merge(upload)
            return published
        }
        return Probe(
            workload: .repeating { blackHole(try merged()) },
            output: { let published = try merged(); return output(published.order.map { ($0, published.keys[$0] ?? []) }) })
    }
}

/// The floor: the one-time prekeys of one device in a dictionary by id plus their order, merged
/// all or nothing (every key checked, then added), at most 100,000 held.
struct NaivePublishedKeys {
    var order: [UInt32] = []
    var keys: [UInt32: [UInt8]] = [:]

    struct Refused: Error {}

    mutating func merge(_ upload: [(id: UInt32, key: [UInt8])]) throws {
        var added: [(UInt32, [UInt8])] = []
        var seen: [UInt32: [UInt8]] = [:]
        for (id, key) in upload {
            guard key.withUnsafeBytes(isCanonicalX25519) else { throw Refused() }
            if let held = keys[id] ?? seen[id] {
                guard held == key else { throw Refused() }
                continue
            }
            seen[id] = key
            added.append((id, key))
        }
        guard keys.count + added.count <= PublishedPreKeysCase.keyCount else { throw Refused() }
        for (id, key) in added {
            keys[id] = key
            order.append(id)
        }
    }
}
