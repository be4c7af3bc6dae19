// Package bolt is squall's embedded, durable backing map: a
// state.BackingMap[[]byte] kept in one bucket of a bbolt (B+tree) file.
//
// Every MultiPut is one bbolt read-write transaction, so a put is atomic:
// after a crash the file holds all of a put's keys or none of them. Reads
// run in read-only transactions, concurrently with each other and with a
// writer. Keys are state.Key encodings, values are stored as given.
//
// Errors are classified for the runtime (package failure): a cancelled
// context and I/O failures while committing are retryable; a closed map, a
// key or value too large for bbolt, and other misuse are fatal.
package bolt
