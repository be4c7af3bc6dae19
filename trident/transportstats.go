package trident

import "github.com/squallstream/squall/transport"

// TransportStats reports the statistics of the transport server of a
// share run across worker processes (RunShare), refusals by reason
// included; false for a topology in one process.
func (r *Running) TransportStats() (transport.ServerStats, bool) {
	if r.run == nil {
		return transport.ServerStats{}, false
	}
	return r.run.TransportStats()
}
