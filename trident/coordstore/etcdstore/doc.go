// Package etcdstore is a coordstore.Store in etcd (client v3), so that a
// cluster whose control plane is etcd keeps its batch coordination there
// too and needs no Cassandra or local disk for it.
//
// # Keys
//
// Everything lives under one prefix P (New's prefix argument;
// DefaultPrefix, "/squall/coordination", if empty):
//
//	P/<owner>/gen                               newest generation, decimal ("3")
//	P/<owner>/coord                             coordinator record: format byte 1, then coordstore.AppendRecord
//	P/<owner>/meta/<stream>/<partition>/<txid>  one metadata entry; the value as given
//
// Owner, stream and partition names are escaped: every byte that is not
// a visible ASCII character (space, control and non-ASCII bytes), and '/'
// and '%', becomes '%' and two hexadecimal digits ("orders/eu" is "orders%2feu"), so names never split
// differently and keys stay readable with etcdctl. A txid is 16
// lowercase hexadecimal digits, so etcd's key order is txid order within
// one partition's entries: PrevMeta is one range read, sorted
// descending, limited to one key, and CleanupMetaBefore one range
// deletion. Prefixes of two stores must not be nested in each other.
//
// # Fencing
//
// Every write is one etcd transaction whose first comparison is the
// owner's generation: Value(P/<owner>/gen) == the writer's generation
// (etcd fails a value comparison on a missing key, so a generation that
// was never acquired is fenced too). etcd applies transactions one at a
// time in revision order, so once Acquire has stored generation g+1, no
// write of generation g applies, whenever it arrives; the rejected
// transaction stores nothing, and its else branch reads the generation
// key back so the error (matching coordstore.ErrFenced) names the
// current generation. The transactions:
//
//   - Acquire: read P/<owner>/gen, then If ModRevision(gen) == the
//     revision read (0: no key) Then Put gen = g+1 Else Get gen, looping
//     from what the else branch returned while concurrent Acquires win.
//   - SwapCoordinator: If gen == g AND ModRevision(coord) == old Then
//     Put coord Else Get gen, Get coord (keys only). The version of a
//     record is its key's ModRevision (0: no record): the revision of the
//     transaction that put it, greater than every earlier one of the
//     cluster, so versions grow as the ordering contract requires. The
//     else branch tells ErrFenced from ErrConflict.
//   - PutMeta, RemoveMeta: If gen == g Then Put / Delete the entry.
//   - CleanupMetaBefore: If gen == g Then Delete the range
//     [P/<owner>/meta/<stream>/<partition>/, .../<txid>): one
//     transaction however many entries it removes.
//
// Reads (Generation, LoadCoordinator, GetMeta, PrevMeta) are
// linearizable. A write returns once etcd has committed it through raft
// on a quorum of members (each fsyncs its log), which is the durability
// the package coordstore ordering contract asks for.
//
// Versions are etcd revisions, which a snapshot restore keeps; data
// copied to another cluster (etcdctl make-mirror) gets new revisions, so
// a coordinator running across such a copy gets ErrConflict and must
// reload.
//
// # Errors and timeouts
//
// etcd's client waits for a connection rather than failing, so every
// request is bounded by Options.RequestTimeout (default 10s) as well as
// by the caller's context. A request that runs out of time, a caller's
// context that ends, and etcd's "cannot answer now" errors (no leader, a
// leader change, a server-side timeout, too many requests, a full
// database, a lost or refused connection) are retryable and marked
// failure.Unavailable, so the Trident runtime backs off and replays
// without counting an attempt; the cause stays reachable (errors.Is
// context.DeadlineExceeded, rpctypes errors). A transaction whose outcome
// is unknown may have applied: metadata writes are idempotent and may be
// retried, and after a failed SwapCoordinator the caller reloads the
// record (rule 3 of the ordering contract). A superseded generation
// (coordstore.ErrFenced), a version mismatch (coordstore.ErrConflict),
// a key under the prefix not in this format (coordstore.ErrCorrupt),
// permission errors and a request over etcd's size limit (1.5 MiB by
// default: a record or an entry must fit in it) are fatal.
//
// # Ownership of the client
//
// New takes a client that stays the caller's: Close stops the store and
// leaves the client open, for the caller to close after the store. Dial
// makes a client from a clientv3.Config and owns it: Close closes it.
package etcdstore
