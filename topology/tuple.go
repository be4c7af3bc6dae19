package topology

import "fmt"

// Tuple is one tuple delivered to a bolt. A *Tuple is valid for as long as
// the bolt keeps it; use it as an anchor and to Ack or Fail it, exactly
// once. Its Values are shared and must not be modified.
type Tuple struct {
	values Values
	schema *schema

	// ids holds the tuple's trees: for each root, the XOR of the edge ids
	// that lead to this tuple. outAck accumulates the edge ids of the
	// tuples emitted anchored to this one; acking sends id^outAck per root.
	ids    anchorIDs
	outAck uint64

	srcTask TaskID
	dstTask TaskID
	done    bool
}

// Values returns the tuple's values.
func (t *Tuple) Values() Values { return t.values }

// Value returns the i-th value.
func (t *Tuple) Value(i int) any { return t.values[i] }

// Fields returns the names of the tuple's values.
func (t *Tuple) Fields() Fields { return t.schema.fields }

// Lookup returns the value of the named field and whether the stream has
// that field.
func (t *Tuple) Lookup(field string) (any, bool) {
	i, ok := t.schema.index[field]
	if !ok {
		return nil, false
	}
	return t.values[i], true
}

// Get returns the value of the named field. Asking for a field the stream
// does not declare is a programming error: Get panics, which stops the
// worker with a message naming the stream and its fields.
func (t *Tuple) Get(field string) any {
	v, ok := t.Lookup(field)
	if !ok {
		panic(fmt.Sprintf("topology: stream %v has no field %q", t.schema, field))
	}
	return v
}

// String returns the named field's value as a string; it panics like Get
// when the field is missing or is not a string.
func (t *Tuple) String(field string) string {
	v := t.Get(field)
	s, ok := v.(string)
	if !ok {
		panic(fmt.Sprintf("topology: field %q of stream %v is %T, not string", field, t.schema, v))
	}
	return s
}

// SourceComponent returns the id of the component that emitted the tuple.
func (t *Tuple) SourceComponent() string { return t.schema.component }

// SourceStream returns the stream the tuple was emitted on.
func (t *Tuple) SourceStream() string { return t.schema.stream }

// SourceTask returns the task that emitted the tuple.
func (t *Tuple) SourceTask() TaskID { return t.srcTask }

// Tracked reports whether the tuple belongs to at least one tuple tree.
func (t *Tuple) Tracked() bool { return t.ids.len() > 0 }

// rootEdge is one entry of a tuple's anchor ids.
type rootEdge struct {
	root RootID
	id   uint64
}

// anchorIDs maps roots to edge ids. Most tuples belong to one tree, so the
// first entry is stored inline and only multi-anchored tuples allocate.
// Root ids are never zero, so a zero first entry means "no roots".
type anchorIDs struct {
	first rootEdge
	rest  *[]rootEdge
}

func (a *anchorIDs) len() int {
	switch {
	case a.first.root == 0:
		return 0
	case a.rest == nil:
		return 1
	default:
		return 1 + len(*a.rest)
	}
}

// at returns the i-th entry.
func (a *anchorIDs) at(i int) rootEdge {
	if i == 0 {
		return a.first
	}
	return (*a.rest)[i-1]
}

// xor folds id into the entry for root, adding the root if it is new.
func (a *anchorIDs) xor(root RootID, id uint64) {
	switch {
	case a.first.root == 0:
		a.first = rootEdge{root, id}
		return
	case a.first.root == root:
		a.first.id ^= id
		return
	case a.rest == nil:
		a.rest = &[]rootEdge{{root, id}}
		return
	}
	rest := *a.rest
	for i := range rest {
		if rest[i].root == root {
			rest[i].id ^= id
			return
		}
	}
	*a.rest = append(rest, rootEdge{root, id})
}
