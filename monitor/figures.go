package monitor

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
)

// One figure, one declaration. A figure is declared once, in
// figures_decl.go, with its Prometheus name, help, type and labels, the
// REST field and UI column it shows as, and how its value is read from a
// reading of the topology. The collector, the REST documents and the UI
// tables are all derived from these declarations; nothing else lists the
// figures. docs/operations.md ("How to add a metric") walks through
// adding one.

// kind is how a figure is exported to Prometheus.
type kind int

const (
	kindGauge   kind = iota // value: a number or a bool (1 or 0)
	kindCounter             // value: a number
	// kindQuantiles exports a topology.Latency value as three gauges
	// with an extra quantile label: 0.5, 0.99 and 1 (the maximum).
	kindQuantiles
	// kindHistogram exports a topology.Latency value as a histogram.
	kindHistogram
)

// figure declares one metric of a scope whose readings are S: a
// topology (*reading), one of its components (componentReading), one of
// their tasks (topology.TaskStats) or one of its persistent states
// (trident.StateStats).
type figure[S any] struct {
	name string // the Prometheus name
	help string
	kind kind
	// labels are the labels after the scope's own (topology; component;
	// task; state and component); only a figure with series has some.
	labels []string
	// value reads the figure; false when it does not apply to this
	// topology (it is then left out of all three outputs). It returns a
	// uint64, int64, int, float64, bool or, for the latency kinds, a
	// topology.Latency.
	value func(S) (any, bool)
	// series, when set, exports the figure to Prometheus instead of
	// value: for a figure with several series per scope (extra labels),
	// or one whose series exist under other conditions than its REST
	// field. emit takes the value and the extra labels.
	series func(s S, emit func(v any, labels ...string))
	// field is the REST field the value fills, a path of JSON names
	// inside the scope's document (TopologyDetail, ComponentView,
	// TaskView, StateView), such as "batches.replayed"; "" for none. A
	// path through a null object (batches of a tuple-level topology) is
	// skipped.
	field string
	// column is the heading of the figure's column in the scope's UI
	// table (the index page's topologies, the topology page's
	// components), in declaration order; "" for none.
	column string
	// cell, when set, reads the figure's UI cell instead of value: for a
	// column that shows every series of the figure (all origins of the
	// dead letters) where the REST field holds one of them.
	cell func(S) (any, bool)
}

// figureSet is every declared figure, by scope, with their descriptors.
type figureSet struct {
	topology  []declared[*reading]
	component []declared[componentReading]
	task      []declared[topology.TaskStats]
	state     []declared[trident.StateStats]
}

// declared is a figure with its descriptor.
type declared[S any] struct {
	figure[S]
	desc *prometheus.Desc
}

// The labels each scope puts before a figure's own.
var (
	scopeTopology  = []string{"topology"}
	scopeComponent = []string{"topology", "component"}
	scopeTask      = []string{"topology", "component", "task"}
	scopeState     = []string{"topology", "state", "component"}
)

// newFigureSet returns the declared figures with their descriptors.
func newFigureSet() *figureSet {
	return &figureSet{
		topology:  declare(scopeTopology, topologyFigures()),
		component: declare(scopeComponent, componentFigures()),
		task:      declare(scopeTask, taskFigures()),
		state:     declare(scopeState, stateFigures()),
	}
}

func declare[S any](scope []string, fs []figure[S]) []declared[S] {
	ds := make([]declared[S], 0, len(fs))
	for _, f := range fs {
		labels := slices.Concat(scope, f.labels)
		if f.kind == kindQuantiles {
			labels = append(labels, "quantile")
		}
		ds = append(ds, declared[S]{figure: f, desc: prometheus.NewDesc(f.name, f.help, labels, nil)})
	}
	return ds
}

// describe sends the descriptors of ds.
func describe[S any](ch chan<- *prometheus.Desc, ds []declared[S]) {
	for _, d := range ds {
		ch <- d.desc
	}
}

