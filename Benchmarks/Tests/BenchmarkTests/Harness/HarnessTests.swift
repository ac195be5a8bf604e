import BenchmarkHarness
import Foundation
import XCTest

/// The measuring and reporting machinery, on synthetic workloads (no timing is asserted).
final class HarnessTests: XCTestCase {
    func testSummaryQuartilesOfKnownSamples() throws {
        let summary = try XCTUnwrap(SampleSummary([9, 1, 5, 3, 7]))
        XCTAssertEqual(summary.median, 5)
        XCTAssertEqual(summary.lowerQuartile, 3)
        XCTAssertEqual(summary.upperQuartile, 7)
        XCTAssertEqual(summary.minimum, 1)
        XCTAssertEqual(try XCTUnwrap(SampleSummary([1, 2, 3, 4])).median, 2.5)
        XCTAssertNil(SampleSummary([]))
    }

    func testRoundsInterleaveTheContendersInRotatingOrder() throws {
        var order: [String] = []
        let workloads: [(Contender, Workload)] = [
            (.library, Workload { _ in order.append("L") }),
            (.floor, Workload { _ in order.append("F") }),
            (.swiftCrypto, Workload { _ in order.append("S") }),
        ]
        let runner = InterleavedRunner(configuration: RunConfiguration(rounds: 3, batchNanoseconds: 1, warmupBatches: 0))
        let (summaries, sizes) = try runner.measure(workloads)
        // Calibration runs each once (a batch of 1 already reaches a 1 ns target), then the rounds.
        XCTAssertEqual(order.suffix(9).joined(), "LFS" + "FSL" + "SLF")
        XCTAssertEqual(Set(summaries.keys), [.library, .floor, .swiftCrypto])
        XCTAssertEqual(summaries[.floor]?.count, 3)
        XCTAssertEqual(sizes[.library], 1)
    }

    func testPreparationRunsBeforeEveryTimedBatchWithItsSize() throws {
        var prepared: [Int] = []
        var ran: [Int] = []
        let workload = Workload(prepare: { prepared.append($0) }, run: { ran.append($0) })
        let runner = InterleavedRunner(configuration: RunConfiguration(rounds: 4, batchNanoseconds: 1, warmupBatches: 1))
        _ = try runner.measure([(.floor, workload)])
        XCTAssertEqual(prepared, ran)
        XCTAssertEqual(ran.count, 1 + 1 + 4)  // calibration, warm-up, rounds
    }

    func testCalibrationGrowsTheBatchUntilItTakesLongEnough() throws {
        let workload = Workload { n in
            var x: UInt64 = 1
            for i in 0..<(n * 200) { x = x &* 6_364_136_223_846_793_005 &+ UInt64(i) }
            blackHole(x)
        }
        let runner = InterleavedRunner(configuration: RunConfiguration(rounds: 1, batchNanoseconds: 2_000_000, warmupBatches: 0))
        XCTAssertGreaterThan(try runner.calibrate(workload), 1)
    }

    func testAFailingCheckIsReportedAndNothingIsMeasured() {
        var ran = false
        let benchmark = BenchmarkCase(
            name: "broken", summary: "", group: .primitives, library: nil,
            floor: { Workload { _ in ran = true } }, swiftCrypto: nil,
            check: { throw CheckFailure("outputs differ") })
        let result = InterleavedRunner(configuration: .quick).measure(benchmark)
        XCTAssertEqual(result.failure, "outputs differ")
        XCTAssertFalse(ran)
    }

    func testRatiosAndTargetVerdicts() throws {
        let result = CaseResult(
            name: "case", summary: "", group: .protocol, targets: RatioTargets(floor: 1.0, swiftCrypto: 0.5),
            summaries: [.library: try summary(90), .floor: try summary(100), .swiftCrypto: try summary(200)], batchSizes: [:], failure: nil)
        XCTAssertEqual(result.ratioToFloor ?? 0, 0.9, accuracy: 1e-9)
        XCTAssertEqual(result.ratioToSwiftCrypto ?? 0, 0.45, accuracy: 1e-9)
        XCTAssertEqual(result.meetsTargets, true)
        let slow = CaseResult(
            name: "slow", summary: "", group: .protocol, targets: RatioTargets(floor: 1.0),
            summaries: [.library: try summary(120), .floor: try summary(100)], batchSizes: [:], failure: nil)
        XCTAssertEqual(slow.meetsTargets, false)
        XCTAssertNil(slow.ratioToSwiftCrypto)
    }

