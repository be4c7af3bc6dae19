package boltwindows_test

import (
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/trident/windowstore/boltwindows"
	"github.com/squallstream/squall/trident/windowstore/windowstoretest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T) *boltwindows.Store {
	s, err := boltwindows.Open(filepath.Join(t.TempDir(), "windows.db"), boltwindows.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	windowstoretest.Run(t, func(t *testing.T) windowstore.Store { return open(t) })
}

// TestSurvivesReopen: records are on disk.
func TestSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "windows.db")
	s, err := boltwindows.Open(path, boltwindows.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), "w/0", 7, []byte("seven"), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "w/0", 7); err == nil {
		t.Error("Get after Close succeeded")
	}
	s, err = boltwindows.Open(path, boltwindows.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(t.Context(), "w/0", 7)
	if err != nil || string(got) != "seven" {
		t.Errorf("after reopening: %q, %v", got, err)
	}
}
