/// The plain-text (and Markdown) table of a run.
public enum ResultTable {
    /// A Markdown table: case, median ns/op of each contender, the ratios and the targets.
    ///
    /// A throughput case (`CaseUnit.messagesPerSecond`) shows messages per second in the
    /// contender columns (`12,345 msg/s`); its ratio columns stay ratios of times per message,
    /// like every row's, and the line under the table for its baseline target gives the ratio
    /// of messages per second against the least acceptable one. A bytes case
    /// (`CaseUnit.bytesPerMessage`) shows bytes per message (`1,048 B/msg`), its ratios are
    /// ratios of bytes, and its absolute target reads `≤ 2,048 B/msg`.
    public static func markdown(_ results: [CaseResult]) -> String {
        var rows: [[String]] = [[
            "case", "library ns/op", "floor ns/op", "swift-crypto ns/op",
            "library/floor", "library/swift-crypto", "target",
        ]]
        for result in results {
            if let failure = result.failure {
                rows.append([result.name, "FAILED: \(failure)", "", "", "", "", ""])
                continue
            }
            if let skipped = result.skipped {
                rows.append([result.name, "skipped: \(skipped)", "", "", "", "", ""])
                continue
            }
            rows.append([
                result.name,
                cell(result.figure(.library), result.unit),
                cell(result.figure(.floor), result.unit),
                cell(result.figure(.swiftCrypto), result.unit),
                ratioCell(result.ratioToFloor),
                ratioCell(result.ratioToSwiftCrypto),
                targetCell(result),
            ])
        }
        var text = render(rows)
        for result in results where result.failure == nil {
            guard let baseline = result.targets.baseline, let ratio = result.ratioToBaseline() else { continue }
            if let speedup = result.throughputRatioToBaseline() {
                let floor = result.throughputRatioToBaseline(.floor).map { ", floor \(NumberFormatting.fixed($0, decimals: 2))×" } ?? ""
                let verdict = ratio <= baseline.maximum ? "✓" : "✗"
                text += "\n\n\(result.name) / \(baseline.caseName) in messages per second: library "
                    + "\(NumberFormatting.fixed(speedup, decimals: 2))×\(floor) "
                    + "(target ≥ \(NumberFormatting.fixed(baseline.minimumThroughputRatio, decimals: 2))× \(verdict))"
                continue
            }
            let floor = result.ratioToBaseline(.floor).map { ", floor \(NumberFormatting.fixed($0, decimals: 2))" } ?? ""
            let verdict = ratio <= baseline.maximum ? "✓" : "✗"
            text += "\n\n\(result.name) / \(baseline.caseName): library \(NumberFormatting.fixed(ratio, decimals: 2))"
                + "\(floor) (target ≤ \(NumberFormatting.fixed(baseline.maximum, decimals: 2)) \(verdict))"
        }
        return text
    }

    static func cell(_ value: Double?, _ unit: CaseUnit = .nanosecondsPerOperation) -> String {
        guard let value else { return "—" }
        switch unit {
        case .nanosecondsPerOperation: return NumberFormatting.nanoseconds(value)
        case .messagesPerSecond: return NumberFormatting.grouped(value) + " msg/s"
        case .bytesPerMessage: return NumberFormatting.grouped(value) + " B/msg"
        case .peakResidentBytes: return NumberFormatting.grouped(value) + " B peak"
        }
    }

    static func ratioCell(_ value: Double?) -> String {
        value.map { NumberFormatting.fixed($0, decimals: 2) } ?? "—"
    }

    static func targetCell(_ result: CaseResult) -> String {
        var parts: [String] = []
        if let floor = result.targets.floor { parts.append("floor ≤ \(NumberFormatting.fixed(floor, decimals: 2))") }
        if let swiftCrypto = result.targets.swiftCrypto {
            parts.append("s-c ≤ \(NumberFormatting.fixed(swiftCrypto, decimals: 2))")
        }
        if let maximum = result.targets.libraryMaximum {
            parts.append("≤ \(cell(maximum, result.unit))")
        }
        if let baseline = result.targets.baseline, result.unit.higherIsBetter {
            parts.append("msg/s ≥ \(NumberFormatting.fixed(baseline.minimumThroughputRatio, decimals: 2))× \(baseline.caseName)")
        } else if let baseline = result.targets.baseline {
            parts.append("≤ \(NumberFormatting.fixed(baseline.maximum, decimals: 2))× \(baseline.caseName)")
        }
        guard !parts.isEmpty else { return "" }
        let verdict: String
        switch result.meetsTargets {
        case true?: verdict = " ✓"
        case false?: verdict = " ✗"
        case nil: verdict = ""
        }
        return parts.joined(separator: ", ") + verdict
    }

    /// Pads columns to equal width: the first column and those in `leftAligned` to the left,
    /// the others (numbers) to the right.
    static func render(_ rows: [[String]], leftAligned: Set<Int> = []) -> String {
        guard let header = rows.first else { return "" }
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ row: [String]) -> String {
            let cells = row.enumerated().map { index, cell -> String in
                let padding = String(repeating: " ", count: max(0, widths[index] - cell.count))
                return index == 0 || leftAligned.contains(index) ? cell + padding : padding + cell
            }
            return "| " + cells.joined(separator: " | ") + " |"
        }
        let separator = "|" + widths.enumerated().map { index, width in
            index == 0 || leftAligned.contains(index) ? String(repeating: "-", count: width + 2)
                : String(repeating: "-", count: width + 1) + ":"
        }.joined(separator: "|") + "|"
        var lines = [line(header), separator]
        for row in rows.dropFirst() { lines.append(line(row)) }
        return lines.joined(separator: "\n")
    }
}
