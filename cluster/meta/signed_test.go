package meta

import (
	"errors"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/pki"
)

// TestSignedAssignment: a nimbus's signature verifies, survives the JSON
// round trip through etcd, and fails for any change of the assignment or
// a signer of another role.
func TestSignedAssignment(t *testing.T) {
	now := time.Now()
	ca, err := pki.NewAuthority("t", 0, now)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(r pki.Role) *pki.Bundle {
		b, err := ca.Issue(pki.Request{Role: r, Name: "x", Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	nimbus := issue(pki.Nimbus)
	a := Assignment{Topology: "wc", Artifact: "ab", Status: Active, Epoch: 3,
		Workers: []Worker{{Slot: Slot{Supervisor: "s1", Port: 6700}}}}
	if err := a.Sign(nimbus); err != nil {
		t.Fatal(err)
	}
	var stored Assignment
	if err := Decode("k", []byte(Encode(a)), &stored); err != nil {
		t.Fatal(err)
	}
	if _, err := stored.Verify(nimbus.Roots(), now); err != nil {
		t.Fatalf("the stored assignment: %v", err)
	}
	changed := stored
	changed.Epoch++
	if _, err := changed.Verify(nimbus.Roots(), now); !errors.Is(err, pki.ErrUntrusted) {
		t.Fatalf("a changed epoch verified: %v", err)
	}
	if _, err := stored.Unsigned().Verify(nimbus.Roots(), now); !errors.Is(err, pki.ErrUntrusted) {
		t.Fatalf("an unsigned assignment verified: %v", err)
	}
	byClient := a.Unsigned()
	if err := byClient.Sign(issue(pki.Client)); err != nil {
		t.Fatal(err)
	}
	if _, err := byClient.Verify(nimbus.Roots(), now); !errors.Is(err, pki.ErrUntrusted) {
		t.Fatalf("a client's signature verified: %v", err)
	}
}
