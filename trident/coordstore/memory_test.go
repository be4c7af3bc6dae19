package coordstore_test

import (
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/coordstoretest"
)

func TestMemoryConformance(t *testing.T) {
	coordstoretest.Run(t, coordstoretest.Factory{
		New: func(t *testing.T) coordstoretest.Opener {
			return func() (coordstore.Store, error) { return coordstore.NewMemory(), nil }
		},
	})
}
