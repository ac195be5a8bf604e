/// Fixed-point formatting without Foundation (so the output is the same on every platform).
enum NumberFormatting {
    /// `value` with exactly `decimals` digits after the point (`decimals` ≤ 6).
    static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "nan" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let negative = value < 0
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return "\(value)" }
        let units = UInt64(scaled)
        let whole = units / UInt64(scale)
        let fraction = units % UInt64(scale)
        var text = (negative ? "-" : "") + String(whole)
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: decimals - digits.count) + digits
        }
        return text
    }

    /// Nanoseconds for a table: one decimal below 10 µs, whole numbers with thin grouping above.
    static func nanoseconds(_ value: Double) -> String {
        if value < 10_000 { return fixed(value, decimals: 1) }
        return grouped(value)
    }

    /// A whole number with its thousands grouped by commas (`12,346`).
    static func grouped(_ value: Double) -> String {
        guard value.isFinite, value >= 0, value < 9e15 else { return "\(value)" }
        let whole = String(UInt64(value.rounded()))
        var grouped = ""
        for (index, character) in whole.enumerated() {
            if index > 0, (whole.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        return grouped
    }
}
