package cassandra

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
)

// keyValue draws one group-by value of mixed type: strings (short and
// long, whose msgpack headers differ), integers of every width and sign,
// floats, booleans, byte slices, instants, nil and small nested slices.
func keyValue(t *rapid.T, depth int) any {
	kinds := 16
	if depth < 2 {
		kinds = 17
	}
	switch k := rapid.IntRange(0, kinds-1).Draw(t, "kind"); k {
	case 0:
		return rapid.String().Draw(t, "string")
	case 1:
		return rapid.StringN(30, 300, -1).Draw(t, "long string")
	case 2:
		return rapid.Int().Draw(t, "int")
	case 3:
		return rapid.Int8().Draw(t, "int8")
	case 4:
		return rapid.Int16().Draw(t, "int16")
	case 5:
		return rapid.Int32().Draw(t, "int32")
	case 6:
		return rapid.Int64().Draw(t, "int64")
	case 7:
		return rapid.Uint().Draw(t, "uint")
	case 8:
		return rapid.Uint8().Draw(t, "uint8")
	case 9:
		return rapid.Uint16().Draw(t, "uint16")
	case 10:
		return rapid.Uint32().Draw(t, "uint32")
	case 11:
		return rapid.Uint64().Draw(t, "uint64")
	case 12:
		return rapid.Float64().Draw(t, "float64")
	case 13:
		return rapid.Bool().Draw(t, "bool")
	case 14:
		return rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")
	case 15:
		if rapid.Bool().Draw(t, "nil") {
			return nil
		}
		return time.Unix(0, rapid.Int64().Draw(t, "unix nanos")).In(time.FixedZone("Z", 3600))
	default:
		n := rapid.IntRange(0, 3).Draw(t, "len")
		vs := make([]any, n)
		for i := range vs {
			vs[i] = keyValue(t, depth+1)
		}
		return vs
	}
}

// TestKeyPartitionIsTheRouters: for keys of one to twenty values of mixed
// types (twenty: a key whose array header is three bytes), the partition
// Map.Keys keeps a key in, computed from the key's encoding, is the task
// index fields grouping routes its values to (topology.FieldsIndex, the
// router itself), for the values as written and as state.DecodeKey
// rebuilds them from the stored encoding (int8(5) for an int64(5)), for 1
// to 16 partitions.
func TestKeyPartitionIsTheRouters(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.OneOf(rapid.IntRange(1, 4), rapid.Just(20)).Draw(t, "values")
		vals := make([]any, n)
		for i := range vals {
			vals[i] = keyValue(t, 0)
		}
		k, err := state.NewKey(vals...)
		if err != nil {
			t.Fatalf("key of %#v: %v", vals, err)
		}
		decoded, err := state.DecodeKey([]byte(k.Encoded()))
		if err != nil {
			t.Fatalf("decode %v: %v", k, err)
		}
		parts := rapid.IntRange(1, 16).Draw(t, "partitions")
		got := keyPartition(k.Encoded(), parts)
		if want := topology.FieldsIndex(vals, parts); got != want {
			t.Fatalf("key %#v: partition %d of %d, the router sends it to %d", vals, got, parts, want)
		}
		if want := topology.FieldsIndex(decoded.Values(), parts); got != want {
			t.Fatalf("decoded key %#v: partition %d of %d, the router sends it to %d", decoded.Values(), got, parts, want)
		}
	})
}

// TestKeyPartitionSpreads: keys spread over the partitions (the filter is
// not a constant), and one partition takes every key.
func TestKeyPartitionSpreads(t *testing.T) {
	seen := map[int]int{}
	for i := range 1000 {
		k := state.MustKey("word", i)
		if p := keyPartition(k.Encoded(), 1); p != 0 {
			t.Fatalf("key %v: partition %d of 1", k, p)
		}
		seen[keyPartition(k.Encoded(), 4)]++
	}
	for p := range 4 {
		if seen[p] < 150 {
			t.Fatalf("partition %d of 4 got %d of 1000 keys: %v", p, seen[p], seen)
		}
	}
}
