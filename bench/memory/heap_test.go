package memory

import (
	"runtime"
	"testing"
)

// liveHeap returns the live heap after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// perItem runs fill b.N times, each time on a fresh structure of n items,
// and reports the growth of the live heap per item, the median over the
// runs, as metric unit. fill returns what must stay alive while the heap
// is measured.
func perItem(b *testing.B, n int, unit string, fill func() any) {
	b.Helper()
	var growths []float64
	for b.Loop() {
		b.StopTimer()
		before := liveHeap()
		b.StartTimer()
		held := fill()
		b.StopTimer()
		after := liveHeap()
		runtime.KeepAlive(held)
		growths = append(growths, (float64(after)-float64(before))/float64(n))
		b.StartTimer()
	}
	b.Logf("per run: %.1f", growths)
	b.ReportMetric(median(growths), unit)
	b.ReportMetric(0, "ns/op")
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ { // insertion sort: a handful of runs
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}
