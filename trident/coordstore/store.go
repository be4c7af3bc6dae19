package coordstore

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/txn"
)

// MaxTxID is reserved as the upper bound of a search: PrevMeta(ctx, k,
// MaxTxID) returns the last entry. No entry has this txid.
const MaxTxID = txn.TxID(math.MaxUint64)

// maxName bounds stream and partition names.
const maxName = 1024

// Store keeps coordination state for any number of topologies (owners).
// See the package comment for the ordering contract every implementation
// keeps, and for fencing.
type Store interface {
	// Acquire makes the caller the owner of owner (a topology's name): it
	// stores and returns a generation greater than every generation
	// Acquire returned before for owner. From then on every write made
	// with an older generation of owner is rejected with an error matching
	// ErrFenced.
	Acquire(ctx context.Context, owner string) (Generation, error)

	// Generation returns the newest generation of owner (0: none yet).
	Generation(ctx context.Context, owner string) (Generation, error)

	// LoadCoordinator returns the coordinator record of owner and its
	// version. Without a record it returns the zero Record and version 0.
	LoadCoordinator(ctx context.Context, owner string) (Record, Version, error)

	// SwapCoordinator stores rec as the coordinator record of f.Owner if
	// f.Generation is the owner's newest generation and the stored version
	// is old (0: there is no record yet), and returns the new version. A
	// superseded generation gets an error matching ErrFenced, a version
	// mismatch one matching ErrConflict; neither stores anything.
	SwapCoordinator(ctx context.Context, f Fence, old Version, rec Record) (Version, error)

	// GetMeta returns the metadata of key k for txid, and whether there is
	// an entry. An entry may hold an empty value.
	GetMeta(ctx context.Context, k Key, txid txn.TxID) ([]byte, bool, error)

	// PrevMeta returns the entry of k with the greatest txid below txid,
	// and whether there is one. PrevMeta(ctx, k, MaxTxID) is the last entry.
	PrevMeta(ctx context.Context, k Key, txid txn.TxID) (Entry, bool, error)

	// PutMeta sets the metadata of k for txid, replacing any entry. It
	// fails with ErrFenced, storing nothing, unless gen is the newest
	// generation of k.Owner.
	PutMeta(ctx context.Context, gen Generation, k Key, txid txn.TxID, value []byte) error

	// RemoveMeta deletes the entry of k for txid, if any. It is fenced
	// like PutMeta.
	RemoveMeta(ctx context.Context, gen Generation, k Key, txid txn.TxID) error

	// CleanupMetaBefore deletes every entry of k whose txid is below txid.
	// It is fenced like PutMeta.
	CleanupMetaBefore(ctx context.Context, gen Generation, k Key, txid txn.TxID) error

	// Close releases the store. Later calls return ErrClosed; closing again
	// returns nil.
	io.Closer
}

// Generation identifies one owner of a topology (see Store.Acquire).
type Generation = state.Generation

// Fence names a writer: the owner (a topology's name) and its generation.
type Fence = state.Fence

// ValidateFence returns an error matching ErrInvalid if f names no owner
// or no generation.
func ValidateFence(f Fence) error {
	if err := ValidateStream(f.Owner); err != nil {
		return err
	}
	if f.Generation == 0 {
		return fmt.Errorf("%w: generation 0 of %q (take one with Acquire)", ErrInvalid, f.Owner)
	}
	return nil
}

// Record is the batch coordinator's durable state for one stream.
type Record struct {
	// Committed is the last committed txid; 0 before the first commit.
	Committed txn.TxID
	// Attempts maps each txid after Committed that was emitted to the
	// highest attempt number used for it.
	Attempts map[txn.TxID]uint32
	// Failures maps each txid after Committed that has failures counted
	// against the attempt limit to their number. Records stored before it
	// existed load without it.
	Failures map[txn.TxID]uint32
}

// Clone returns a deep copy of r.
func (r Record) Clone() Record {
	c := Record{Committed: r.Committed}
	if len(r.Attempts) > 0 {
		c.Attempts = maps.Clone(r.Attempts)
	}
	if len(r.Failures) > 0 {
		c.Failures = maps.Clone(r.Failures)
	}
	return c
}

// Version identifies one stored state of a coordinator record. 0 means
// "no record".
type Version uint64

// Key names a sequence of metadata entries: those of one partition (or of
// the spout coordinator) of one stream of one owner (topology).
type Key struct {
	Owner     string // the topology's name, whose generations fence the key
	Stream    string // the stream's state id, stable across deployments
	Partition string // a spout partition id such as "topic@3"
}

// String returns "owner/stream/partition".
func (k Key) String() string { return k.Owner + "/" + k.Stream + "/" + k.Partition }

// Fence returns the fence of a write to k by generation gen.
func (k Key) Fence(gen Generation) Fence { return Fence{Owner: k.Owner, Generation: gen} }

// Validate returns an error matching ErrInvalid if the owner, the stream
// or the partition name is empty or longer than 1024 bytes.
func (k Key) Validate() error {
	if err := ValidateStream(k.Owner); err != nil {
		return fmt.Errorf("%w (owner of %s)", err, k)
	}
	if err := ValidateStream(k.Stream); err != nil {
		return err
	}
	if k.Partition == "" || len(k.Partition) > maxName {
		return fmt.Errorf("%w: partition name of %d bytes in %s", ErrInvalid, len(k.Partition), k)
	}
	return nil
}

// ValidateStream returns an error matching ErrInvalid if stream is empty
// or longer than 1024 bytes.
func ValidateStream(stream string) error {
	if stream == "" || len(stream) > maxName {
		return fmt.Errorf("%w: stream name of %d bytes", ErrInvalid, len(stream))
	}
	return nil
}

// ValidateTxID returns an error matching ErrInvalid unless txid can name
// an entry: neither 0 nor MaxTxID.
func ValidateTxID(txid txn.TxID) error {
	if txid == 0 || txid == MaxTxID {
		return fmt.Errorf("%w: txid %d", ErrInvalid, txid)
	}
	return nil
}

// Entry is one metadata entry.
type Entry struct {
	TxID  txn.TxID
	Value []byte
}
