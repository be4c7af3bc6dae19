package transport

import "hash/maphash"

// Bounds of a decoder's stringCache: entries, a power of two, and the
// longest string it holds.
const (
	stringCacheSize = 512
	maxCachedString = 32
)

// stringCache holds short string values a decoder decoded recently, each
// boxed in an interface, so that a string that recurs from message to
// message (a word, a key, a room id) costs one allocation rather than two
// per message: the string's bytes and the interface's copy of its
// header. It is direct-mapped by a hash of the bytes; a miss replaces the
// entry. Strings are immutable, so messages sharing one boxed value
// cannot tell. It holds at most stringCacheSize strings of at most
// maxCachedString bytes.
type stringCache struct {
	seed    maphash.Seed
	entries *[stringCacheSize]any // each nil or a string
}

func newStringCache() stringCache {
	return stringCache{seed: maphash.MakeSeed(), entries: new([stringCacheSize]any)}
}

// get returns b as a string in an interface: the cached one when it is
// equal, else a new one, cached if b is short enough.
func (c *stringCache) get(b []byte) any {
	if len(b) > maxCachedString {
		return string(b)
	}
	e := &c.entries[maphash.Bytes(c.seed, b)&(stringCacheSize-1)]
	if s, ok := (*e).(string); ok && s == string(b) {
		return *e
	}
	*e = string(b)
	return *e
}
