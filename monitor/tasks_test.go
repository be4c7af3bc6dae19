package monitor_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/topology"
)

// Per-task counters: one series per task with the task label, and the
// tasks in the component's REST document.
func TestTaskMetrics(t *testing.T) {
	f := &fakeTopology{name: "tasks", done: make(chan struct{}),
		health: topology.Health{Running: true},
		stats: topology.Stats{Components: map[string]topology.ComponentStats{"count": {
			Emitted: 7, Executed: 11, Acked: 10, Failed: 1,
			Tasks: []topology.TaskStats{
				{Task: 3, Emitted: 2, Executed: 5, Acked: 5},
				{Task: 4, Emitted: 5, Executed: 6, Acked: 5, Failed: 1, Errors: 1},
			},
		}}},
	}
	reg := monitor.NewRegistry()
	if err := reg.Add(f, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{})
	fams := scrape(t, ts)
	for _, c := range []struct {
		name string
		task string
		want float64
	}{
		{"squall_task_tuples_emitted_total", "3", 2},
		{"squall_task_tuples_emitted_total", "4", 5},
		{"squall_task_tuples_executed_total", "3", 5},
		{"squall_task_tuples_executed_total", "4", 6},
		{"squall_task_tuples_acked_total", "3", 5},
		{"squall_task_tuples_acked_total", "4", 5},
		{"squall_task_tuples_failed_total", "3", 0},
		{"squall_task_tuples_failed_total", "4", 1},
	} {
		labels := map[string]string{"topology": "tasks", "component": "count", "task": c.task}
		if v := value(t, fams, c.name, labels); v != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, labels, v, c.want)
		}
	}
	if n := len(fams["squall_task_tuples_executed_total"].GetMetric()); n != 2 {
		t.Errorf("%d executed series, want 2", n)
	}

	var d monitor.ComponentDetail
	getJSON(t, ts, "GET", "/api/v1/topologies/tasks/components/count", nil, http.StatusOK, &d)
	want := []monitor.TaskView{
		{Task: 3, Emitted: 2, Executed: 5, Acked: 5},
		{Task: 4, Emitted: 5, Executed: 6, Acked: 5, Failed: 1, ErrorCount: 1},
	}
	if !slices.Equal(d.Tasks, want) {
		t.Fatalf("tasks %+v, want %+v", d.Tasks, want)
	}
}
