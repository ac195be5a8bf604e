/// The machine-readable results: `results/latest.json`.
///
/// A JSON array with one object per measured case:
///
///     {"name": …, "library_ns": …, "floor_ns": …, "swiftcrypto_ns": … or null,
///      "ratio_floor": …, "ratio_swiftcrypto": … or null, …}
///
/// followed by descriptive fields (`group`, `summary`, the targets, the quartiles, `rounds`,
/// `clock`). A case with a target relative to another case also has `baseline_case`,
/// `ratio_baseline` (library / the baseline's library), `floor_ratio_baseline` (the same for
/// the floors) and `target_ratio_baseline`.
/// Times are medians in nanoseconds per operation. Cases that failed, or that have no library
/// measurement, are left out of the array (the table shows them).
public enum JSONReport {
    /// The JSON text for `results`, measured with `rounds` rounds per case on `clock`.
    public static func encode(_ results: [CaseResult], rounds: Int, clock: BenchClock = .threadCPU) -> String {
        let rows = results.compactMap { row($0, rounds: rounds, clock: clock) }
        guard !rows.isEmpty else { return "[]\n" }
        return "[\n" + rows.joined(separator: ",\n") + "\n]\n"
    }

    static func row(_ result: CaseResult, rounds: Int, clock: BenchClock) -> String? {
        guard result.failure == nil, let library = result.median(.library), let floor = result.median(.floor) else {
            return nil
        }
        var fields: [(String, String)] = [
            ("name", string(result.name)),
            ("library_ns", number(library, 1)),
            ("floor_ns", number(floor, 1)),
            ("swiftcrypto_ns", number(result.median(.swiftCrypto), 1)),
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
            fields.append(("target_ratio_baseline", number(baseline.maximum, 2)))
        }
        for contender in Contender.allCases {
            guard let summary = result.summaries[contender] else { continue }
            let key = contender == .swiftCrypto ? "swiftcrypto" : contender.rawValue
            fields.append(("\(key)_ns_q1", number(summary.lowerQuartile, 1)))
            fields.append(("\(key)_ns_q3", number(summary.upperQuartile, 1)))
        }
        fields.append(("rounds", String(rounds)))
        fields.append(("clock", string(clock == .threadCPU ? "thread-cpu" : "wall")))
        return "  {" + fields.map { "\(string($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
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
