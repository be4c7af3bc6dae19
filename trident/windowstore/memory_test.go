package windowstore_test

import (
	"testing"

	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/trident/windowstore/windowstoretest"
)

func TestMemoryConformance(t *testing.T) {
	windowstoretest.Run(t, func(*testing.T) windowstore.Store { return windowstore.NewMemory() })
}
