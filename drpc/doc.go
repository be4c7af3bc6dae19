// Package drpc is squall's distributed RPC front end, after Storm's DRPC:
// a caller asks a function of a running Trident topology and waits for
// its result. The topology reads the requests as a stream
// (trident.Topology.NewDRPCStream) and returns each request's tuples
// (trident.ReturnResults); every request is a batch of its own, so the
// topology's aggregations and state queries run per request.
//
// A Server holds the requests of its functions: the callers' side
// (Execute, and Handler for HTTP: POST /drpc/{function}) and the
// topology's side (Function: the batches take requests, answer them or
// fail them). Requests wait in a bounded queue per function; every
// request has a deadline; a request whose batch fails gets the failure
// rather than a replay's result.
//
// The requests live in the process's memory: a topology that serves a
// function runs in the process of its Server (trident.Submit, not split
// across worker processes).
package drpc