// collect sends the series of ds read from s, scope holding the values
// of the scope's labels.
func collect[S any](ch chan<- prometheus.Metric, ds []declared[S], s S, scope ...string) {
	for _, d := range ds {
		emit := func(v any, labels ...string) {
			labels = slices.Concat(scope, labels)
			switch d.kind {
			case kindGauge:
				ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, number(v), labels...)
			case kindCounter:
				ch <- prometheus.MustNewConstMetric(d.desc, prometheus.CounterValue, number(v), labels...)
			case kindQuantiles:
				quantiles(v.(topology.Latency), func(q string, secs float64) {
					ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, secs, append(labels, q)...)
				})
			case kindHistogram:
				ch <- histogram(d.desc, v.(topology.Latency), labels...)
			}
		}
		if d.series != nil {
			d.series(s, emit)
			continue
		}
		if v, ok := d.value(s); ok {
			emit(v)
		}
	}
}

// number is v as a Prometheus value; a bool is 1 or 0.
func number(v any) float64 {
	switch v := v.(type) {
	case uint64:
		return float64(v)
	case int64:
		return float64(v)
	case int:
		return float64(v)
	case float64:
		return v
	case bool:
		return bool01(v)
	}
	panic(fmt.Sprintf("monitor: a figure's value %T is not a number", v))
}

// fill sets the REST fields of ds in doc, a pointer to the scope's
// document, from s.
func fill[S any](doc any, ds []declared[S], s S) {
	root := reflect.ValueOf(doc).Elem()
	for _, d := range ds {
		if d.field == "" || d.value == nil {
			continue
		}
		v, ok := d.value(s)
		if !ok {
			continue
		}
		if dst, ok := fieldAt(root, d.field); ok {
			if err := setValue(dst, v); err != nil {
				panic(fmt.Sprintf("monitor: figure %s: field %s: %v", d.name, d.field, err))
			}
		}
	}
}

// fieldAt returns the field at path (JSON names separated by dots) in
// the struct v, looking through embedded structs; false if there is none
// or the path crosses a nil pointer.
func fieldAt(v reflect.Value, path string) (reflect.Value, bool) {
	for name := range strings.SplitSeq(path, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		idx, ok := jsonField(v.Type(), name)
		if !ok {
			return reflect.Value{}, false
		}
		v = v.FieldByIndex(idx)
	}
	return v, true
}

// jsonField returns the index of t's field encoded as name, embedded
// structs included.
func jsonField(t reflect.Type, name string) ([]int, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name {
			return f.Index, true
		}
	}
	return nil, false
}

// setValue stores a figure's value v in dst, converting numbers,
// allocating a nil pointer, and a topology.Latency as a LatencyView.
func setValue(dst reflect.Value, v any) error {
	if dst.Kind() == reflect.Pointer {
		p := reflect.New(dst.Type().Elem())
		if err := setValue(p.Elem(), v); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	}
	if l, ok := v.(topology.Latency); ok {
		v = latencyView(l)
	}
	src := reflect.ValueOf(v)
	switch {
	case src.Type().AssignableTo(dst.Type()):
		dst.Set(src)
	case src.CanConvert(dst.Type()) && isNumber(src.Kind()) && isNumber(dst.Kind()):
		dst.Set(src.Convert(dst.Type()))
	default:
		return fmt.Errorf("cannot store a %s in a %s", src.Type(), dst.Type())
	}
	return nil
}

func isNumber(k reflect.Kind) bool {
	return reflect.Int <= k && k <= reflect.Float64
}

// cell is one figure in a UI table row: its text, or none (shown as a
// muted dash) when the figure does not apply.
type cell struct {
	Text string
	OK   bool
}

// columns returns the UI column headings of ds, in declaration order.
func columns[S any](ds []declared[S]) []string {
	var cs []string
	for _, d := range ds {
		if d.column != "" {
			cs = append(cs, d.column)
		}
	}
	return cs
}

// cells returns the UI cells of ds read from s, one per column.
func cells[S any](ds []declared[S], s S) []cell {
	var cs []cell
	for _, d := range ds {
		if d.column == "" {
			continue
		}
		read := d.value
		if d.cell != nil {
			read = d.cell
		}
		v, ok := read(s)
		if !ok {
			cs = append(cs, cell{})
			continue
		}
		cs = append(cs, cell{Text: cellText(v), OK: true})
	}
	return cs
}

func cellText(v any) string {
	switch v := v.(type) {
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', 4, 64)
	case topology.Latency:
		return v.P50.Round(time.Microsecond).String() + " / " + v.P99.Round(time.Microsecond).String()
	}
	return fmt.Sprint(v)
}
