// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SessionKit",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        // The core: libsodium is its only dependency.
        .library(name: "SignalPrimitives", targets: ["SignalPrimitives"]),
        // The age v1 file format (X25519 and scrypt recipients, armor, streams, files), on
        // SignalPrimitives alone; SessionKit's attachments use its payload, and SessionKit
        // re-exports it, so `import SessionKit` still names every age type.
        .library(name: "SessionKitAge", targets: ["SessionKitAge"]),
        .library(name: "SessionKit", targets: ["SessionKit"]),
        .library(name: "Verification", targets: ["Verification"]),
        // Opt-in: ML-KEM-768 for post-quantum sessions, on apple/swift-crypto (BoringSSL on
        // Linux, CryptoKit on Apple platforms 26+). An app that does not import it builds none
        // of swift-crypto.
        .library(name: "SessionKitMLKEM", targets: ["SessionKitMLKEM"]),
        // Opt-in: a durable store (one SQLite file per account, every secret sealed with
        // XChaCha20-Poly1305 under an app-supplied storage key), on GRDB.swift and the system
        // SQLite (Debian: libsqlite3-dev). An app that does not import it builds no GRDB.
        .library(name: "SessionKitSQLite", targets: ["SessionKitSQLite"]),
        // Checks that a custom ProtocolStore keeps the contract (generations compared and
        // swapped, one transaction per commit, one session per one-time prekey): run it from an
        // app's tests against its own store. Depends on SessionKit only (no XCTest).
        .library(name: "SessionKitStoreConformance", targets: ["SessionKitStoreConformance"]),
        .executable(name: "signal-vectors", targets: ["signal-vectors"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "4.0.0" ..< "5.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // libsodium, found with pkg-config (Debian: libsodium-dev, Homebrew: libsodium).
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // zlib, for the conformance engine only: C2SP/CCTV's age vectors may be zlib-compressed
        // (Debian: zlib1g-dev; the macOS SDK has it). No library product depends on it.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(name: "SignalPrimitives", dependencies: ["CSodium"]),
        .target(name: "SessionKitAge", dependencies: ["SignalPrimitives"]),
        .target(name: "SessionKit", dependencies: ["SignalPrimitives", "SessionKitAge"]),
        .target(name: "Verification", dependencies: ["SignalPrimitives", "SessionKit"]),
        .target(
            name: "SessionKitMLKEM",
            dependencies: ["SessionKit", "SessionKitAge", "SignalPrimitives", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "SessionKitSQLite",
            dependencies: [
                "SignalPrimitives", "SessionKitAge", "SessionKit", "Verification", .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the read-only look at a file before the pool opens it.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(name: "SessionKitStoreConformance", dependencies: ["SessionKit"]),
        // The conformance engine behind `signal-vectors`, shared with the test suite.
        .target(
            name: "SignalVectorKit",
            dependencies: ["SignalPrimitives", "SessionKitAge", "SessionKit", "Verification", "SessionKitMLKEM", "CZlib"]
        ),
        .executableTarget(name: "signal-vectors", dependencies: ["SignalVectorKit"]),
        // One device process of the multi-process and crash tests (SessionKitSQLiteProcessTests,
        // `make crash`): an app or extension on an SQLite file, talking through files.
        .executableTarget(
            name: "sessionkit-stress",
            dependencies: ["SessionKitSQLite", "SessionKit", "SignalPrimitives", "Verification"]
        ),
        // What the test targets share (a seeded generator, test addresses, a forwarding store, the
        // checks that documents show the code the tests run); only test targets depend on it.
        .target(name: "TestSupport", dependencies: ["SessionKit"], path: "Tests/TestSupport"),
        .testTarget(name: "SignalPrimitivesTests", dependencies: ["SignalPrimitives", "CSodium", "TestSupport"]),
        .testTarget(
            name: "SessionKitTests",
            dependencies: ["SessionKitAge", "SessionKit", "SessionKitMLKEM", "SessionKitStoreConformance", "CSodium", "TestSupport"]),
        .testTarget(name: "VerificationTests", dependencies: ["Verification", "SessionKit", "SessionKitMLKEM", "TestSupport"]),
        .testTarget(name: "SignalVectorKitTests", dependencies: ["SignalVectorKit"]),
        .testTarget(
            name: "SessionKitSQLiteTests",
            dependencies: [
                "SessionKitSQLite", "SessionKitAge", "SessionKit", "SignalPrimitives", "Verification", "SessionKitStoreConformance",
                "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures"]
        ),
        // Spawns sessionkit-stress processes (it depends on the executable so that `swift test`
        // builds it next to the test bundle): two on one file, and one killed with SIGKILL at
        // random points (CRASH_ITERATIONS, `make crash`).
        .testTarget(
            name: "SessionKitSQLiteProcessTests",
            dependencies: [
                "sessionkit-stress", "SessionKitSQLite", "SessionKit", "SignalPrimitives", "Verification", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `make docs` (SESSIONKIT_DOCS=1) adds swiftlang/swift-docc-plugin to build the DocC catalogs;
// an app that depends on this package never resolves it.
if Context.environment["SESSIONKIT_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
