// Harness `export_reader`: the account export's plaintext reader (SPEC §10, JSON Lines), alone
// and behind the age decryptor. Built with Sources/SessionKitSQLite/Export/ExportFormat.swift
// compiled in (the reader has no GRDB code; see build.sh).
//
// Input: a mode byte, a split byte, then the plaintext.
// - Mode even: the plaintext goes to `ExportLineReader` whole and again in pieces (sizes from
//   the split byte).
// - Mode odd: the plaintext is also encrypted to a fixed X25519 identity (fixed file key and
//   nonce), binary or armored (bit 1), and read through `AgeDecryptingStream` in pieces into
//   the reader; with bit 2 one byte of the file (position and mask from the split byte and
//   the plaintext length) is changed first.
//
// Invariants: the reader never traps; its events (header, items, skipped lines with their
// numbers and reasons) and its error do not depend on how the plaintext is split; the header
// error is the one `decodeHeader` gives the first line; line numbers increase by one from 2;
// every decoded item re-encodes (`ExportLineEncoder`) to a line that decodes to the same item;
// no line held is longer than the limit. Behind age: the unchanged file gives exactly the
// events of the plaintext; a changed file either fails with an age error or gives the same
// events (an armor whitespace change), and the events released before a failure are a prefix
// of the plaintext's events.
@_spi(Testing) import SessionKit
import SignalPrimitives
import Verification
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

enum Harness {
    static let identity = must { AgeX25519Identity(privateKey: try X25519.PrivateKey(bytes: SecureBytes(copying: fixedBytes(32, seed: 0xE4)))) }
    static let limit = 4096

    /// An event as text, to compare runs.
    static func describe(_ event: ExportLineReader.Event) -> String {
        switch event {
        case let .header(header): return "H \(header.userID.utf8.map { $0 }) \(header.created)"
        case let .item(line, item): return "I \(line) \(describe(item))"
        case let .skipped(line, kind, reason): return "S \(line) \(kind.map { Array($0.utf8) } ?? []) \(reason)"
        }
    }

    static func describe(_ item: ExportItem) -> String {
        switch item {
        case let .identity(seed): return "identity \(seed.seed.bytes) \(seed.publicKey)"
        case let .trust(user, record):
            return "trust \(Array(user.utf8)) \(record.status) \(record.identityKey.rawRepresentation) "
                + "\(record.previousIdentityKey?.rawRepresentation ?? []) \(record.devices) \(record.supersededIdentityKeys.map(\.rawRepresentation))"
        case let .message(conversation, id, timestamp, body):
            return "message \(Array(conversation.utf8)) \(Array(id.utf8)) \(timestamp) \(body.bytes)"
        }
    }

    /// The reader's events and error for `plaintext` fed in `pieces` sizes (cycled).
    static func read(_ plaintext: [UInt8], pieces: [Int]) -> (events: [String], error: ExportFormatError?, largest: Int) {
        var reader = ExportLineReader(maximumLineByteCount: limit)
        var events: [String] = []
        var offset = 0, index = 0
        do throws(ExportFormatError) {
            while offset < plaintext.count {
                let size = max(1, pieces[index % pieces.count])
                index += 1
                let end = min(plaintext.count, offset + size)
                try Array(plaintext[offset ..< end]).withBytes { (bytes: UnsafeRawBufferPointer) throws(ExportFormatError) in try reader.update(bytes) }
                events += reader.takeEvents().map(describe)
                offset = end
            }
            try reader.finish()
            events += reader.takeEvents().map(describe)
            return (events, nil, reader.largestLineByteCount)
        } catch {
            events += reader.takeEvents().map(describe)
            return (events, error, reader.largestLineByteCount)
        }
    }

