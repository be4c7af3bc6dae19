package cassandrastore

import (
	"errors"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/coordstore"
)

// TestRefused: a swap that was not applied is fenced when the generation
// moved, whatever the version, and a conflict (with a negative stored
// version shown as 0) when only the version differs.
func TestRefused(t *testing.T) {
	f := coordstore.Fence{Owner: "o", Generation: 3}
	for _, c := range []struct {
		gen    coordstore.Generation
		have   int64
		fenced bool
		want   coordstore.Version
	}{
		{gen: 4, have: 2, fenced: true},
		{gen: 4, have: 5, fenced: true},
		{gen: 0, have: 0, fenced: true}, // no owner row
		{gen: 3, have: 5, want: 5},
		{gen: 3, have: -1, want: 0},
	} {
		err := refused(f, 2, c.gen, c.have)
		if c.fenced {
			var fe *state.FencedError
			if !errors.As(err, &fe) || errors.Is(err, coordstore.ErrConflict) || fe.Fence != f || fe.Current != c.gen {
				t.Errorf("gen %v version %d: %v, want ErrFenced by generation %v", c.gen, c.have, err, c.gen)
			}
			continue
		}
		var ce *coordstore.ConflictError
		if !errors.As(err, &ce) || errors.Is(err, coordstore.ErrFenced) || ce.Want != 2 || ce.Have != c.want || ce.Stream != "o" {
			t.Errorf("gen %v version %d: %v, want a conflict with version %d", c.gen, c.have, err, c.want)
		}
	}
}
