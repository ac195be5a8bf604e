// swift-tools-version:6.0
import PackageDescription

// The examples live in their own package so that the library keeps libsodium (and swift-crypto
// for ML-KEM, GRDB for SQLite) as its only dependencies: Hummingbird and its WebSocket support
// are needed only by the demo relay server, SwiftNIO by the client's WebSocket.
let package = Package(
    name: "Examples",
    // macOS 26: the client's post-quantum sessions use SessionKitMLKEM (CryptoKit's ML-KEM on
    // Apple platforms); Hummingbird needs macOS 14.
    platforms: [.macOS("26.0")],
    dependencies: [
        // The library, by path. Its package identity comes from the checkout's folder name,
        // so it is named explicitly for `.product(name:package:)` below.
        .package(name: "SessionKit", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.0.0"),
        // Already in Hummingbird's graph; named for the relay's `Logger`.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.5.0"),
        // Already in Hummingbird's graph; named for the client's WebSocket (ws://, on NIO alone:
        // hummingbird-websocket's client would bring swift-nio-ssl, a second BoringSSL to build).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
    ],
    targets: [
        // The frames client and server exchange over the WebSocket (JSON text frames).
        .target(name: "RelayWire", dependencies: [.product(name: "SessionKit", package: "SessionKit")]),
        // The relay: prekey directory and envelope mailbox, in memory.
        .executableTarget(
            name: "relay-server",
            dependencies: [
                "RelayWire",
                .product(name: "SignalPrimitives", package: "SessionKit"),
                .product(name: "SessionKit", package: "SessionKit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The command-line client: one SQLite store per client.
        .executableTarget(
            name: "chat-client",
            dependencies: [
                "RelayWire",
                .product(name: "SignalPrimitives", package: "SessionKit"),
                .product(name: "SessionKit", package: "SessionKit"),
                .product(name: "Verification", package: "SessionKit"),
                .product(name: "SessionKitSQLite", package: "SessionKit"),
                .product(name: "SessionKitMLKEM", package: "SessionKit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