    /// Checks the items of `plaintext` one by one: numbering, the header reference, re-encoding.
    static func checkEvents(_ plaintext: [UInt8]) {
        var reader = ExportLineReader(maximumLineByteCount: limit)
        var events: [ExportLineReader.Event] = []
        var failure: ExportFormatError?
        do throws(ExportFormatError) {
            try plaintext.withBytes { (bytes: UnsafeRawBufferPointer) throws(ExportFormatError) in try reader.update(bytes) }
            try reader.finish()
        } catch {
            failure = error
        }
        events = reader.takeEvents()
        let firstLine = Array(plaintext.prefix { $0 != 0x0A })
        if firstLine.count <= limit, !plaintext.isEmpty {
            var reference: ExportFormatError?
            do throws(ExportFormatError) { _ = try ExportLineReader.decodeHeader(firstLine) } catch { reference = error }
            if let reference { invariant(failure == reference, "header error \(String(describing: failure)), decodeHeader says \(reference)") }
        }
        var expectedLine = 2
        for (position, event) in events.enumerated() {
            switch event {
            case .header:
                invariant(position == 0, "a header after the first event")
            case let .skipped(line, _, _):
                invariant(line == expectedLine, "skipped line \(line), expected \(expectedLine)")
                expectedLine += 1
            case let .item(line, item):
                invariant(line == expectedLine, "item line \(line), expected \(expectedLine)")
                expectedLine += 1
                let encoded: [UInt8]
                switch item {
                case let .identity(seed):
                    encoded = seed.seed.withUnsafeBytes { ExportLineEncoder.identity(seed: $0, publicKey: seed.publicKey) }
                case let .trust(user, record):
                    encoded = ExportLineEncoder.trust(userID: user, record: record)
                case let .message(conversation, id, timestamp, body):
                    encoded = body.withUnsafeBytes { ExportLineEncoder.message(conversationID: conversation, messageID: id, timestamp: timestamp, body: $0) }
                }
                invariant(encoded.last == 0x0A && encoded.dropLast().allSatisfy { $0 != 0x0A }, "an encoded item is not one line")
                let again = ExportLineReader.decodeItem(Array(encoded.dropLast()), lineNumber: line)
                invariant(describe(again) == describe(event), "an item does not survive re-encoding: \(describe(event)) → \(describe(again))")
            }
        }
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let mode = input.byte()
        let split = input.byte()
        let plaintext = input.rest()
        let whole = read(plaintext, pieces: [max(1, plaintext.count)])
        let pieces = [Int(split % 17) + 1, Int(split >> 4) * 13 + 1, 1]
        let split_ = read(plaintext, pieces: pieces)
        invariant(whole.events == split_.events, "events depend on the split")
        invariant(whole.error == split_.error, "the error depends on the split: \(String(describing: whole.error)) vs \(String(describing: split_.error))")
        invariant(whole.largest <= limit && split_.largest <= limit, "a line longer than the limit was held")
        checkEvents(plaintext)
        guard mode & 1 == 1 else { return }

        // Behind age.
        let armored = mode & 2 != 0
        var file = encrypt(plaintext, armored: armored)
        var changed = false
        if mode & 4 != 0, !file.isEmpty {
            let position = (Int(split) * 7919 + plaintext.count) % file.count
            file[position] ^= (split | 1)
            changed = true
        }
        let stream = AgeDecryptingStream(identities: [identity])
        var reader = ExportLineReader(maximumLineByteCount: limit)
        var events: [String] = []
        var formatError: ExportFormatError?
        let release = { (bytes: UnsafeRawBufferPointer) in
            guard formatError == nil else { return }
            formatError = feed(&reader, bytes)
            events += reader.takeEvents().map(describe)
        }
        var ageError: AgeError?
        do throws(AgeError) {
            var offset = 0
            let size = Int(split) * 97 + 1
            while offset < file.count {
                let end = min(file.count, offset + size)
                try Array(file[offset ..< end]).withBytes { (b: UnsafeRawBufferPointer) throws(AgeError) in try stream.update(b, releaseBytes: release) }
                offset = end
            }
            try stream.finish(releaseBytes: release)
        } catch {
            ageError = error
        }
        if ageError == nil, formatError == nil {
            do throws(ExportFormatError) { try reader.finish() } catch { formatError = error }
            events += reader.takeEvents().map(describe)
        }
        if let ageError {
            invariant(changed, "an unchanged file failed: \(ageError)")
            invariant(events.count <= whole.events.count && Array(whole.events.prefix(events.count)) == events,
                      "events released before an age failure are not a prefix of the plaintext's")
        } else {
            invariant(events == whole.events, "the decrypted file gives other events than its plaintext")
            invariant(formatError == whole.error, "the decrypted file gives another error than its plaintext")
        }
    }

    /// `plaintext` as an age file to `identity` (fixed file key and nonce).
    static func encrypt(_ plaintext: [UInt8], armored: Bool) -> [UInt8] {
        var file: [UInt8] = []
        do throws(AgeError) {
            let fileKey = try AgeFileKey(bytes: SecureBytes(copying: fixedBytes(16, seed: 1)))
            let stream = try AgeEncryptor(recipients: [identity.recipient], armored: armored).makeStream(fileKey: fileKey, nonce: fixedBytes(16, seed: 2))
            let data = try stream.update(Data(plaintext))
            file += data
            file += try stream.finish()
        } catch {
            fail("encrypting: \(error)")
        }
        return file
    }

    /// `reader.update`, its error returned.
    static func feed(_ reader: inout ExportLineReader, _ bytes: UnsafeRawBufferPointer) -> ExportFormatError? {
        do throws(ExportFormatError) {
            try reader.update(bytes)
            return nil
        } catch {
            return error
        }
    }

    static func seeds() -> [[UInt8]] {
        let seed = fixedBytes(32, seed: 7)
        let pair = must { try IdentityKeyPair(seed: seed) }
        var identityLine: [UInt8] = []
        seed.withUnsafeBytes { identityLine = ExportLineEncoder.identity(seed: $0, publicKey: pair.publicKey.rawRepresentation) }
        let header = ExportLineEncoder.header(ExportHeader(userID: "alice", created: 1_764_150_000))
        let record = TrustRecord(
            identityKey: must { try Ed25519.PublicKey(rawRepresentation: pair.publicKey.rawRepresentation) }, status: .verified,
            previousIdentityKey: nil, devices: [1, 2], supersededIdentityKeys: [])
        let trust = ExportLineEncoder.trust(userID: "bob", record: record)
        let message = [UInt8]("hello".utf8).withUnsafeBytes {
            ExportLineEncoder.message(conversationID: "bob", messageID: "m1", timestamp: 5, body: $0)
        }
        let full = header + identityLine + trust + message
        var seeds: [[UInt8]] = []
        for mode: UInt8 in [0, 1, 3, 5, 7] {
            seeds.append([mode, 3] + full)
        }
        seeds.append([0, 0] + header + Array(#"{"kind":"contact"}"#.utf8) + [0x0A] + Array("[1]\n\n".utf8))
        seeds.append([0, 9] + Array(#"{"format":"sessionkit-export","version":2,"user":"a","created":1}"#.utf8))
        seeds.append([0, 9] + Array(#"{"format":"other","version":1}"#.utf8) + [0x0A])
        seeds.append([1, 200] + header + Array(repeating: UInt8(ascii: "x"), count: 5000) + [0x0A] + message)
        return seeds
    }
}
