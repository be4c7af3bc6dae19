// Package statetest helps test state backends and the code above them.
//
// TestBackingMap is the conformance suite every state.BackingMap[[]byte]
// runs (the memory map, the bbolt map, and later the Cassandra maps): the
// BackingMap contract, then Storm's opaque, transactional and
// non-transactional map tables and a property test of the opaque and
// transactional maps against an exactly-once model, all over the map under
// test. A backend's test is one line:
//
//	func TestConformance(t *testing.T) {
//		statetest.TestBackingMap(t, func(t *testing.T) state.BackingMap[[]byte] {
//			return newEmptyMap(t)
//		})
//	}
//
// FaultMap wraps any backing map and injects failures: errors on reads,
// and writes that store only some of their keys before failing.
package statetest
