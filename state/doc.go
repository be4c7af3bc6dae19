// Package state holds squall's state abstractions: State, MapState and
// BackingMap, the transactional and non-transactional maps built over a
// BackingMap, caches, the memory and embedded on-disk backing maps, and the
// domain types shared by every layer that commits state, such as TxID.
package state
