// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SessionKit",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "SignalPrimitives", targets: ["SignalPrimitives"]),
        .library(name: "SessionKit", targets: ["SessionKit"]),
        .library(name: "Verification", targets: ["Verification"]),
        .executable(name: "signal-vectors", targets: ["signal-vectors"]),
    ],
    targets: [
        // libsodium, found with pkg-config (Debian: libsodium-dev, Homebrew: libsodium).
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        .target(name: "SignalPrimitives", dependencies: ["CSodium"]),
        .target(name: "SessionKit", dependencies: ["SignalPrimitives"]),
        .target(name: "Verification", dependencies: ["SignalPrimitives", "SessionKit"]),
        // The conformance engine behind `signal-vectors`, shared with the test suite.
        .target(
            name: "SignalVectorKit",
            dependencies: ["SignalPrimitives", "SessionKit", "Verification"]
        ),
        .executableTarget(name: "signal-vectors", dependencies: ["SignalVectorKit"]),
        .testTarget(name: "SignalPrimitivesTests", dependencies: ["SignalPrimitives", "CSodium"]),
        .testTarget(name: "SessionKitTests", dependencies: ["SessionKit"]),
        .testTarget(name: "VerificationTests", dependencies: ["Verification", "SessionKit"]),
        .testTarget(name: "SignalVectorKitTests", dependencies: ["SignalVectorKit"]),
    ],
    swiftLanguageModes: [.v6]
)
