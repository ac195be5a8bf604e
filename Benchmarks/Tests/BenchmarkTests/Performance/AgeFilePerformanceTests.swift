import BenchmarkHarness
import XCTest

/// XCTest `measure` blocks over the age rows of SPEC §10 (issue 20): scrypt at age's default
/// work factor, 256 MiB files against the `age` command (skipped where it is not installed) and
/// the peak-memory rows on a 1 GiB file (measured here for time; the bench run reports their
/// peak resident bytes). Slow: seconds per iteration.
final class AgeFilePerformanceTests: XCTestCase {
    func testAgeScryptWrapUnwrapLibrary() throws { try measureCase("age.scrypt.wrap-unwrap.logN18", .library) }
    func testAgeScryptWrapUnwrapFloor() throws { try measureCase("age.scrypt.wrap-unwrap.logN18", .floor) }

    func testAgeCLIEncrypt256MiBLibrary() throws { try measureCase("age.cli.encrypt.256MiB", .library) }
    func testAgeCLIEncrypt256MiBFloor() throws { try measureCase("age.cli.encrypt.256MiB", .floor) }
    func testAgeCLIDecrypt256MiBLibrary() throws { try measureCase("age.cli.decrypt.256MiB", .library) }
    func testAgeCLIDecrypt256MiBFloor() throws { try measureCase("age.cli.decrypt.256MiB", .floor) }

    func testAgeMemoryFile1GiBLibrary() throws { try measureCase("age.memory.file.1GiB", .library) }
    func testAgeMemoryFile1GiBFloor() throws { try measureCase("age.memory.file.1GiB", .floor) }
    func testAgeMemoryStream1GiBLibrary() throws { try measureCase("age.memory.stream.1GiB", .library) }
    func testAgeMemoryStream1GiBFloor() throws { try measureCase("age.memory.stream.1GiB", .floor) }
}
