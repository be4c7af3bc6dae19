package room

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

var day = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

func at(h, m, s int) time.Time {
	return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
}

func ev(kind Kind, visit string, ts time.Time) Event {
	return Event{ID: "e-" + visit + string(kind), Visit: visit, Person: "p-1", Room: "room-01", Kind: kind, Time: ts}
}

func TestPeriodIgnoresOrderAndRepeats(t *testing.T) {
	enter, leave := ev(Enter, "v1", at(9, 10, 0)), ev(Leave, "v1", at(9, 50, 0))
	inOrder := Period{}.With(enter).With(leave)
	reversed := Period{}.With(leave)
	if reversed.Complete() {
		t.Fatal("a LEAVE alone makes a complete period")
	}
	reversed = reversed.With(enter)
	again := reversed.With(leave).With(enter)
	want := Period{Visit: "v1", Room: "room-01", Person: "p-1", Start: at(9, 10, 0), End: at(9, 50, 0)}
	for name, p := range map[string]Period{"in order": inOrder, "LEAVE first": reversed, "applied twice": again} {
		if !p.Equal(want) || !p.Complete() {
			t.Errorf("%s: %+v, want %+v", name, p, want)
		}
	}
}

func TestPiecesSplitAtHours(t *testing.T) {
	p := Period{Visit: "v1", Room: "r", Start: at(9, 45, 30), End: at(11, 5, 0)}
	got := p.Pieces()
	want := []struct {
		hour     time.Time
		from, to int32
	}{{at(9, 0, 0), 45*60 + 30, 3600}, {at(10, 0, 0), 0, 3600}, {at(11, 0, 0), 0, 300}}
	if len(got) != len(want) {
		t.Fatalf("%d pieces, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		s := got[i].Timeline.Visits["v1"]
		if !got[i].Hour.Equal(w.hour) || s.From != w.from || s.To != w.to || got[i].Room != "r" {
			t.Errorf("piece %d: %v %+v, want %v [%d, %d)", i, got[i].Hour, s, w.hour, w.from, w.to)
		}
	}
	// Ending exactly on the hour does not touch the next hour.
	if n := len((Period{Visit: "v", Start: at(9, 0, 0), End: at(10, 0, 0)}).Pieces()); n != 1 {
		t.Errorf("a visit from 9:00 to 10:00 has %d pieces, want 1", n)
	}
	for _, p := range []Period{{Visit: "v", Start: at(9, 0, 0)}, {Visit: "v", Start: at(9, 0, 0), End: at(8, 0, 0)}} {
		if n := len(p.Pieces()); n != 0 {
			t.Errorf("%+v: %d pieces, want none", p, n)
		}
	}
}

func TestVisitSpanningMidnight(t *testing.T) {
	p := Period{Visit: "v", Room: "r", Start: at(23, 30, 0), End: at(24, 20, 0)}
	got := p.Pieces()
	if len(got) != 2 || !got[1].Hour.Equal(day.AddDate(0, 0, 1)) || got[1].Timeline.Visits["v"] != (Span{0, 1200}) {
		t.Fatalf("pieces %+v; want 23:00 and the next day's 00:00", got)
	}
	if got[0].Timeline.Visits["v"] != (Span{1800, 3600}) {
		t.Fatalf("23:00 piece %+v", got[0].Timeline.Visits)
	}
}

func TestTimelineFigures(t *testing.T) {
	tl := Timeline{Visits: map[string]Span{
		"a": {0, 3600},    // the whole hour
		"b": {90, 150},    // minutes 1 and 2
		"c": {120, 121},   // minute 2
		"d": {3599, 3600}, // minute 59
		"e": {600, 600},   // empty
	}, Entries: 3}
	occ := tl.Occupancy()
	if occ[0] != 1 || occ[1] != 2 || occ[2] != 3 || occ[3] != 1 || occ[59] != 2 {
		t.Fatalf("occupancy %v", occ)
	}
	if tl.Peak() != 3 {
		t.Fatalf("peak %d, want 3", tl.Peak())
	}
	if got := tl.PersonMinutes(); got != (3600+60+1+1)/60 {
		t.Fatalf("person-minutes %d", got)
	}
}

func TestMergeIsPure(t *testing.T) {
	a := Timeline{Visits: map[string]Span{"x": {0, 60}}, Entries: 1}
	b := Timeline{Visits: map[string]Span{"y": {60, 120}, "x": {0, 60}}, Entries: 2}
	m := a.Merge(b)
	if len(a.Visits) != 1 || len(b.Visits) != 2 || a.Entries != 1 || b.Entries != 2 {
		t.Fatal("Merge changed its inputs")
	}
	if m.Entries != 3 || len(m.Visits) != 2 {
		t.Fatalf("merged %+v", m)
	}
	m.Visits["z"] = Span{}
	if _, ok := a.Visits["z"]; ok {
		t.Fatal("the merged timeline shares a map with an input")
	}
	if !(Timeline{}).Merge(Timeline{}).Equal(Timeline{}) {
		t.Fatal("empty merge is not empty")
	}
}

func TestDecode(t *testing.T) {
	e := ev(Enter, "v1", at(8, 0, 0))
	got, err := Decode(e.Encode())
	if err != nil || got != e {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{`{`, `{"id":"1"}`, `{"id":"1","visit":"v","person":"p","room":"r","type":"JUMP","ts":"2026-01-05T10:00:00Z"}`,
		`{"id":"1","visit":"v","person":"p","room":"r","type":"ENTER"}`} {
		if _, err := Decode([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(%s) = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestExpected(t *testing.T) {
	x := NewExpected()
	x.Add(ev(Leave, "v1", at(9, 30, 0))) // out of order
	x.Add(ev(Enter, "v1", at(8, 45, 0)))
	x.Add(ev(Enter, "v2", at(9, 10, 0))) // never leaves
	x.Finish()
	if !x.Periods["v1"].Complete() || x.Periods["v2"].Complete() {
		t.Fatalf("periods %+v", x.Periods)
	}
	h8 := x.Timelines[TimelineKey{"room-01", at(8, 0, 0)}]
	h9 := x.Timelines[TimelineKey{"room-01", at(9, 0, 0)}]
	if h8.Entries != 1 || h8.Visits["v1"] != (Span{2700, 3600}) {
		t.Fatalf("8:00 %+v", h8)
	}
	if h9.Entries != 1 || len(h9.Visits) != 1 || h9.Visits["v1"] != (Span{0, 1800}) {
		t.Fatalf("9:00 %+v; the open visit v2 must count as an entry only", h9)
	}
}

func TestGenerator(t *testing.T) {
	cfg := GenConfig{People: 50, Rooms: 4, VisitsPerPerson: 6, Seed: 7, OutOfOrder: 0.2, Malformed: 0.05, NightShift: 0.3}
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	x := NewExpected()
	seen := map[string][]Kind{}
	var records, malformed int
	var last time.Time
	var first []Record
	for {
		r, ok := g.Next()
		if !ok {
			break
		}
		records++
		if len(first) < 20 {
			first = append(first, r)
		}
		e, err := Decode(r.Value)
		if r.Malformed {
			malformed++
			if err == nil {
				t.Fatalf("malformed record %q decodes", r.Value)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Key) != e.Visit {
			t.Fatalf("key %q for visit %q", r.Key, e.Visit)
		}
		seen[e.Visit] = append(seen[e.Visit], e.Kind)
		if e.Kind == Enter && len(seen[e.Visit]) == 1 {
			if e.Time.Before(last) {
				t.Fatalf("visits start out of time order: %v after %v", e.Time, last)
			}
			last = e.Time
		}
		x.Add(e)
	}
	x.Finish()
	var reversed, midnight int
	for v, kinds := range seen {
		if len(kinds) != 2 || kinds[0] == kinds[1] {
			t.Fatalf("visit %s has events %v", v, kinds)
		}
		if kinds[0] == Leave {
			reversed++
		}
		if p := x.Periods[v]; !p.Complete() {
			t.Fatalf("visit %s incomplete", v)
		} else if Hour(p.Start).Day() != Hour(p.End.Add(-time.Nanosecond)).Day() {
			midnight++
		}
	}
	if reversed == 0 || malformed == 0 || midnight == 0 {
		t.Fatalf("reversed %d, malformed %d, spanning midnight %d: the generator must produce each", reversed, malformed, midnight)
	}
	if est := g.Estimate(); records < est/2 || records > est*2 {
		t.Fatalf("%d records, estimate %d", records, est)
	}
	// The same seed gives the same records.
	g2, _ := NewGenerator(cfg)
	for i, r := range first {
		r2, _ := g2.Next()
		if !bytes.Equal(r.Value, r2.Value) {
			t.Fatalf("record %d differs between runs with one seed", i)
		}
	}
	if _, err := NewGenerator(GenConfig{OutOfOrder: 2}); err == nil {
		t.Fatal("an out-of-order share of 2 was accepted")
	}
}
