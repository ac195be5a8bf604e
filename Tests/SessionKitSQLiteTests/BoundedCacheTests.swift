@testable import SessionKitSQLite
import XCTest

/// The store caches' bounded map: first stored, first out; a replaced value keeps its place; a
/// removed key leaves no trace in the eviction order.
final class BoundedCacheTests: XCTestCase {
    func testTheEarliestStoredKeyIsEvictedWhenFull() {
        let cache = BoundedCache<Int, String>(capacity: 3)
        for key in 1 ... 4 { cache.store("v\(key)", for: key) }
        XCTAssertNil(cache.value(for: 1))
        XCTAssertEqual([2, 3, 4].map { cache.value(for: $0) }, ["v2", "v3", "v4"])
        XCTAssertEqual(cache.count, 3)
    }

    func testReplacingAValueKeepsItsPlaceInTheOrder() {
        let cache = BoundedCache<Int, String>(capacity: 2)
        cache.store("a", for: 1)
        cache.store("b", for: 2)
        cache.store("a2", for: 1)
        XCTAssertEqual(cache.value(for: 1), "a2")
        cache.store("c", for: 3)
        XCTAssertNil(cache.value(for: 1), "key 1 was stored first; replacing its value does not move it")
        XCTAssertEqual(cache.value(for: 2), "b")
        XCTAssertEqual(cache.value(for: 3), "c")
    }

    func testARemovedKeyIsSkippedByEviction() {
        let cache = BoundedCache<Int, String>(capacity: 2)
        cache.store("a", for: 1)
        cache.store("b", for: 2)
        cache.remove(1)
        XCTAssertNil(cache.value(for: 1))
        cache.store("c", for: 3)
        XCTAssertEqual(cache.count, 2)
        XCTAssertEqual(cache.value(for: 2), "b", "removing key 1 made room: nothing is evicted")
        cache.store("d", for: 4)
        XCTAssertNil(cache.value(for: 2))
        XCTAssertEqual(cache.value(for: 3), "c")
        XCTAssertEqual(cache.value(for: 4), "d")
    }

    func testAKeyStoredAgainAfterRemovalGoesToTheEnd() {
        let cache = BoundedCache<Int, String>(capacity: 2)
        cache.store("a", for: 1)
        cache.store("b", for: 2)
        cache.remove(1)
        cache.store("a again", for: 1)
        cache.store("c", for: 3)
        XCTAssertNil(cache.value(for: 2))
        XCTAssertEqual(cache.value(for: 1), "a again")
        XCTAssertEqual(cache.value(for: 3), "c")
    }

    func testManyRemovalsAndInsertionsStayWithinCapacity() {
        let cache = BoundedCache<Int, Int>(capacity: 10)
        for key in 0 ..< 1000 {
            cache.store(key, for: key)
            if key % 3 == 0 { cache.remove(key - 1) }
        }
        XCTAssertLessThanOrEqual(cache.count, 10)
        XCTAssertEqual(cache.value(for: 999), 999)
        XCTAssertNil(cache.value(for: 980))
    }
}
