// swift-tools-version:6.0
import PackageDescription

// The benchmark suite lives in its own package so that the library itself keeps libsodium
// as its only dependency: swift-crypto is needed here only as a point of comparison.
let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The library, by path. Its package identity comes from the checkout's folder name,
        // so it is named explicitly for `.product(name:package:)` below.
        .package(name: "SessionKit", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.0.0" ..< "5.0.0"),
        // GRDB for the naive whole-blob SQLite store, the floor of the `store.sqlite.*` rows
        // (the same GRDB the library's SessionKitSQLite is built on).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // libsodium for the floor: raw C calls, naively composed. The root package keeps its
        // own CSodium target internal, so the benchmarks carry a module map of their own.
        .systemLibrary(
            name: "CSodiumBench",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // The allocator's statistics, for heap growth (glibc mallinfo2, Darwin malloc zones).
        .systemLibrary(name: "CHeapInfo"),
        // Measurement: interleaved rounds, medians, the table and the JSON report.
        .target(name: "BenchmarkHarness", dependencies: ["CHeapInfo"]),
        // The cases: the library, the libsodium floor and swift-crypto, side by side.
        .target(
            name: "BenchmarkCases",
            dependencies: [
                "BenchmarkHarness",
                "CSodiumBench",
                .product(name: "SignalPrimitives", package: "SessionKit"),
                .product(name: "SessionKit", package: "SessionKit"),
                .product(name: "Verification", package: "SessionKit"),
                // The ML-KEM-768 adapter (SwiftCryptoMLKEM768) of the library's PQXDH.
                .product(name: "SessionKitMLKEM", package: "SessionKit"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The durable store of the `store.sqlite.*` rows, and GRDB for their floor.
                .product(name: "SessionKitSQLite", package: "SessionKit"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // `swift run -c release bench`: runs every case and writes results/latest.json.
        .executableTarget(name: "bench", dependencies: ["BenchmarkCases", "BenchmarkHarness"]),
        // XCTest `measure` blocks over the same cases, plus checks that every contender of a
        // case computes the same bytes and that the floors reproduce the SPEC vectors.
        .testTarget(name: "BenchmarkTests", dependencies: ["BenchmarkCases", "BenchmarkHarness"]),
    ],
    swiftLanguageModes: [.v6]
)
