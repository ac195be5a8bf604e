import BenchmarkHarness
import XCTest

/// XCTest `measure` blocks for the `SessionManager` throughput cases (`manager.hub.*`): each
/// measured iteration is a batch of messages (a multiple of one round trip per peer), on the
/// wall clock; messages per second are the batch size over the time XCTest reports.
/// Run in release: `swift test -c release -Xswiftc -enable-testing --filter ManagerPerformanceTests`.
final class ManagerPerformanceTests: XCTestCase {
    func testManagerHub1PeerLibrary() throws { try measureCase("manager.hub.1-peer", .library) }
    func testManagerHub1PeerFloor() throws { try measureCase("manager.hub.1-peer", .floor) }

    func testManagerHub100PeersLibrary() throws { try measureCase("manager.hub.100-peers", .library) }
    func testManagerHub100PeersFloor() throws { try measureCase("manager.hub.100-peers", .floor) }

    // The bursts of cheap messages (`manager.burst.*`, issue 18).
    func testManagerBurst1PeerLibrary() throws { try measureCase("manager.burst.1-peer", .library) }
    func testManagerBurst1PeerFloor() throws { try measureCase("manager.burst.1-peer", .floor) }

    func testManagerBurst100PeersLibrary() throws { try measureCase("manager.burst.100-peers", .library) }
    func testManagerBurst100PeersFloor() throws { try measureCase("manager.burst.100-peers", .floor) }
}
