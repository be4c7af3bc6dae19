package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/trident/coordstore/coordstoretest"
)

func TestConformance(t *testing.T) {
	coordstoretest.Run(t, coordstoretest.Factory{
		New: func(t *testing.T) coordstoretest.Opener {
			path := filepath.Join(t.TempDir(), "coord.db")
			return func() (coordstore.Store, error) {
				return boltstore.Open(t.Context(), path, boltstore.Options{})
			}
		},
		Durable: true,
	})
}
