import BenchmarkHarness

/// One contender's implementation of a case: the timed workload and a single output of the
/// same operation on fixed inputs, which the case compares across contenders before timing.
struct Probe {
    let workload: Workload
    let output: () throws -> [UInt8]

    init(workload: Workload, output: @escaping () throws -> [UInt8]) {
        self.workload = workload
        self.output = output
    }
}

extension BenchmarkCase {
    /// A case whose contenders are probes; the check requires every contender's output to equal
    /// the floor's. `unit`, `batchMultiple` and `clock` are `BenchmarkCase`'s.
    static func probing(
        name: String, summary: String, group: CaseGroup, targets: RatioTargets,
        unit: CaseUnit = .nanosecondsPerOperation, batchMultiple: Int = 1, clock: BenchClock? = nil,
        library: (() throws -> Probe)?, floor: @escaping () throws -> Probe, swiftCrypto: (() throws -> Probe)?
    ) -> BenchmarkCase {
        BenchmarkCase(
            name: name, summary: summary, group: group, targets: targets, unit: unit, batchMultiple: batchMultiple,
            clock: clock, library: library.map { make in { try make().workload } },
            floor: { try floor().workload },
            swiftCrypto: swiftCrypto.map { make in { try make().workload } },
            check: {
                let expected = try floor().output()
                if let library {
                    try CheckFailure.expect(hex(try library().output()), equals: hex(expected), "\(name): library vs floor")
                }
                if let swiftCrypto {
                    try CheckFailure.expect(
                        hex(try swiftCrypto().output()), equals: hex(expected), "\(name): swift-crypto vs floor")
                }
            })
    }
}

/// Lowercase hex, for check messages.
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}

/// Random input bytes for the cases (the same bytes go to every contender of a case).
enum Fixture {
    static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
