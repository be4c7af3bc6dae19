package httpguard

import "sync/atomic"

// Reason is why a request was refused; its String is the reason label of
// squall_http_refused_total.
type Reason uint8

// The reasons a Guard refuses a request for.
const (
	ReasonHost            Reason = iota // the Host header names another server (421)
	ReasonCrossOrigin                   // a non-safe cross-origin browser request (403)
	ReasonUnauthenticated               // no valid identity (401)
	ReasonForbidden                     // the identity may not do this (403)
	ReasonBodyTooLarge                  // the body is over its budget (413, or cut while read)
	ReasonBusy                          // a concurrency budget is full (503)
	numReasons
)

var reasonNames = [numReasons]string{
	ReasonHost:            "host",
	ReasonCrossOrigin:     "cross_origin",
	ReasonUnauthenticated: "unauthenticated",
	ReasonForbidden:       "forbidden",
	ReasonBodyTooLarge:    "body_too_large",
	ReasonBusy:            "busy",
}

// String returns the reason's label: "host", "cross_origin",
// "unauthenticated", "forbidden", "body_too_large" or "busy".
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Reasons returns every Reason, in label order of their constants.
func Reasons() []Reason {
	rs := make([]Reason, numReasons)
	for i := range rs {
		rs[i] = Reason(i)
	}
	return rs
}

// Refusals counts a Guard's refusals by reason. It is safe for
// concurrent use; the zero Refusals counts nothing yet.
type Refusals struct {
	n [numReasons]atomic.Uint64
}

func (c *Refusals) add(r Reason) { c.n[r].Add(1) }

// Count returns the refusals counted for r.
func (c *Refusals) Count(r Reason) uint64 {
	if r >= numReasons {
		return 0
	}
	return c.n[r].Load()
}

// Counts returns the refusals so far by reason label, every reason
// present (zero included).
func (c *Refusals) Counts() map[string]uint64 {
	m := make(map[string]uint64, numReasons)
	for _, r := range Reasons() {
		m[r.String()] = c.n[r].Load()
	}
	return m
}
