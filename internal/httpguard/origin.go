package httpguard

import (
	"fmt"
	"net/http"
)

// CrossOrigin returns the middleware that refuses (403) a non-safe
// (not GET, HEAD or OPTIONS) cross-origin browser request, with
// net/http's CrossOriginProtection: the browser's Sec-Fetch-Site header,
// or else its Origin header against Host. Requests without either
// (curl, programs) pass: they cannot come from a page the operator
// visits.
//
// trusted are the origins ("https://console.example:8443", scheme, host
// and port only) whose pages may send such requests anyway, for a web
// console served elsewhere; an invalid one is an error.
func (g *Guard) CrossOrigin(trusted ...string) (Middleware, error) {
	cop := http.NewCrossOriginProtection()
	for _, o := range trusted {
		if err := cop.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("httpguard: trusted origin: %w", err)
		}
	}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := cop.Check(r); err != nil {
				g.refuse(w, r, ReasonCrossOrigin, http.StatusForbidden, err.Error())
				return
			}
			h.ServeHTTP(w, r)
		})
	}, nil
}
