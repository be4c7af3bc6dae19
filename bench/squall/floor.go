package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// runFloorWordCount is the floor of trident-wordcount: the same work with
// no framework. Each of o.parallelism goroutines splits o.sentences of the
// same sentences per batch with strings.SplitSeq, counts the batch's words
// in a map of its own, and merges that map into its total map; the totals
// are merged into one when the run ends and checked against the number of
// words counted. No tuples, no state store, no fault tolerance: what a
// hand-written Go loop does on this machine, the figure squall's word count
// is measured against (words_per_s over the same warm-up and window).
func runFloorWordCount(ctx context.Context, o options) (string, error) {
	batch := make([]string, o.sentences)
	wordsPerBatch := 0
	for i := range batch {
		batch[i] = sentences[i%len(sentences)]
		wordsPerBatch += len(strings.Split(batch[i], " "))
	}
	counters := make([]floorCounter, o.parallelism)
	totals := make([]map[string]int64, o.parallelism)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range o.parallelism {
		wg.Go(func() { totals[g] = floorLoop(batch, &counters[g].batches, stop) })
	}
	figures, err := measureFloor(ctx, o, counters, wordsPerBatch)
	close(stop)
	wg.Wait()
	if err != nil {
		return "", err
	}
	// The totals must hold every word of every batch: the check that the
	// loop did the work it is credited with.
	total := map[string]int64{}
	for _, t := range totals {
		for w, n := range t {
			total[w] += n
		}
	}
	var words, batches int64
	for _, n := range total {
		words += n
	}
	for i := range counters {
		batches += counters[i].batches.Load()
	}
	if words != batches*int64(wordsPerBatch) {
		return "", fmt.Errorf("floor counted %d words in %d batches of %d words", words, batches, wordsPerBatch)
	}
	return figures, nil
}

// floorCounter is one goroutine's count of finished batches, padded to a
// cache line of its own so that the two goroutines of floor-wordcount-p2
// do not share one.
type floorCounter struct {
	batches atomic.Int64
	_       [56]byte
}

// floorLoop counts batch after batch until stop is closed and returns its
// total counts; batches is incremented after each batch is merged.
func floorLoop(batch []string, batches *atomic.Int64, stop <-chan struct{}) map[string]int64 {
	total := map[string]int64{}
	counts := map[string]int64{}
	for {
		select {
		case <-stop:
			return total
		default:
		}
		for _, s := range batch {
			for w := range strings.SplitSeq(s, " ") {
				counts[w]++
			}
		}
		for w, n := range counts {
			total[w] += n
		}
		clear(counts)
		batches.Add(1)
	}
}

// measureFloor waits for every goroutine's first batch, warms up, and
// returns the words per second counted over the window; batches counts
// every goroutine's batches, each of words_per_batch words.
func measureFloor(ctx context.Context, o options, counters []floorCounter, wordsPerBatch int) (string, error) {
	count := func() int64 {
		var n int64
		for i := range counters {
			n += counters[i].batches.Load()
		}
		return n
	}
	for i := range counters {
		for counters[i].batches.Load() == 0 {
			if err := sleep(ctx, time.Millisecond); err != nil {
				return "", err
			}
		}
	}
	if err := sleep(ctx, o.warmup); err != nil {
		return "", err
	}
	b0, t0 := count(), time.Now()
	if err := sleep(ctx, o.window); err != nil {
		return "", err
	}
	b1, t1 := count(), time.Now()
	batches := b1 - b0
	return fmt.Sprintf("words_per_s=%.0f batches=%d words_per_batch=%d window_s=%s",
		float64(batches)*float64(wordsPerBatch)/t1.Sub(t0).Seconds(), batches, wordsPerBatch, seconds(o.window)), nil
}
