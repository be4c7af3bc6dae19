package codestore

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDirFetch: Fetch stores what hashes to the digest asked for, nothing
// else, and quotes at most maxErrorBody bytes of a refusal.
func TestDirFetch(t *testing.T) {
	body := map[string]string{"/good": "binary v1", "/bad": "binary v2"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := body[r.URL.Path]
		if !ok {
			http.Error(w, strings.Repeat("x", 10*maxErrorBody), http.StatusNotFound)
			return
		}
		w.Write([]byte(b))
	}))
	defer srv.Close()
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ref, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dg, err := ref.Put(strings.NewReader("binary v1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := d.Fetch(ctx, srv.Client(), srv.URL+"/bad", dg); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("other content: %v, want ErrCorrupt", err)
	}
	if err := d.Verify(dg); !errors.Is(err, ErrMissing) {
		t.Fatalf("other content was stored: %v", err)
	}
	err = d.Fetch(ctx, srv.Client(), srv.URL+"/missing", dg)
	if err == nil || !strings.Contains(err.Error(), "404") || strings.Count(err.Error(), "x") > maxErrorBody {
		t.Fatalf("a refusal: %.100v… (%d bytes), want a 404 quoting at most %d bytes", err, len(errString(err)), maxErrorBody)
	}
	if err := d.Fetch(ctx, srv.Client(), srv.URL+"/good", dg); err != nil {
		t.Fatal(err)
	}
	if err := d.Verify(dg); err != nil {
		t.Fatal(err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
