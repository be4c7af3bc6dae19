package nimbus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/squallstream/squall/cluster/meta"
)

// A submit request carries the topology's demand (what its executors
// need of the supervisors, computed by the client from the loads its
// streams declare) in the DemandHeader header, as the JSON of a
// meta.Demand; the body stays the artifact. Without the header the
// topology declares no load. The nimbus stores the demand in the spec
// (Spec.Demand, replaced at every submit) and the scheduler places the
// topology's workers only where they fit.
//
// Budgets: the header's value is at most MaxDemandBytes (else 413), a
// demand lists at most MaxDemandExecutors executors and no figure is
// negative or above MaxLoad (else 400).

// DemandHeader is the header of a submit request carrying the demand.
const DemandHeader = "Squall-Demand"

// MaxDemandBytes bounds the value of DemandHeader. The request line and
// every header share the server's header budget (64 KiB,
// httpguard.DefaultMaxHeaderBytes): this leaves 16 KiB to the rest. A
// demand of executors that declare loads takes about 30 bytes each, so
// this carries about 1,600 of them.
const MaxDemandBytes = 48 << 10

// MaxDemandExecutors bounds the executors a demand lists.
const MaxDemandExecutors = 4096

// MaxLoad bounds each figure of a demand (CPU in percent of a core,
// memory in MB), so that no sum over a topology's executors overflows.
const MaxLoad = 1 << 30

// ErrDemandTooLarge is wrapped by the refusal of a demand larger than
// MaxDemandBytes (413 Request Entity Too Large). It wraps ErrInvalid.
var ErrDemandTooLarge = fmt.Errorf("%w: the topology's demand is too large", ErrInvalid)

// EncodeDemand returns the value of DemandHeader for d: "" for nil (no
// header). It refuses a demand CheckDemand refuses or whose encoding is
// larger than MaxDemandBytes.
func EncodeDemand(d *meta.Demand) (string, error) {
	if d == nil {
		return "", nil
	}
	if err := CheckDemand(d); err != nil {
		return "", err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return "", err
	}
	if len(b) > MaxDemandBytes {
		return "", fmt.Errorf("%w: %d bytes of JSON for %d executors, at most %d bytes", ErrDemandTooLarge, len(b),
			len(d.Executors), MaxDemandBytes)
	}
	return string(b), nil
}

// DecodeDemand reads a value of DemandHeader: nil for "" (or a demand of
// nothing but zeros), else the demand, checked (CheckDemand). Unknown
// fields and trailing data are refused.
func DecodeDemand(v string) (*meta.Demand, error) {
	if v == "" {
		return nil, nil
	}
	if len(v) > MaxDemandBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, at most %d", ErrDemandTooLarge, DemandHeader, len(v), MaxDemandBytes)
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	var d meta.Demand
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%w: %s is not the JSON of a demand: %v", ErrInvalid, DemandHeader, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s has data after the demand", ErrInvalid, DemandHeader)
	}
	if err := CheckDemand(&d); err != nil {
		return nil, err
	}
	if d.Master == (meta.Resources{}) && zero(d.Executors) {
		return nil, nil
	}
	return &d, nil
}

// zero reports whether rs ask for nothing.
func zero(rs []meta.Resources) bool {
	for _, r := range rs {
		if r != (meta.Resources{}) {
			return false
		}
	}
	return true
}

// CheckDemand refuses a demand with more than MaxDemandExecutors
// executors or a figure that is negative or above MaxLoad. A nil demand
// is valid (it declares nothing).
func CheckDemand(d *meta.Demand) error {
	if d == nil {
		return nil
	}
	if len(d.Executors) > MaxDemandExecutors {
		return fmt.Errorf("%w: the demand lists %d executors, at most %d", ErrInvalid, len(d.Executors), MaxDemandExecutors)
	}
	if err := checkLoad("the master coordinator", d.Master); err != nil {
		return err
	}
	for i, r := range d.Executors {
		if err := checkLoad(fmt.Sprintf("executor %d", i), r); err != nil {
			return err
		}
	}
	return nil
}

func checkLoad(what string, r meta.Resources) error {
	if r.CPU < 0 || r.MemoryMB < 0 {
		return fmt.Errorf("%w: the demand of %s is negative (%d%% CPU, %d MB)", ErrInvalid, what, r.CPU, r.MemoryMB)
	}
	if r.CPU > MaxLoad || r.MemoryMB > MaxLoad {
		return fmt.Errorf("%w: the demand of %s (%d%% CPU, %d MB) exceeds %d", ErrInvalid, what, r.CPU, r.MemoryMB, MaxLoad)
	}
	return nil
}
