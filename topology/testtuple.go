package topology

import "fmt"

// NewTestTuple returns a tuple as if task 0 of component had emitted values
// on stream, declared with fields, for unit tests of bolts. It belongs to no
// tuple tree. It panics if the numbers of fields and values differ.
func NewTestTuple(component, stream string, fields Fields, values Values) *Tuple {
	if len(fields) != len(values) {
		panic(fmt.Sprintf("topology: NewTestTuple: %d values for fields %v", len(values), fields))
	}
	return &Tuple{values: values, schema: newSchema(component, stream, append(Fields(nil), fields...), false)}
}
