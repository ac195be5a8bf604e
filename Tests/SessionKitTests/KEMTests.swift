@_spi(Testing) import SessionKit
import SessionKitMLKEM
import SignalPrimitives
import XCTest

final class KEMTests: XCTestCase {
    private func randomSeed() -> SecureBytes { SecureBytes(copying: SecureRandom.bytes(KEMSeed.byteCount)) }

    func testEncapsulationAndDecapsulationAgree() throws {
        let kem = try mlkem()
        let seed = randomSeed()
        let key = try kem.encapsulationKey(fromSeed: seed)
        XCTAssertEqual(key.rawRepresentation.count, KEMEncapsulationKey.byteCount)
        XCTAssertEqual(key.encoded.first, 0x0B)
        XCTAssertEqual(key.encoded.count, 1185)
        let encapsulation = try kem.encapsulate(to: key)
        XCTAssertEqual(encapsulation.ciphertext.count, 1088)
        let secret = try kem.decapsulate(encapsulation.ciphertext, seed: seed)
        XCTAssertTrue(secret.constantTimeEquals(encapsulation.sharedSecret))
        // The same seed always gives the same key (keys are stored as seeds).
        XCTAssertEqual(try kem.encapsulationKey(fromSeed: seed), key)
    }

    func testAModifiedCiphertextDecapsulatesToAnotherSecret() throws {
        let kem = try mlkem()
        let seed = randomSeed()
        let encapsulation = try kem.encapsulate(to: try kem.encapsulationKey(fromSeed: seed))
        var modified = encapsulation.ciphertext
        modified[100] ^= 1
        let secret = try kem.decapsulate(modified, seed: seed)   // implicit rejection: no error
        XCTAssertFalse(secret.constantTimeEquals(encapsulation.sharedSecret))
    }

    func testBadInputsAreTypedErrors() throws {
        let kem = try mlkem()
        let seed = randomSeed()
        XCTAssertThrowsError(try kem.encapsulationKey(fromSeed: SecureBytes(copying: SecureRandom.bytes(63)))) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
        XCTAssertThrowsError(try kem.decapsulate(SecureRandom.bytes(1087), seed: seed)) {
            XCTAssertEqual($0 as? SessionError, .invalidMessage)
        }
        XCTAssertThrowsError(try kem.decapsulate(SecureRandom.bytes(1088), seed: SecureBytes(copying: SecureRandom.bytes(32)))) {
            XCTAssertEqual($0 as? SessionError, .invalidKey)
        }
    }

    /// FIPS 203's input check, done by SessionKit without any KEM: length and every 12-bit
    /// coefficient below q = 3329.
    func testEncapsulationKeyInputCheck() throws {
        let valid = try mlkem().encapsulationKey(fromSeed: randomSeed()).rawRepresentation
        XCTAssertNoThrow(try KEMEncapsulationKey(rawRepresentation: valid))
        for count in [0, 1183, 1185] {
            XCTAssertThrowsError(try KEMEncapsulationKey(rawRepresentation: Array(repeating: 0, count: count))) {
                XCTAssertEqual($0 as? SessionError, .invalidKey)
            }
        }
        // The first coefficient of the triple at byte 513 set to q (3329 = 0xD01).
        var first = valid
        first[513] = 0x01
        first[514] = (first[514] & 0xF0) | 0x0D
        XCTAssertThrowsError(try KEMEncapsulationKey(rawRepresentation: first)) { XCTAssertEqual($0 as? SessionError, .invalidKey) }
        // The second coefficient of a triple set to 4095.
        var second = valid
        second[1150] |= 0xF0
        second[1151] = 0xFF
        XCTAssertThrowsError(try KEMEncapsulationKey(rawRepresentation: second)) { XCTAssertEqual($0 as? SessionError, .invalidKey) }
        // q − 1 everywhere is reduced; the 32-byte seed ρ at the end is not checked.
        var maximal = [UInt8]()
        for _ in 0 ..< 384 { maximal += [0x00, 0x0D, 0xD0] }   // 3328 = 0xD00, twice per three bytes
        maximal += [UInt8](repeating: 0xFF, count: 32)
        XCTAssertNoThrow(try KEMEncapsulationKey(rawRepresentation: maximal))
    }
}
