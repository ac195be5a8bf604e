/// Order statistics of a set of samples (nanoseconds per operation).
public struct SampleSummary: Sendable, Equatable {
    /// The number of samples.
    public let count: Int
    /// The median.
    public let median: Double
    /// The first quartile.
    public let lowerQuartile: Double
    /// The third quartile.
    public let upperQuartile: Double
    /// The smallest sample.
    public let minimum: Double

    /// Summarises `samples`; nil for an empty list.
    public init?(_ samples: [Double]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        count = sorted.count
        median = SampleSummary.quantile(sorted, 0.5)
        lowerQuartile = SampleSummary.quantile(sorted, 0.25)
        upperQuartile = SampleSummary.quantile(sorted, 0.75)
        minimum = sorted[0]
    }

    /// The interquartile range as a fraction of the median (a noise indicator).
    public var relativeSpread: Double { median > 0 ? (upperQuartile - lowerQuartile) / median : 0 }

    /// The q-quantile of sorted values, interpolating linearly between neighbours.
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        let position = q * Double(sorted.count - 1)
        let below = Int(position.rounded(.down))
        let above = min(below + 1, sorted.count - 1)
        let fraction = position - Double(below)
        return sorted[below] + (sorted[above] - sorted[below]) * fraction
    }
}
