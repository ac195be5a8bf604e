/// The machine-readable results: `results/latest.json`.
///
/// A JSON array with one object per measured case:
///
///     {"name": …, "library_ns": …, "floor_ns": …, "swiftcrypto_ns": … or null,
///      "ratio_floor": …, "ratio_swiftcrypto": … or null, …}
///
/// followed by descriptive fields (`group`, `summary`, the targets, the quartiles, `rounds`,
/// `clock`, `unit`). A case with a target relative to another case also has `baseline_case`,
/// `ratio_baseline` (library / the baseline's library), `floor_ratio_baseline` (the same for
/// the floors) and `target_ratio_baseline`.
///
/// The figures (`library_ns`, `floor_ns`, `swiftcrypto_ns` and their quartiles) are medians in
/// the row's `unit`: `"ns/op"`, nanoseconds per operation, for every case except the
/// throughput cases, whose `unit` is `"msgs/s"` (messages per second, higher is better, timed
/// on the wall clock: their `clock` is `"wall"`). The field names stay those of the times so
/// that every row has the same fields. The ratios (`ratio_*`) and their targets are always
/// ratios of times per operation (so `ratio ≤ target` is the test on every row); for a
/// `msgs/s` row `ratio_floor` is therefore `floor_ns / library_ns`. A `msgs/s` row with a
/// baseline also has `throughput_ratio_baseline` (its library messages per second over the
/// baseline's, 1 / `ratio_baseline`), `floor_throughput_ratio_baseline` and
/// `target_throughput_ratio_baseline` (the least acceptable, 1 / `target_ratio_baseline`).
/// The bytes rows (`unit` `"bytes/msg"`, `clock` `"bytes-written"`) hold bytes written per
/// message in the same fields (their ratios are ratios of bytes), and `target_library_max`,
/// the largest acceptable `library_ns` (an absolute target); `rounds` is the number of rounds
/// the row was measured for (the bytes rows stop at `CaseUnit.maximumRounds`).
/// The peak-memory rows (`unit` `"bytes-peak"`, `clock` `"self-measured"`) hold the peak
/// resident bytes one operation added in the same fields, with `target_library_max`.
/// Cases that failed or were skipped, or that have no library measurement, are left out of the array (the
/// table shows them).
public enum JSONReport {
    /// The JSON text for `results`, measured with `rounds` rounds per case on `clock`.
    public static func encode(_ results: [CaseResult], rounds: Int, clock: BenchClock = .threadCPU) -> String {
        let rows = results.compactMap { row($0, rounds: rounds, clock: clock) }
        guard !rows.isEmpty else { return "[]\n" }
        return "[\n" + rows.joined(separator: ",\n") + "\n]\n"
    }

    static func row(_ result: CaseResult, rounds: Int, clock: BenchClock) -> String? {
        guard result.failure == nil, let library = result.figure(.library), let floor = result.figure(.floor) else {
            return nil
        }
        var fields: [(String, String)] = [
            ("name", string(result.name)),
            ("library_ns", number(library, 1)),
            ("floor_ns", number(floor, 1)),
            ("swiftcrypto_ns", number(result.figure(.swiftCrypto), 1)),
            ("ratio_floor", number(result.ratioToFloor, 4)),
            ("ratio_swiftcrypto", number(result.ratioToSwiftCrypto, 4)),
            ("group", string(result.group.rawValue)),
            ("summary", string(result.summary)),
            ("target_ratio_floor", number(result.targets.floor, 2)),
            ("target_ratio_swiftcrypto", number(result.targets.swiftCrypto, 2)),
        ]
        if let baseline = result.targets.baseline {
            fields.append(("baseline_case", string(baseline.caseName)))
            fields.append(("ratio_baseline", number(result.ratioToBaseline(), 4)))
            fields.append(("floor_ratio_baseline", number(result.ratioToBaseline(.floor), 4)))
            fields.append(("target_ratio_baseline", number(baseline.maximum, 4)))
            if result.unit.higherIsBetter {
                fields.append(("throughput_ratio_baseline", number(result.throughputRatioToBaseline(), 4)))
                fields.append(("floor_throughput_ratio_baseline", number(result.throughputRatioToBaseline(.floor), 4)))
                fields.append(("target_throughput_ratio_baseline", number(baseline.minimumThroughputRatio, 2)))
            }
        }
        if let maximum = result.targets.libraryMaximum {
            fields.append(("target_library_max", number(maximum, 1)))
        }
        for contender in Contender.allCases {
            guard let quartiles = result.figureQuartiles(contender) else { continue }
            let key = contender == .swiftCrypto ? "swiftcrypto" : contender.rawValue
            fields.append(("\(key)_ns_q1", number(quartiles.lower, 1)))
            fields.append(("\(key)_ns_q3", number(quartiles.upper, 1)))
        }
        let rowClock = result.requiredClock ?? clock
        fields.append(("rounds", String(min(rounds, result.maximumRounds ?? rounds))))
        fields.append(("clock", string(result.unit == .peakResidentBytes ? "self-measured" : clockName(rowClock))))
        fields.append(("unit", string(result.unit.rawValue)))
        return "  {" + fields.map { "\(string($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    /// The `clock` field's value for `clock`.
    static func clockName(_ clock: BenchClock) -> String {
        switch clock {
        case .threadCPU: "thread-cpu"
        case .wall: "wall"
        case .bytesWritten: "bytes-written"
        }
    }

    /// A JSON number with `decimals` digits, or `null`.
    static func number(_ value: Double?, _ decimals: Int) -> String {
        guard let value, value.isFinite else { return "null" }
        return NumberFormatting.fixed(value, decimals: decimals)
    }

    /// A JSON string literal.
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