    func testJSONRowsCarryTheRequiredFieldsAndNullWithoutSwiftCrypto() throws {
        let results = [
            CaseResult(name: "with", summary: "a \"quoted\" summary", group: .primitives, targets: RatioTargets(floor: 1.1),
                       summaries: [.library: try summary(110), .floor: try summary(100), .swiftCrypto: try summary(220)],
                       batchSizes: [:], failure: nil),
            CaseResult(name: "without", summary: "", group: .primitives, targets: RatioTargets(),
                       summaries: [.library: try summary(50), .floor: try summary(100)], batchSizes: [:], failure: nil),
            CaseResult(name: "failed", summary: "", group: .primitives, targets: RatioTargets(),
                       summaries: [:], batchSizes: [:], failure: "boom"),
        ]
        let text = JSONReport.encode(results, rounds: 7)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        XCTAssertEqual(rows.count, 2)
        for row in rows {
            for key in ["name", "library_ns", "floor_ns", "swiftcrypto_ns", "ratio_floor", "ratio_swiftcrypto"] {
                XCTAssertTrue(row.keys.contains(key), "missing \(key)")
            }
        }
        XCTAssertEqual(rows[0]["name"] as? String, "with")
        XCTAssertEqual((rows[0]["ratio_floor"] as? NSNumber)?.doubleValue ?? 0, 1.1, accuracy: 1e-9)
        XCTAssertEqual((rows[0]["ratio_swiftcrypto"] as? NSNumber)?.doubleValue ?? 0, 0.5, accuracy: 1e-9)
        XCTAssertEqual(rows[0]["summary"] as? String, "a \"quoted\" summary")
        XCTAssertTrue(rows[1]["swiftcrypto_ns"] is NSNull)
        XCTAssertTrue(rows[1]["ratio_swiftcrypto"] is NSNull)
        XCTAssertEqual((rows[1]["ratio_floor"] as? NSNumber)?.doubleValue ?? 0, 0.5, accuracy: 1e-9)
        XCTAssertEqual((rows[1]["rounds"] as? NSNumber)?.intValue, 7)
        XCTAssertEqual(rows[1]["clock"] as? String, "thread-cpu")
        XCTAssertEqual(rows[0]["unit"] as? String, "ns/op")
    }

    func testCalibrationKeepsBatchesToWholeMultiples() throws {
        var sizes: [Int] = []
        let workload = Workload { sizes.append($0) }
        let runner = InterleavedRunner(configuration: RunConfiguration(rounds: 3, batchNanoseconds: 1, warmupBatches: 1))
        XCTAssertEqual(try runner.calibrate(workload, multiple: 200), 200)
        let (_, batchSizes) = try runner.measure([(.library, workload)], clock: .wall, batchMultiple: 200)
        XCTAssertEqual(batchSizes[.library], 200)
        XCTAssertFalse(sizes.isEmpty)
        XCTAssertTrue(sizes.allSatisfy { $0 % 200 == 0 }, "\(sizes)")
    }

