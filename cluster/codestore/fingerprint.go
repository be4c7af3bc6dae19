package codestore

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"runtime/debug"
	"slices"
)

// Plan describes a topology's shape for its fingerprint: what a change of
// code must not silently alter under a running topology.
type Plan struct {
	Components []Component `json:"components"`
}

// Component is one spout or bolt of a Plan.
type Component struct {
	Name        string     `json:"name"`
	Fields      []string   `json:"fields,omitempty"` // output fields, in order
	Parallelism int        `json:"parallelism"`
	Inputs      []Grouping `json:"inputs,omitempty"`
}

// Grouping is how a component subscribes to another's stream.
type Grouping struct {
	From   string   `json:"from"`
	Stream string   `json:"stream,omitempty"`
	Kind   string   `json:"kind"`             // "shuffle", "fields", "all", "global", ...
	Fields []string `json:"fields,omitempty"` // for fields groupings, in order
}

// Canonical encodes the plan independently of the order of its components
// and inputs (the order of fields is kept: it is meaningful).
func (p Plan) Canonical() []byte {
	cs := slices.Clone(p.Components)
	for i := range cs {
		cs[i].Inputs = slices.Clone(cs[i].Inputs)
		slices.SortFunc(cs[i].Inputs, func(a, b Grouping) int {
			return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Stream, b.Stream), cmp.Compare(a.Kind, b.Kind))
		})
	}
	slices.SortFunc(cs, func(a, b Component) int { return cmp.Compare(a.Name, b.Name) })
	b, _ := json.Marshal(Plan{Components: cs}) // plain data: cannot fail
	return b
}

// Fingerprint identifies a topology's plan together with the build of the
// binary that runs it.
type Fingerprint [sha256.Size]byte

func (f Fingerprint) String() string { return hex.EncodeToString(f[:]) }

// NewFingerprint hashes plan (a canonical description, e.g.
// Plan.Canonical) and build (the binary's module, dependency versions and
// build settings, as debug.BuildInfo.String prints them).
func NewFingerprint(plan []byte, build *debug.BuildInfo) Fingerprint {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(plan)))
	h.Write(n[:])
	h.Write(plan)
	if build != nil {
		h.Write([]byte(build.String()))
	}
	var f Fingerprint
	h.Sum(f[:0])
	return f
}

// CurrentFingerprint is NewFingerprint with the running binary's build
// information.
func CurrentFingerprint(plan []byte) (Fingerprint, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Fingerprint{}, errors.New("codestore: the binary carries no build information")
	}
	return NewFingerprint(plan, bi), nil
}
