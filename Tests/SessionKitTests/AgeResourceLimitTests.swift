import Foundation
import SignalPrimitives
import TestSupport
import XCTest
@_spi(Testing) @testable import SessionKit
@_spi(Testing) @testable import SessionKitAge

/// Files that ask the reader for unbounded work or memory (a security review's findings): an
/// scrypt stanza whose work factor needs gigabytes, and a header with a huge number of stanzas.
/// Each is refused with `AgeError.resourceLimit` before the work starts.
final class AgeResourceLimitTests: XCTestCase {
    private struct GreaseRecipient: AgeRecipient {
        let stanzas: [AgeStanza]
        func wrap(_ fileKey: AgeFileKey) throws(AgeError) -> [AgeStanza] { stanzas }
    }

    private func assertAgeError(_ expected: AgeError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? AgeError, expected, file: file, line: line)
        }
    }

    /// A binary age file with `stanzas`, a MAC of zeros (no key opens it) and a short payload:
    /// what an attacker writes, the header being all that matters.
    private func craftedFile(_ stanzas: [AgeStanza]) -> Data {
        Data(AgeTesting.encodeHeader(stanzas, mac: [UInt8](repeating: 0, count: 32)) + [UInt8](repeating: 7, count: 16 + 40))
    }

    /// An scrypt stanza at `workFactor` (a valid salt and a 32-byte body, wrapping nothing).
    private func scryptStanza(workFactor: Int) throws -> AgeStanza {
        try AgeStanza(arguments: ["scrypt", AgeBase64.encodeUnpadded([UInt8](repeating: 1, count: 16)), String(workFactor)],
                      body: [UInt8](repeating: 2, count: 32))
    }

    // MARK: scrypt work factor and memory

    /// The attack: a passphrase file (an "export" mailed to the user) whose scrypt stanza asks
    /// for work factor 22, 4 GiB of memory. The default identity used to accept it (its limit
    /// was the age tool's 22) and ran scrypt over 4 GiB; now the default is what the library
    /// writes plus 2, and the file is refused before any scrypt work.
    func testAnScryptFileAskingFor4GiBIsRefusedByDefaultBeforeScryptRuns() throws {
        XCTAssertEqual(AgeScryptRecipient.defaultWorkFactor, 18)
        XCTAssertEqual(AgeScryptIdentity.defaultMaximumWorkFactor, 20)
        let identity = try AgeScryptIdentity(passphrase: "correct horse")
        XCTAssertEqual(identity.maximumWorkFactor, 20)
        for workFactor in [21, 22, 30] {
            assertAgeError(.resourceLimit(.scryptWorkFactor(found: workFactor, maximum: 20))) {
                _ = try AgeDecryptor(identities: [identity]).decrypt(craftedFile([try scryptStanza(workFactor: workFactor)]))
            }
        }
        // A work factor of more than two digits is reported clamped, not parsed into an overflow.
        assertAgeError(.resourceLimit(.scryptWorkFactor(found: Int.max, maximum: 20))) {
            _ = try AgeDecryptor(identities: [identity]).decrypt(craftedFile([try scryptStanza(workFactor: 9_223_372_036_854_775_807)]))
        }
    }

    /// What the library writes by default (18) opens with the default identity: the limit is
    /// not below the library's own files.
    func testTheDefaultIdentityOpensWhatTheDefaultRecipientWrites() throws {
        let file = try AgeEncryptor(recipients: [try AgeScryptRecipient(passphrase: "correct horse")]).encrypt(Data("backup".utf8))
        let header = try AgeTesting.parseHeader([UInt8](file))
        XCTAssertEqual(header.stanzas.first?.arguments.last, String(AgeScryptRecipient.defaultWorkFactor))
        XCTAssertEqual(try AgeDecryptor(identities: [try AgeScryptIdentity(passphrase: "correct horse")]).decrypt(file), Data("backup".utf8))
    }

    /// An app that raised the limit for its own large files must still not be killed by a file
    /// asking for more memory than the device has: the memory is checked before scrypt runs.
    /// Here the process is told it has 1 GiB and the file asks for 4 GiB (work factor 22).
    func testARaisedLimitStillRefusesAWorkFactorWhoseMemoryTheProcessCannotHave() throws {
        let gibibyte: UInt64 = 1 << 30
        let identity = try AgeScryptIdentity(passphrase: "correct horse", maximumWorkFactor: 22, availableMemory: { gibibyte })
        assertAgeError(.resourceLimit(.scryptMemory(requiredByteCount: 4 << 30, availableByteCount: gibibyte))) {
            _ = try AgeDecryptor(identities: [identity]).decrypt(craftedFile([try scryptStanza(workFactor: 22)]))
        }
    }

    /// The memory rule at its boundary, with a real file at work factor 10 (128 · 8 · 2^10 =
    /// 1 MiB): exactly enough memory decrypts, one byte less is refused.
    func testTheMemoryCheckComparesWith128TimesRTimesN() throws {
        let file = try AgeEncryptor(recipients: [try AgeScryptRecipient(passphrase: "pw", workFactor: 10)]).encrypt(Data("x".utf8))
        let mebibyte: UInt64 = 128 * 8 * 1024
        let enough = try AgeScryptIdentity(passphrase: "pw", maximumWorkFactor: 10, availableMemory: { mebibyte })
        XCTAssertEqual(try AgeDecryptor(identities: [enough]).decrypt(file), Data("x".utf8))
        let short = try AgeScryptIdentity(passphrase: "pw", maximumWorkFactor: 10, availableMemory: { mebibyte - 1 })
        assertAgeError(.resourceLimit(.scryptMemory(requiredByteCount: mebibyte, availableByteCount: mebibyte - 1))) {
            _ = try AgeDecryptor(identities: [short]).decrypt(file)
        }
    }

    /// With the real memory figure: an identity raised to the highest limit (30) meets a file
    /// asking for 2^30, 1 TiB of memory. Before, scrypt was started (libsodium's allocation
    /// failed, or the system killed the process); now it is a typed refusal.
    func testTheSystemMemoryFigureRefusesATebibyteOfScrypt() throws {
        let available = try XCTUnwrap(ProcessMemory.availableByteCount())
        let physical = try XCTUnwrap(ProcessMemory.physicalByteCount())
        XCTAssertGreaterThan(available, 0)
        XCTAssertLessThanOrEqual(available, physical / 2)
        let identity = try AgeScryptIdentity(passphrase: "correct horse", maximumWorkFactor: 30)
        XCTAssertThrowsError(try AgeDecryptor(identities: [identity]).decrypt(craftedFile([try scryptStanza(workFactor: 30)]))) { error in
            guard case let .resourceLimit(.scryptMemory(required, availableThen)) = error as? AgeError else { return XCTFail("\(error)") }
            XCTAssertEqual(required, 1 << 40)
            XCTAssertLessThan(availableThen, required)
        }
    }

    // MARK: Stanza count

    /// The attack: a header with a huge number of (tiny) stanzas, each of which costs the
    /// reader memory and, when of a type an identity reads, a key agreement. The reader stops
    /// at the first stanza over `maximumStanzaCount`, before reading the rest of the header
    /// (here: no MAC line at all follows).
    func testAHeaderWithMoreStanzasThanTheLimitIsRefusedAtTheFirstStanzaOverIt() throws {
        XCTAssertEqual(AgeDecryptor.maximumStanzaCount, 4096)
        var header = Array("age-encryption.org/v1\n".utf8)
        for _ in 0 ..< AgeDecryptor.maximumStanzaCount + 1 { header += Array("-> g\n\n".utf8) }
        let identity = try AgeX25519Identity()
        var released = Data()
        let stream = AgeDecryptor(identities: [identity]).makeStream()
        XCTAssertThrowsError(try stream.update(Data(header), release: { released += $0 })) { error in
            XCTAssertEqual(error as? AgeError, .resourceLimit(.stanzaCount(maximum: AgeDecryptor.maximumStanzaCount)))
        }
        // One stanza fewer is only an unfinished header so far.
        let shorter = AgeDecryptor(identities: [identity]).makeStream()
        XCTAssertNoThrow(try shorter.update(Data(header.dropLast(6)), release: { released += $0 }))
        XCTAssertEqual(released, Data())
        // The same with X25519 stanzas (a key agreement each) and a MAC line, in a whole file.
        let x25519 = try AgeX25519Identity().recipient.wrap(AgeFileKey())[0]
        assertAgeError(.resourceLimit(.stanzaCount(maximum: AgeDecryptor.maximumStanzaCount))) {
            _ = try AgeDecryptor(identities: [identity]).decrypt(craftedFile(Array(repeating: x25519, count: AgeDecryptor.maximumStanzaCount + 1)))
        }
        assertAgeError(.resourceLimit(.stanzaCount(maximum: AgeDecryptor.maximumStanzaCount))) {
            _ = try AgeTesting.parseHeader([UInt8](craftedFile(Array(repeating: x25519, count: AgeDecryptor.maximumStanzaCount + 1))))
        }
    }

    /// At the limit a file still opens (the matching stanza last), and the encryptor refuses to
    /// write a header that readers would refuse.
    func testAFileWithExactlyTheMaximumStanzasOpensAndTheEncryptorWritesNoMore() throws {
        let identity = try AgeX25519Identity()
        let grease = try AgeStanza(arguments: ["grease-type", "a"], body: [1, 2, 3])
        let filler = GreaseRecipient(stanzas: Array(repeating: grease, count: AgeDecryptor.maximumStanzaCount - 1))
        let file = try AgeEncryptor(recipients: [filler, identity.recipient]).encrypt(Data("hello".utf8))
        XCTAssertEqual(try AgeTesting.parseHeader([UInt8](file)).stanzas.count, AgeDecryptor.maximumStanzaCount)
        XCTAssertEqual(try AgeDecryptor(identities: [identity]).decrypt(file), Data("hello".utf8))

        let tooMany = GreaseRecipient(stanzas: Array(repeating: grease, count: AgeDecryptor.maximumStanzaCount))
        XCTAssertThrowsError(try AgeEncryptor(recipients: [tooMany, identity.recipient]).encrypt(Data("hello".utf8))) { error in
            guard case .invalidRecipient = error as? AgeError else { return XCTFail("\(error)") }
        }
    }
}
