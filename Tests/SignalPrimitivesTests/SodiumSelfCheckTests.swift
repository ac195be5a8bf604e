import CSodium
@testable import SignalPrimitives
import XCTest

/// SPEC §1: the libsodium self-check against CVE-2025-69277.
final class SodiumSelfCheckTests: XCTestCase {
    func testTheLinkedLibsodiumPassesTheSelfCheck() {
        XCTAssertTrue(Sodium.pointValidationIsSound, "libsodium \(Sodium.libraryVersion) accepts a mixed-order point")
    }

    /// The probe point is B plus the point of order 2, (0, −1): in the curve, outside the
    /// prime-order subgroup. Computed here with libsodium's point addition, not taken on trust.
    func testTheProbePointIsTheBasePointPlusThePointOfOrderTwo() throws {
        var orderTwo = [UInt8](repeating: 0xFF, count: 32)   // y = p − 1 = −1, x = 0
        orderTwo[0] = 0xEC
        orderTwo[31] = 0x7F
        var sum = [UInt8](repeating: 0, count: 32)
        let rc = sum.withUnsafeMutableBufferPointer { out in
            Sodium.basePoint.withUnsafeBufferPointer { b in
                orderTwo.withUnsafeBufferPointer { t in
                    crypto_core_ed25519_add(out.baseAddress!, b.baseAddress!, t.baseAddress!)
                }
            }
        }
        XCTAssertEqual(rc, 0)
        XCTAssertEqual(sum, Sodium.mixedOrderPoint)
        // It is not −B (B with the sign bit set), which is in the prime-order subgroup.
        let minusB = Array(Sodium.basePoint.dropLast()) + [Sodium.basePoint[31] | 0x80]
        XCTAssertNotEqual(minusB, Sodium.mixedOrderPoint)
        XCTAssertEqual(minusB.withUnsafeBufferPointer { crypto_core_ed25519_is_valid_point($0.baseAddress!) }, 1)
        // And B is the generator libsodium uses.
        var generator = [UInt8](repeating: 0, count: 32)
        var one = [UInt8](repeating: 0, count: 32)
        one[0] = 1
        XCTAssertEqual(generator.withUnsafeMutableBufferPointer { g in
            one.withUnsafeBufferPointer { crypto_scalarmult_ed25519_base_noclamp(g.baseAddress!, $0.baseAddress!) }
        }, 0)
        XCTAssertEqual(generator, Sodium.basePoint)
    }

    func testAValidatorThatAcceptsTheMixedOrderPointFailsTheCheck() {
        XCTAssertFalse(Sodium.checkPointValidation { _ in 1 })
        // CVE-2025-69277's behaviour: everything on the curve with L·P of X = 0 passes.
        XCTAssertFalse(Sodium.checkPointValidation { point in
            Array(UnsafeBufferPointer(start: point, count: 32)) == Sodium.mixedOrderPoint ? 1 : crypto_core_ed25519_is_valid_point(point)
        })
        XCTAssertFalse(Sodium.checkPointValidation { _ in 0 }, "a validator that refuses the base point is not sound either")
        XCTAssertTrue(Sodium.checkPointValidation { crypto_core_ed25519_is_valid_point($0) })
    }

    /// Where the check fails, operations that validate points throw a typed error naming the
    /// problem instead of accepting or refusing as if the answer were meaningful.
    func testAnUnsoundLibsodiumMakesPointValidationThrowANamedError() throws {
        let key = try Ed25519.PrivateKey(using: SystemRandomSource()).publicKey
        XCTAssertNoThrow(try key.validatePoint(libraryIsSound: true))
        XCTAssertThrowsError(try key.validatePoint(libraryIsSound: false)) {
            XCTAssertEqual($0 as? CryptoError, .unsoundPointValidation)
        }
        XCTAssertTrue(CryptoError.unsoundPointValidation.description.contains("CVE-2025-69277"))
        // The mixed-order point itself is refused by a sound libsodium.
        let mixed = try Ed25519.PublicKey(rawRepresentation: Sodium.mixedOrderPoint)
        XCTAssertThrowsError(try mixed.validatePoint()) { XCTAssertEqual($0 as? CryptoError, .invalidKey) }
        XCTAssertThrowsError(try mixed.convertToX25519()) { XCTAssertEqual($0 as? CryptoError, .invalidKey) }
    }
}
