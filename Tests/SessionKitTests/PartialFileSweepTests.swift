import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// The file decryptions write plaintext to a temporary `.<name>.partial-<hex>` file and rename
/// it at the end; a process that dies meanwhile (a crash, the system ending the app) leaves
/// plaintext on disk. Those files are swept: by the next decryption to the same destination,
/// and by `removeStalePartialFiles(in:olderThan:)`, but never while a writer holds one.
final class PartialFileSweepTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("partial-sweep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    private func listing() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) }

    /// Writes `contents` to `name` and dates its modification `age` seconds back.
    @discardableResult
    private func leave(_ name: String, _ contents: String = "plaintext of a dead decryption", age: TimeInterval) throws -> URL {
        let file = url(name)
        try Data(contents.utf8).write(to: file)
        try backdate(file, by: age)
        return file
    }

    private func backdate(_ file: URL, by age: TimeInterval) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: file.path)
    }

    /// The attack surface: a decryption killed half-way leaves `.<name>.partial-<hex>` holding
    /// plaintext. The next decryption to that destination removes it (it is an hour old and
    /// nobody holds it), for the age file path and the attachment file path.
    func testTheNextDecryptionToADestinationRemovesAPartialFileADeadProcessLeft() throws {
        let identity = try AgeX25519Identity()
        let source = url("secret.age")
        try AgeEncryptor(recipients: [identity.recipient]).encrypt(Data("the secret".utf8)).write(to: source)
        let stale = ".secret.txt.partial-0123456789abcdef"
        try leave(stale, age: 3600)
        // A partial file of another destination in the same folder is not this call's business.
        let otherDestination = ".other.txt.partial-00aa"
        try leave(otherDestination, age: 3600)

        try AgeDecryptor(identities: [identity]).decrypt(contentsOf: source, to: url("secret.txt"))
        XCTAssertEqual(try Data(contentsOf: url("secret.txt")), Data("the secret".utf8))
        XCTAssertEqual(try listing(), ["secret.age", "secret.txt", otherDestination])

        let attachment = try Attachment.encrypt(Data("attached".utf8))
        try attachment.ciphertext.write(to: url("photo.bin"))
        let staleAttachment = ".photo.jpg.partial-ff"
        try leave(staleAttachment, age: 3600)
        try Attachment.decrypt(contentsOf: url("photo.bin"), pointer: attachment.pointer, to: url("photo.jpg"))
        XCTAssertEqual(try Data(contentsOf: url("photo.jpg")), Data("attached".utf8))
        XCTAssertEqual(try listing(), ["secret.age", "secret.txt", otherDestination, "photo.bin", "photo.jpg"])
    }

    /// A partial file modified recently may belong to a decryption still running (in a
    /// process that does not lock, or being created): the automatic sweep waits 15 minutes.
    func testARecentPartialFileIsKept() throws {
        let identity = try AgeX25519Identity()
        let source = url("secret.age")
        try AgeEncryptor(recipients: [identity.recipient]).encrypt(Data("the secret".utf8)).write(to: source)
        let recent = ".secret.txt.partial-abc"
        try leave(recent, age: 60)
        try AgeDecryptor(identities: [identity]).decrypt(contentsOf: source, to: url("secret.txt"))
        XCTAssertTrue(try listing().contains(recent))
        XCTAssertEqual(try AgeDecryptor.removeStalePartialFiles(in: folder), 0)
        XCTAssertTrue(try listing().contains(recent))
        // With a zero age it goes (nobody holds it).
        XCTAssertEqual(try AgeDecryptor.removeStalePartialFiles(in: folder, olderThan: .zero), 1)
        XCTAssertFalse(try listing().contains(recent))
    }

    /// A decryption that is still writing holds a lock on its partial file, so no sweep removes
    /// it, however old its last write and whatever the minimum age; once it is committed or
    /// discarded, nothing is left.
    func testAPartialFileAWriterHoldsIsNeverRemoved() throws {
        let destination = url("movie.mp4")
        let writer = try AtomicFileWriter(destination)
        try Data("first chunk".utf8).withUnsafeBytes { try writer.write($0) }
        let partial = try XCTUnwrap(try listing().first { $0.hasPrefix(".movie.mp4.partial-") })
        try backdate(url(partial), by: 3600)

        XCTAssertEqual(try AgeDecryptor.removeStalePartialFiles(in: folder, olderThan: .zero), 0)
        XCTAssertEqual(try Attachment.removeStalePartialFiles(in: folder, olderThan: .zero), 0)
        // Nor does another writer to the same destination (its own start-up sweep).
        let second = try AtomicFileWriter(destination)
        XCTAssertTrue(try listing().contains(partial))
        second.discard()

        try writer.commit()
        XCTAssertEqual(try listing(), ["movie.mp4"])
        XCTAssertEqual(try Data(contentsOf: destination), Data("first chunk".utf8))

        // The same for an uncommitted writer that is released: its file is gone.
        let third = try AtomicFileWriter(url("other"))
        XCTAssertEqual(try listing().count, 2)
        third.discard()
        XCTAssertEqual(try listing(), ["movie.mp4"])
    }

    /// Across processes, with a real crash: another process (as an app extension decrypting at
    /// the same time would) holds the lock on an hour-old partial file, and the sweep keeps
    /// the file; once that process is killed, the system has released the lock and the same
    /// sweep removes it.
    func testAFileLockedByAnotherProcessIsKeptUntilThatProcessIsKilled() throws {
        let shell = "/bin/sh", flock = "/usr/bin/flock"
        guard FileManager.default.isExecutableFile(atPath: shell), FileManager.default.isExecutableFile(atPath: flock) else {
            throw XCTSkip("needs /bin/sh and util-linux's /usr/bin/flock")
        }
        let name = ".video.mp4.partial-beef"
        let file = try leave(name, age: 3600)
        // The shell holds descriptor 9 (the lock belongs to its open file description, which
        // flock(1) shares), says so, and waits on its standard input.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: shell)
        holder.arguments = ["-c", "exec 9<\"$1\" && \(flock) -x -n 9 && echo locked && read line", "holder", file.path]
        let output = Pipe(), input = Pipe()
        holder.standardOutput = output
        holder.standardInput = input
        try holder.run()
        defer {
            if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }
            holder.waitUntilExit()
        }
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        XCTAssertEqual(said, "locked\n")

        XCTAssertEqual(try AgeDecryptor.removeStalePartialFiles(in: folder), 0)
        XCTAssertEqual(try Attachment.removeStalePartialFiles(in: folder, olderThan: .zero), 0)
        XCTAssertTrue(try listing().contains(name))

        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        XCTAssertEqual(holder.terminationReason, .uncaughtSignal)
        XCTAssertEqual(try AgeDecryptor.removeStalePartialFiles(in: folder), 1)
        XCTAssertFalse(try listing().contains(name))
    }

    /// The sweep an app runs at launch removes the stale partial files of every destination in
    /// the folder, and nothing else: not files whose names only look alike, not links, not
    /// folders.
    func testTheLaunchSweepRemovesOnlyStalePartialFiles() throws {
        let stale = [".a.partial-0", ".b.txt.partial-0123456789abcdef", "..partial-1f.partial-2e"]
        for name in stale { try leave(name, age: 3600) }
        let keep = [
            "notes.txt", ".hidden", ".a.partial-", ".a.partial-XYZ", ".a.partial-0123456789abcdef0", ".partial-ab",
            "a.partial-ab", ".a.partial-ab.txt",
        ]
        for name in keep { try leave(name, "user data", age: 3600) }
        try FileManager.default.createDirectory(at: url(".d.partial-ab"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: url(".l.partial-ab").path, withDestinationPath: url("notes.txt").path)

        XCTAssertEqual(try Attachment.removeStalePartialFiles(in: folder), stale.count)
        XCTAssertEqual(try listing(), Set(keep + [".d.partial-ab", ".l.partial-ab"]))
        XCTAssertEqual(try Data(contentsOf: url("notes.txt")), Data("user data".utf8))
        XCTAssertEqual(try AgeDecryptor.removeStalePartialFiles(in: folder, olderThan: .zero), 0)

        XCTAssertThrowsError(try AgeDecryptor.removeStalePartialFiles(in: url("missing"))) { error in
            guard case .file = error as? AgeError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try Attachment.removeStalePartialFiles(in: url("missing"))) { error in
            guard case .file = error as? SessionError else { return XCTFail("\(error)") }
        }
    }
}
