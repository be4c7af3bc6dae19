package topology

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkFieldsGrouping chooses the task of tuples grouped by common
// key types: one op is one choice.
func BenchmarkFieldsGrouping(b *testing.B) {
	targets := []TaskID{1, 2, 3, 4, 5, 6, 7, 8}
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("room-%d", i)
	}
	cases := []struct {
		name  string
		index []int
		value func(i int) Values
	}{
		{"string", []int{0}, func(i int) Values { return Values{keys[i%len(keys)]} }},
		{"int64", []int{0}, func(i int) Values { return Values{int64(i)} }},
		{"string+int", []int{0, 1}, func(i int) Values { return Values{keys[i%len(keys)], i % 24} }},
		{"time", []int{0}, func(i int) Values { return Values{time.Unix(int64(i)*3600, 0).UTC()} }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ch := newChooser(ByFields("a"), targets, c.index, nil)
			vals := make([]Values, 1024)
			for i := range vals {
				vals[i] = c.value(i)
			}
			dst := make([]TaskID, 0, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				dst = ch.choose(0, vals[i%len(vals)], dst[:0])
			}
		})
	}
}
