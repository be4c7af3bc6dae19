// Package arena allocates the values of tuples in chunks, so that a
// stage's busy path costs one allocation per chunk instead of one or more
// per tuple.
//
// Ownership: everything an Arena hands out is garbage collected as usual
// and never reused, so tuples stay immutable and may be kept as long as
// anyone likes. Keeping one tuple keeps its chunk alive (at most
// ValuesChunk values or StringsChunk string headers), which bounds what a
// kept tuple costs. An Arena is not safe for concurrent use.
package arena

import "unsafe"

const (
	// ValuesChunk is the number of values in one chunk of value slices.
	ValuesChunk = 1024
	// StringsChunk is the number of string headers in one chunk.
	StringsChunk = 512
)

// Arena hands out value slices and boxed strings from chunks.
type Arena struct {
	vals []any    // the unused tail of the current chunk of values
	strs []string // the current chunk of string headers; appended to
}

// Values returns a slice of n zero values whose length and capacity are n,
// so appending to it never writes into a neighbour's values.
func (a *Arena) Values(n int) []any {
	if n > ValuesChunk/8 {
		return make([]any, n) // a chunk would waste too much on its tail
	}
	if len(a.vals) < n {
		a.vals = make([]any, ValuesChunk)
	}
	v := a.vals[:n:n]
	a.vals = a.vals[n:]
	return v
}

// String returns s as an interface value, like any(s), with its string
// header in a chunk instead of in an allocation of its own.
func (a *Arena) String(s string) any {
	if len(a.strs) == cap(a.strs) {
		a.strs = make([]string, 0, StringsChunk)
	}
	a.strs = append(a.strs, s)
	return boxString(&a.strs[len(a.strs)-1])
}

// eface is the layout of an interface value with no methods: its dynamic
// type and a pointer to its value (for a string, to its header).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// boxString returns the interface value that holds *p, pointing at *p
// itself, which any(*p) would copy to a new allocation. The header at p is
// never written again (String only appends), so the value stays as
// immutable as any interface value.
func boxString(p *string) any {
	var typed any = ""
	v := eface{typ: (*eface)(unsafe.Pointer(&typed)).typ, data: unsafe.Pointer(p)}
	return *(*any)(unsafe.Pointer(&v))
}