    func testThroughputRowsReportMessagesPerSecondWithTimeRatios() throws {
        let onePeer = CaseResult(
            name: "manager.hub.1-peer", summary: "", group: .manager, targets: RatioTargets(floor: 1.1),
            summaries: [.library: try summary(200_000), .floor: try summary(200_000)], batchSizes: [:], failure: nil,
            unit: .messagesPerSecond)
        let manyPeers = CaseResult(
            name: "manager.hub.100-peers", summary: "", group: .manager,
            targets: RatioTargets(floor: 1.1, baseline: BaselineTarget(caseName: "manager.hub.1-peer", minimumThroughputRatio: 1.6)),
            summaries: [.library: try summary(100_000), .floor: try summary(80_000)], batchSizes: [:], failure: nil,
            unit: .messagesPerSecond)
        let linked = CaseResult.linkingBaselines([onePeer, manyPeers])
        // 200 µs per message is 5,000 messages per second; the ratios stay ratios of times.
        XCTAssertEqual(linked[0].figure(.library) ?? 0, 5_000, accuracy: 1e-9)
        XCTAssertEqual(linked[1].ratioToFloor ?? 0, 1.25, accuracy: 1e-9)
        XCTAssertEqual(linked[1].ratioToBaseline() ?? 0, 0.5, accuracy: 1e-9)
        XCTAssertEqual(linked[1].throughputRatioToBaseline() ?? 0, 2.0, accuracy: 1e-9)
        XCTAssertEqual(linked[1].meetsTargets, false)  // 1.25 > 1.1 of the floor
        XCTAssertEqual(linked[0].meetsTargets, true)
        XCTAssertNil(linked[0].throughputRatioToBaseline())

        let rows = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(JSONReport.encode(linked, rounds: 3).utf8)) as? [[String: Any]])
        XCTAssertEqual(rows[1]["unit"] as? String, "msgs/s")
        XCTAssertEqual(rows[1]["clock"] as? String, "wall")
        XCTAssertEqual((rows[1]["library_ns"] as? NSNumber)?.doubleValue ?? 0, 10_000, accuracy: 1e-9)
        XCTAssertEqual((rows[1]["floor_ns"] as? NSNumber)?.doubleValue ?? 0, 12_500, accuracy: 1e-9)
        XCTAssertEqual((rows[1]["ratio_floor"] as? NSNumber)?.doubleValue ?? 0, 1.25, accuracy: 1e-9)
        XCTAssertEqual((rows[1]["ratio_baseline"] as? NSNumber)?.doubleValue ?? 0, 0.5, accuracy: 1e-9)
        XCTAssertEqual((rows[1]["target_ratio_baseline"] as? NSNumber)?.doubleValue ?? 0, 0.625, accuracy: 1e-9)
        XCTAssertEqual((rows[1]["throughput_ratio_baseline"] as? NSNumber)?.doubleValue ?? 0, 2.0, accuracy: 1e-9)
        XCTAssertEqual((rows[1]["floor_throughput_ratio_baseline"] as? NSNumber)?.doubleValue ?? 0, 2.5, accuracy: 1e-9)
        XCTAssertEqual((rows[1]["target_throughput_ratio_baseline"] as? NSNumber)?.doubleValue ?? 0, 1.6, accuracy: 1e-9)
        XCTAssertNil(rows[0]["throughput_ratio_baseline"])

        let table = ResultTable.markdown(linked)
        XCTAssertTrue(table.contains("5,000 msg/s"), table)
        XCTAssertTrue(table.contains("msg/s ≥ 1.60× manager.hub.1-peer"), table)
        XCTAssertTrue(table.contains(
            "manager.hub.100-peers / manager.hub.1-peer in messages per second: library 2.00×, floor 2.50× (target ≥ 1.60× ✓)"),
            table)
    }

    func testBaselineTargetsCompareTwoCasesOfOneRun() throws {
        let baseline = CaseResult(
            name: "forged.reject.0-previous", summary: "", group: .protocol, targets: RatioTargets(floor: 1.1),
            summaries: [.library: try summary(100), .floor: try summary(120)], batchSizes: [:], failure: nil)
        let bounded = CaseResult(
            name: "forged.reject.40-previous", summary: "", group: .protocol,
            targets: RatioTargets(floor: 1.1, baseline: BaselineTarget(caseName: "forged.reject.0-previous", maximum: 2.0)),
            summaries: [.library: try summary(150), .floor: try summary(240)], batchSizes: [:], failure: nil)
        XCTAssertNil(bounded.ratioToBaseline())
        let linked = CaseResult.linkingBaselines([baseline, bounded])
        XCTAssertEqual(linked[1].ratioToBaseline() ?? 0, 1.5, accuracy: 1e-9)
        XCTAssertEqual(linked[1].ratioToBaseline(.floor) ?? 0, 2.0, accuracy: 1e-9)
        XCTAssertEqual(linked[1].meetsTargets, true)
        XCTAssertNil(linked[0].ratioToBaseline())
        let slow = CaseResult.linkingBaselines([baseline, CaseResult(
            name: "slow", summary: "", group: .protocol,
            targets: RatioTargets(baseline: BaselineTarget(caseName: "forged.reject.0-previous", maximum: 2.0)),
            summaries: [.library: try summary(250), .floor: try summary(250)], batchSizes: [:], failure: nil)])[1]
        XCTAssertEqual(slow.meetsTargets, false)
        let rows = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(JSONReport.encode(linked, rounds: 3).utf8)) as? [[String: Any]])
        XCTAssertEqual(rows[1]["baseline_case"] as? String, "forged.reject.0-previous")
        XCTAssertEqual((rows[1]["ratio_baseline"] as? NSNumber)?.doubleValue ?? 0, 1.5, accuracy: 1e-9)
        XCTAssertEqual((rows[1]["target_ratio_baseline"] as? NSNumber)?.doubleValue ?? 0, 2.0, accuracy: 1e-9)
        XCTAssertNil(rows[0]["baseline_case"])
        let table = ResultTable.markdown(linked)
        XCTAssertTrue(table.contains("forged.reject.40-previous / forged.reject.0-previous: library 1.50, floor 2.00"))
    }

    func testTableShowsEveryCaseAndItsFailure() throws {
        let table = ResultTable.markdown([
            CaseResult(name: "ok", summary: "", group: .primitives, targets: RatioTargets(floor: 1.1),
                       summaries: [.library: try summary(12_345.6), .floor: try summary(12_000)], batchSizes: [:], failure: nil),
            CaseResult(name: "bad", summary: "", group: .primitives, targets: RatioTargets(),
                       summaries: [:], batchSizes: [:], failure: "boom"),
        ])
        XCTAssertTrue(table.contains("| ok "))
        XCTAssertTrue(table.contains("12,346"))
        XCTAssertTrue(table.contains("1.03"))
        XCTAssertTrue(table.contains("FAILED: boom"))
    }

    func testQuickRunIsSelectedByTheEnvironment() {
        XCTAssertEqual(RunConfiguration.fromEnvironment(["BENCH_QUICK": "1"]), .quick)
        XCTAssertEqual(RunConfiguration.fromEnvironment(["BENCH_QUICK": "0"]), .full)
        XCTAssertEqual(RunConfiguration.fromEnvironment([:]), .full)
        XCTAssertEqual(RunConfiguration.fromEnvironment(["BENCH_QUICK": "1", "BENCH_ROUNDS": "3"]).rounds, 3)
        XCTAssertEqual(RunConfiguration.fromEnvironment([:]).clock, .threadCPU)
        XCTAssertEqual(RunConfiguration.fromEnvironment(["BENCH_CLOCK": "wall"]).clock, .wall)
    }

    func testBytesRowsReportBytesPerMessageAgainstAnAbsoluteTarget() throws {
        let targets = RatioTargets(libraryMaximum: 2048)
        let within = CaseResult(
            name: "store.sqlite.bytes-per-message.heavy", summary: "", group: .store, targets: targets,
            summaries: [.library: try summary(1048), .floor: try summary(157_200)], batchSizes: [:], failure: nil,
            unit: .bytesPerMessage)
        let over = CaseResult(
            name: "over", summary: "", group: .store, targets: targets,
            summaries: [.library: try summary(3144), .floor: try summary(1048)], batchSizes: [:], failure: nil,
            unit: .bytesPerMessage)
        XCTAssertEqual(within.figure(.library) ?? 0, 1048, accuracy: 1e-9)
        XCTAssertEqual(within.meetsTargets, true)
        XCTAssertEqual(over.meetsTargets, false)
        XCTAssertEqual(within.requiredClock, .bytesWritten)

        let rows = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(JSONReport.encode([within, over], rounds: 101).utf8)) as? [[String: Any]])
        XCTAssertEqual(rows[0]["unit"] as? String, "bytes/msg")
        XCTAssertEqual(rows[0]["clock"] as? String, "bytes-written")
        XCTAssertEqual((rows[0]["library_ns"] as? NSNumber)?.doubleValue ?? 0, 1048, accuracy: 1e-9)
        XCTAssertEqual((rows[0]["target_library_max"] as? NSNumber)?.doubleValue ?? 0, 2048, accuracy: 1e-9)
        XCTAssertEqual((rows[0]["rounds"] as? NSNumber)?.intValue, 9, "the bytes rows stop at 9 rounds")
        XCTAssertEqual((rows[0]["ratio_floor"] as? NSNumber)?.doubleValue ?? 0, 1048.0 / 157_200, accuracy: 1e-4)

        let table = ResultTable.markdown([within, over])
        XCTAssertTrue(table.contains("1,048 B/msg"), table)
        XCTAssertTrue(table.contains("≤ 2,048 B/msg ✓"), table)
        XCTAssertTrue(table.contains("≤ 2,048 B/msg ✗"), table)
    }

    func testWallClockCasesKeepTheirClockInTheReport() throws {
        let result = CaseResult(
            name: "store.sqlite.decrypt", summary: "", group: .store, targets: RatioTargets(floor: 1.1),
            summaries: [.library: try summary(100), .floor: try summary(100)], batchSizes: [:], failure: nil, clock: .wall)
        let rows = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(JSONReport.encode([result], rounds: 5).utf8)) as? [[String: Any]])
        XCTAssertEqual(rows[0]["clock"] as? String, "wall")
        XCTAssertEqual(rows[0]["unit"] as? String, "ns/op")
        XCTAssertEqual((rows[0]["rounds"] as? NSNumber)?.intValue, 5)
    }

    func testRoundsStopAtTheUnitsMaximum() throws {
        let workload = Workload { _ in }
        let runner = InterleavedRunner(configuration: RunConfiguration(rounds: 20, batchNanoseconds: 1, warmupBatches: 0))
        let (summaries, _) = try runner.measure([(.library, workload)], clock: .wall, maximumRounds: 9)
        XCTAssertEqual(summaries[.library]?.count, 9)
        XCTAssertEqual(CaseUnit.bytesPerMessage.maximumRounds, 9)
        XCTAssertNil(CaseUnit.nanosecondsPerOperation.maximumRounds)
    }

    func testTheBytesWrittenCounterIsNeverTheRunsClock() {
        XCTAssertEqual(RunConfiguration.fromEnvironment(["BENCH_CLOCK": "bytes-written"]).clock, .threadCPU)
    }

    func testTheWriteCountIsParsedFromProcSelfIO() {
        let text = Array("rchar: 1234\nwchar: 56789\nsyscr: 10\nsyscw: 3\n".utf8)
        text.withUnsafeBufferPointer { XCTAssertEqual(ProcessWriteCounter.parseWriteCount($0), 56789) }
        Array("rchar: 1\n".utf8).withUnsafeBufferPointer { XCTAssertNil(ProcessWriteCounter.parseWriteCount($0)) }
    }

    #if os(Linux)
    func testTheWriteCounterCountsWhatTheProcessWrites() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bench-wchar-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let before = try XCTUnwrap(ProcessWriteCounter.bytesWritten())
        try handle.write(contentsOf: Data(repeating: 7, count: 10_000))
        let after = try XCTUnwrap(ProcessWriteCounter.bytesWritten())
        XCTAssertGreaterThanOrEqual(after - before, 10_000)
        XCTAssertGreaterThanOrEqual(BenchClock.bytesWritten.now(), after)
    }
    #endif

    func testHeapProbeSeesAnAllocationThatIsKept() {
        let before = HeapProbe.bytesInUse()
        let block = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { block.deallocate() }
        XCTAssertGreaterThanOrEqual(HeapProbe.bytesInUse() - before, 1 << 20)
    }

    func testASkippedCaseIsReportedWithItsReasonAndIsNoFailure() throws {
        var ran = false
        let benchmark = BenchmarkCase(
            name: "needs-a-tool", summary: "", group: .files, library: { throw CaseSkipped("the tool is not installed") },
            floor: { Workload { _ in ran = true } }, swiftCrypto: nil)
        let result = InterleavedRunner(configuration: .quick).measure(benchmark)
        XCTAssertNil(result.failure)
        XCTAssertEqual(result.skipped, "the tool is not installed")
        XCTAssertFalse(ran)
        XCTAssertNil(result.meetsTargets)
        XCTAssertTrue(ResultTable.markdown([result]).contains("skipped: the tool is not installed"))
        XCTAssertEqual(JSONReport.encode([result], rounds: 9), "[]\n")
    }

    func testSelfMeasuredWorkloadsReportTheirOwnFigureInBatchesOfOne() throws {
        var sizes: [Int] = []
        let workload = Workload.measuring { n in
            sizes.append(n)
            return 4096
        }
        let benchmark = BenchmarkCase(
            name: "peak", summary: "", group: .files, targets: RatioTargets(libraryMaximum: 8192), unit: .peakResidentBytes,
            library: { workload }, floor: { workload }, swiftCrypto: nil)
        let runner = InterleavedRunner(configuration: RunConfiguration(rounds: 20, batchNanoseconds: 1_000_000, warmupBatches: 1))
        let result = runner.measure(benchmark)
        XCTAssertNil(result.failure)
        XCTAssertEqual(Set(sizes), [1], "a peak is a figure of one operation: no calibration, batches of one")
        XCTAssertEqual(result.summaries[.library]?.count, 3, "at most 3 rounds")
        XCTAssertEqual(result.figure(.library) ?? 0, 4096, accuracy: 1e-9)
        XCTAssertEqual(result.meetsTargets, true)
        let rows = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(JSONReport.encode([result], rounds: 101).utf8)) as? [[String: Any]])
        XCTAssertEqual(rows[0]["unit"] as? String, "bytes-peak")
        XCTAssertEqual(rows[0]["clock"] as? String, "self-measured")
        XCTAssertEqual((rows[0]["rounds"] as? NSNumber)?.intValue, 3)
        XCTAssertTrue(ResultTable.markdown([result]).contains("4,096 B peak"))
    }

    func testACaseCapsItsOwnRounds() throws {
        let benchmark = BenchmarkCase(
            name: "slow", summary: "", group: .files, maximumRounds: 4, library: { Workload { _ in } },
            floor: { Workload { _ in } }, swiftCrypto: nil)
        let result = InterleavedRunner(configuration: RunConfiguration(rounds: 50, batchNanoseconds: 1, warmupBatches: 0))
            .measure(benchmark)
        XCTAssertEqual(result.summaries[.floor]?.count, 4)
        XCTAssertEqual(result.maximumRounds, 4)
    }

    #if os(Linux)
    func testPeakResidentMemorySeesMemoryTouchedDuringTheOperation() throws {
        let size = 64 << 20
        let added = try PeakResidentMemory.measure {
            let block = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
            defer { block.deallocate() }
            for offset in stride(from: 0, to: size, by: 4096) { block[offset] = UInt8(truncatingIfNeeded: offset >> 12) }
            blackHole(block[size - 4096])
        }
        XCTAssertGreaterThanOrEqual(added, UInt64(size - (1 << 20)))
        // Freed before the next measurement: the peak starts again from the resident set.
        let none = try PeakResidentMemory.measure { blackHole(0) }
        XCTAssertLessThan(none, UInt64(8 << 20))
    }
    #endif

    private func summary(_ value: Double) throws -> SampleSummary {
        try XCTUnwrap(SampleSummary([value]))
    }
}
