package trident

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/coordstore"
)

// TestCommittedRightAfterResubmit: a topology submitted again over the
// store of an earlier run reports that run's last committed txid from the
// moment Submit returns, not 0 until its master has loaded it.
func TestCommittedRightAfterResubmit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := coordstore.NewMemory()
		f := OpaqueMemory[int64]("counts")
		first := submit(t, wordCount(newFixed(1, sentences...), f, 1), Config{Store: store})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := first.WaitCommitted(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if err := first.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		rec, _, err := store.LoadCoordinator(ctx, "wordcount")
		if err != nil {
			t.Fatal(err)
		}
		stored := rec.Committed // the Running may stop after a commit it has not published
		again, err := wordCount(newFixed(1, sentences...), f, 1).Submit(ctx, Config{Store: store})
		if err != nil {
			t.Fatal(err)
		}
		defer again.Stop(ctx)
		if got := again.Committed(); got != stored || got < 3 {
			t.Fatalf("Committed() right after Submit = %d, want the stored %d", got, stored)
		}
	})
}
