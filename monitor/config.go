package monitor

import (
	"fmt"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
)

// Optional figures of a registered topology, found by type assertion like
// Batches: whether it is active, its batches in flight, and the
// configuration it runs with. *topology.Running and *trident.Running have
// the ones that apply to them.

// Activity reports whether a topology's spouts are asked to emit (for
// Trident: whether batches are started).
type Activity interface {
	Active() bool
}

// InFlighter reports a Trident topology's batches in flight.
type InFlighter interface {
	InFlight() int64
}

// StateCounter reports a Trident topology's persistent states' counters
// and its writes rejected for a newer owner generation.
type StateCounter interface {
	States() []trident.StateStats
	FencingRejections() uint64
}

var (
	_ Activity     = (*topology.Running)(nil)
	_ Activity     = (*trident.Running)(nil)
	_ InFlighter   = (*trident.Running)(nil)
	_ StateCounter = (*trident.Running)(nil)
)

// StateView is one persistent state's counters since submission.
type StateView struct {
	Name      string `json:"name"`      // "persist-N", N the id of the node that writes it
	Component string `json:"component"` // the bolt whose tasks write it
	Reads     uint64 `json:"reads"`     // keys read by commits (map state)
	Writes    uint64 `json:"writes"`    // keys written by commits (map state)
	Errors    uint64 `json:"errors"`    // failed commits, fenced writes included
}

// stateViews returns the states' documents; the declared figures fill
// their counters.
func stateViews(ss []trident.StateStats, f *figureSet) []StateView {
	vs := make([]StateView, 0, len(ss))
	for _, s := range ss {
		v := StateView{Name: s.Name, Component: s.Component}
		fill(&v, f.state, s)
		vs = append(vs, v)
	}
	return vs
}

// ConfigView is the configuration a topology runs with, its defaults
// filled in: the tuple runtime's, and for Trident its own in "trident".
type ConfigView struct {
	Ackers                   int     `json:"ackers"`
	MessageTimeoutSeconds    float64 `json:"message_timeout_seconds"`
	DisableTimeouts          bool    `json:"disable_timeouts"`
	MaxSpoutPending          int     `json:"max_spout_pending"` // 0: unlimited (Trident: MaxBatchesInFlight bounds instead)
	BatchSize                int     `json:"batch_size"`
	QueueCapacity            int     `json:"queue_capacity"`
	SpoutIdleWaitSeconds     float64 `json:"spout_idle_wait_seconds"`
	StartInactive            bool    `json:"start_inactive"`
	RestartMinBackoffSeconds float64 `json:"restart_min_backoff_seconds"`
	RestartMaxBackoffSeconds float64 `json:"restart_max_backoff_seconds"`
	// Trident is the Trident configuration; null for a tuple-level
	// topology.
	Trident *TridentConfigView `json:"trident"`
}

// TridentConfigView is a Trident topology's own configuration.
type TridentConfigView struct {
	MaxBatchesInFlight       int     `json:"max_batches_in_flight"`
	BatchEmitIntervalSeconds float64 `json:"batch_emit_interval_seconds"`
	MaxAttempts              int     `json:"max_attempts"` // 0: no limit
	RetryBackoffSeconds      float64 `json:"retry_backoff_seconds"`
	MaxRetryBackoffSeconds   float64 `json:"max_retry_backoff_seconds"`
	OnCorruptState           string  `json:"on_corrupt_state"`
	Store                    string  `json:"store"`        // the coordination store's Go type
	DeadLetters              bool    `json:"dead_letters"` // a dead-letter sink is configured
	Quarantine               bool    `json:"quarantine"`   // a quarantine sink is configured
	SharedCluster            bool    `json:"shared_cluster"`
}

// configOf returns the configuration view of t, or nil if t cannot tell
// its configuration.
func configOf(t Topology) *ConfigView {
	switch c := t.(type) {
	case interface{ Config() trident.Config }:
		cfg := c.Config()
		v := topologyConfigView(cfg.Topology)
		v.Trident = &TridentConfigView{
			MaxBatchesInFlight: cfg.MaxBatchesInFlight, BatchEmitIntervalSeconds: cfg.BatchEmitInterval.Seconds(),
			MaxAttempts: cfg.MaxAttempts, RetryBackoffSeconds: cfg.RetryBackoff.Seconds(),
			MaxRetryBackoffSeconds: cfg.MaxRetryBackoff.Seconds(), OnCorruptState: cfg.OnCorruptState.String(),
			Store: fmt.Sprintf("%T", cfg.Store), DeadLetters: cfg.DeadLetters != nil, Quarantine: cfg.Quarantine != nil,
			SharedCluster: cfg.Cluster != nil,
		}
		return &v
	case interface{ Config() topology.Config }:
		v := topologyConfigView(c.Config())
		return &v
	}
	return nil
}

func topologyConfigView(c topology.Config) ConfigView {
	return ConfigView{
		Ackers: c.Ackers, MessageTimeoutSeconds: c.MessageTimeout.Seconds(), DisableTimeouts: c.DisableTimeouts,
		MaxSpoutPending: c.MaxSpoutPending, BatchSize: c.BatchSize, QueueCapacity: c.QueueCapacity,
		SpoutIdleWaitSeconds: c.SpoutIdleWait.Seconds(), StartInactive: c.StartInactive,
		RestartMinBackoffSeconds: c.RestartMinBackoff.Seconds(), RestartMaxBackoffSeconds: c.RestartMaxBackoff.Seconds(),
	}
}
