package trident

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// countingCodec is spout.JSON that counts its calls.
type countingCodec struct{ encodes, decodes *atomic.Int64 }

func (c countingCodec) Encode(m spouttest.Offsets) ([]byte, error) {
	c.encodes.Add(1)
	return spout.JSON[spouttest.Offsets]{}.Encode(m)
}

func (c countingCodec) Decode(b []byte) (spouttest.Offsets, error) {
	c.decodes.Add(1)
	return spout.JSON[spouttest.Offsets]{}.Decode(b)
}

// TestMetaCodecStoresMetadata: a source's metadata goes through the codec
// given with MetaCodec.
func TestMetaCodecStoresMetadata(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := spouttest.NewSource("p@0")
		src.Append("p@0", "a", "b", "c")
		src.SetMaxBatch(1)
		codec := countingCodec{new(atomic.Int64), new(atomic.Int64)}
		tt := NewTopology("codec")
		s := tt.NewStream("records", OpaqueSource(Fields{"partition", "offset", "word"}, src.Lister,
			func(int) spout.Emitter[spouttest.Offsets] { return src.Emitter() }, MetaCodec[spouttest.Offsets](codec)))
		PersistentAggregate(s.GroupBy("word"), OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if codec.encodes.Load() < 3 || codec.decodes.Load() == 0 {
			t.Fatalf("codec used %d times to encode and %d to decode; want the metadata of every batch through it",
				codec.encodes.Load(), codec.decodes.Load())
		}
	})
}
