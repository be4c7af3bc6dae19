// Package ops holds squall's built-in Trident operations, the Go
// counterparts of the built-ins of Apache Storm's Trident:
//
//   - combiner aggregators Count, Sum, Min, Max, MinBy and MaxBy, for
//     PersistentAggregate (and, through trident.Combining, for batch
//     aggregations);
//   - aggregators FirstN, FirstNBy and Take, the per-partition part of
//     Trident's FirstN;
//   - filters Equals, FilterNull, Negate, Debug and DebugLog;
//   - state queries MapGet, SnapshotGet and TupleCollectionGet.
//
// Every operation implements one of the interfaces of package trident and
// holds no package-level state: writers and loggers are passed in.
//
// # Values
//
// Tuples carry values of any type, so the operations that read a field
// convert what they find:
//
//   - numbers: Sum[N], Min[N], Max[N] and FirstN[N] accept every Go
//     integer and floating-point type (and named types over them, and
//     json.Number).
//     An integer becomes any integer N it fits in; integers and floats
//     become a float N; a float never becomes an integer N, even 2.0,
//     because a batch that mixes 2.0 and 2.5 would then fail half-way.
//   - strings: any string type becomes a string type.
//   - anything else must already have the wanted type (time.Time for
//     Min[time.Time], your type for MinBy).
//
// The wanted type is declared (Sum[int64], Min[time.Time]) rather than
// taken from the data, so that whether a value is accepted never depends
// on which values came before it.
//
// A nil value is no value: Sum, Min and Max skip it (it contributes the
// aggregator's Zero), as SQL aggregates skip NULL. Count counts tuples,
// nil or not. FirstN ranks tuples with a nil sort value after all others.
//
// # Errors
//
// A value an operation cannot use (a string to sum, an integer that
// overflows, a float where an integer is wanted, a string where
// FirstN[time.Time] wants a time) is a *ValueError, which matches ErrBadValue and names
// the operation, the field, the value and its type. It is returned as a
// rejection of the tuple (trident.Reject): the runtime sends the tuple to
// Config.DeadLetters and the batch goes on without it; with no dead
// letters configured the worker stops, so bad input is never dropped
// silently.
//
// A bad value is not a retryable failure: sources replay a batch with the
// same tuples, so a retry meets the same record and the stream stalls
// (until Config.MaxAttempts halts it). Nor is it skipped quietly: it goes
// where operators can see it, count it and replay it once fixed. (Storm's
// built-ins throw, which crashes the worker again on every replay.)
//
// A field missing from the tuple is a *FieldError matching ErrNoField. It
// is fatal (a plain error in the sense of package failure), not a
// rejection: it means the operation was given the wrong input fields, and
// every tuple would be rejected.
//
// State errors (from MultiGet, Get or a TupleCollection) are returned
// wrapped with the operation's name; they keep the failure kind their
// state gave them.
package ops
