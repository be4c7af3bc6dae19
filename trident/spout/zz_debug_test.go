package spout_test

import (
	"testing"

	"pgregory.net/rapid"
)

func TestModelStats(t *testing.T) {
	for _, kind := range both {
		commits, records, frozenReplays, runs := 0, 0, 0, 0
		rapid.Check(t, func(rt *rapid.T) {
			m := newModel(rt, kind, false)
			rt.Repeat(map[string]func(*rapid.T){
				"append": m.append,
				"begin":  m.begin,
				"emit":   m.emit,
				"emit2":  m.emit,
				"fail":   m.fail,
				"commit": func(t *rapid.T) { before := m.committed; m.commit(t, false); if m.committed > before { commits++ } },
				"commitFails": func(t *rapid.T) { m.commit(t, true); frozenReplays++ },
				"restart": m.restart,
				"":        m.invariant,
			})
			for _, l := range m.log {
				records += len(l)
			}
			runs++
		})
		t.Logf("%s: runs %d commits %d records %d commitFails %d", kind, runs, commits, records, frozenReplays)
	}
}
