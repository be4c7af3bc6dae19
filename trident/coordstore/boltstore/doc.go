// Package boltstore is a coordstore.Store in a local bbolt file: the
// embedded, durable default for a single machine.
//
// Every write is fsync'd before the call returns, so it survives a
// process or machine crash. Writes that arrive while another commit is in
// progress commit together, in arrival order, in one bbolt transaction
// (group commit: one pair of fsyncs for all of them, and no write waits
// for a timer); each write is still atomic and checked on its own. bbolt
// locks the file, so only one process opens it at a time; within that
// process the Store is safe for concurrent use.
//
// Layout: bucket "owners" maps owner (topology) names to their newest
// generation; bucket "coordinator" maps owner names to records; bucket
// "meta" holds a bucket per owner, holding a bucket per stream with a
// bucket per partition, whose keys are txids as 8 big-endian bytes. A
// write checks the owner's generation in the same transaction, so a
// superseded generation can never write. Every value is framed as a format byte, a
// CRC-32C of the payload and the payload, so that damaged data is reported
// as coordstore.ErrCorrupt instead of being misread.
package boltstore
