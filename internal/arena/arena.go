// Package arena hands out fresh memory carved from larger allocations, so
// that a busy path costs one allocation per chunk instead of one or more
// per value: slices of values (Slices) and interface values holding
// strings (Strings), and interface values of a string header that is
// rewritten instead (Slot).
//
// Ownership: nothing Slices or Strings hand out is ever reused; it is garbage
// collected as usual, so what it holds stays immutable and may be kept as
// long as anyone likes. Keeping one slice or string keeps its chunk alive,
// which bounds what it costs. An arena is not safe for concurrent use.
package arena

import (
	"cmp"
	"unsafe"
)

// Slices hands out slices of T from chunks of Chunk elements. The zero
// value allocates chunks of DefaultChunk.
type Slices[T any] struct {
	Chunk int // elements per chunk; DefaultChunk if 0
	free  []T // the unused tail of the current chunk
}

// DefaultChunk is the chunk size of a zero Slices.
const DefaultChunk = 1024

// Take returns a slice of n zero elements whose length and capacity are n,
// so appending to it never writes into a neighbour's elements. When the
// current chunk has fewer than n left, a new chunk of max(n, Chunk) starts.
func (a *Slices[T]) Take(n int) []T {
	if n > len(a.free) {
		a.free = make([]T, max(n, cmp.Or(a.Chunk, DefaultChunk)))
	}
	v := a.free[:n:n]
	a.free = a.free[n:]
	return v
}

// StringsChunk is the number of string headers in one chunk of Strings.
const StringsChunk = 512

// Strings boxes strings in interface values whose string headers live in
// chunks of StringsChunk.
type Strings struct {
	headers []string // the current chunk; appended to
}

// Box returns s as an interface value, like any(s), with its string
// header in a chunk instead of in an allocation of its own.
func (a *Strings) Box(s string) any {
	if len(a.headers) == cap(a.headers) {
		a.headers = make([]string, 0, StringsChunk)
	}
	a.headers = append(a.headers, s)
	return boxString(&a.headers[len(a.headers)-1])
}

// Slot is one string header that Box rewrites in place: every value Box
// returns points at the same header, so each reads as the string boxed
// last. It is for values that nobody keeps past the next Box, such as a
// tuple built in reused storage for a consumer that only borrows it. A
// Slot must not be copied once used.
type Slot struct{ header string }

// Box returns s as an interface value, like any(s), that points at the
// slot's header, which holds s until the next Box.
func (sl *Slot) Box(s string) any {
	sl.header = s
	return boxString(&sl.header)
}

// eface is the layout of an interface value with no methods: its dynamic
// type and a pointer to its value (for a string, to its header).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// boxString returns the interface value that holds *p, pointing at *p
// itself, which any(*p) would copy to a new allocation. A header that
// Strings boxed is never written again (it only appends), so that value
// stays as immutable as any interface value; a Slot's is rewritten by its
// next Box.
func boxString(p *string) any {
	var typed any = ""
	v := eface{typ: (*eface)(unsafe.Pointer(&typed)).typ, data: unsafe.Pointer(p)}
	return *(*any)(unsafe.Pointer(&v))
}
