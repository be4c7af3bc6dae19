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
// fail them). A request whose batch fails gets the failure rather than a
// replay's result.
//
// Every request has a budget (Config): its arguments are at most MaxArgs
// bytes (ErrTooLarge, HTTP 413); at most MaxConcurrent requests of a
// function are in flight and at most MaxPending of them wait for a batch
// (ErrOverloaded, 429; ErrBusy, 503; both with Retry-After); and it has a
// deadline (ErrTimeout, 504). A request that ends without an answer (its
// deadline, its caller gone, its batch failed) cancels the context its
// batch's work runs under (Function.Context), so the topology stops
// working for nobody. Refusals are counted (Server.Stats) and logged.
// HTTPServer sets the connection budgets of the http.Server that serves
// Handler, or Handler wrapped by middleware.
//
// The requests live in the process's memory: a topology that serves a
// function runs in the process of its Server (trident.Submit, not split
// across worker processes).
package drpc
