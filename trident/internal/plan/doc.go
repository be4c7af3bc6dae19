// Package plan is the Trident planner: a pure function from a declared
// graph of operations to stages, the units that each run in one
// component of the generated topology, and the routes between them.
//
// A Stage is everything from a source or a repartition (a Partition,
// Merge or Join node) up to the next repartitions. New reads a graph of
// Nodes, which describe only what planning needs (kind, parents, output
// and input fields, parallelism hint, the state a query reads), and
// returns a Plan; it never writes to the nodes, so planning a graph twice
// gives two equal, independent plans. A node's Payload is opaque here:
// the API layer puts its operation there and finds it again when it
// runs the stage.
//
// Print renders a plan as text; golden files in testdata/plans pin the
// plans of representative graphs (docs/trident.md, "Reading a plan").
//
// Package plan imports the standard library only: not the API layer
// (package trident), not the runtime, not the tuple-level topology.
package plan
