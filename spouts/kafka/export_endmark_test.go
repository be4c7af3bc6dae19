package kafka

import "github.com/squallstream/squall/trident/spout"

// EndMarkOf returns the spout's lister as the spout.EndMarker it is.
func EndMarkOf(s *Spout) spout.EndMarker { return s.lister }
