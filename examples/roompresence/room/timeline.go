package room

import (
	"maps"
	"time"
)

// Span is the part of an hour a visit covers, in seconds from the start
// of the hour: [From, To).
type Span struct {
	From int32 `msgpack:"f"`
	To   int32 `msgpack:"t"`
}

// Timeline is the stored value of one room and hour: the visits present in
// that hour with the part of it each covered, and the number of ENTER
// events in the hour. Visits is keyed by visit id, so adding a visit again
// changes nothing; Entries is a plain count, exact only because each event
// is counted exactly once.
type Timeline struct {
	Visits  map[string]Span `msgpack:"v"`
	Entries int64           `msgpack:"e"`
}

// Merge returns a new timeline holding the visits and entries of both.
// Neither t nor o is changed. A visit in both keeps the union of its spans
// (the same span, in practice).
func (t Timeline) Merge(o Timeline) Timeline {
	out := Timeline{Entries: t.Entries + o.Entries}
	if len(t.Visits)+len(o.Visits) > 0 {
		out.Visits = make(map[string]Span, len(t.Visits)+len(o.Visits))
		maps.Copy(out.Visits, t.Visits)
		for v, s := range o.Visits {
			if old, ok := out.Visits[v]; ok {
				s = Span{From: min(old.From, s.From), To: max(old.To, s.To)}
			}
			out.Visits[v] = s
		}
	}
	return out
}

// Equal reports whether t and o hold the same visits and entries.
func (t Timeline) Equal(o Timeline) bool {
	return t.Entries == o.Entries && maps.Equal(t.Visits, o.Visits)
}

// Occupancy returns, for each minute of the hour, how many visits were
// present at some time during that minute.
func (t Timeline) Occupancy() [60]int {
	var occ [60]int
	for _, s := range t.Visits {
		if s.To <= s.From {
			continue
		}
		for m := s.From / 60; m <= (s.To-1)/60 && m < 60; m++ {
			occ[m]++
		}
	}
	return occ
}

// Peak returns the highest occupancy of any minute of the hour.
func (t Timeline) Peak() int {
	peak := 0
	for _, n := range t.Occupancy() {
		peak = max(peak, n)
	}
	return peak
}

// PersonMinutes returns the time all visits spent in the room during the
// hour, in minutes (rounded down).
func (t Timeline) PersonMinutes() int64 {
	var secs int64
	for _, s := range t.Visits {
		secs += int64(max(s.To-s.From, 0))
	}
	return secs / 60
}

// Hour returns the start of the UTC hour holding ts.
func Hour(ts time.Time) time.Time { return ts.UTC().Truncate(time.Hour) }

// Piece is one contribution to a room's hourly timeline: a visit's part of
// the hour, or one ENTER event.
type Piece struct {
	Room     string
	Hour     time.Time
	Timeline Timeline
}

// Pieces splits a complete period at hour boundaries: one piece per hour
// the visit covers. A period that is not complete, or ends before it
// starts, has none.
func (p Period) Pieces() []Piece {
	if !p.Complete() || !p.End.After(p.Start) {
		return nil
	}
	var out []Piece
	for h := Hour(p.Start); h.Before(p.End); h = h.Add(time.Hour) {
		from, to := later(p.Start, h), earlier(p.End, h.Add(time.Hour))
		span := Span{From: int32(from.Sub(h) / time.Second), To: int32(to.Sub(h) / time.Second)}
		out = append(out, Piece{Room: p.Room, Hour: h, Timeline: Timeline{Visits: map[string]Span{p.Visit: span}}})
	}
	return out
}

// EntryPiece is the contribution of an ENTER event: one entry in the hour
// of the event.
func EntryPiece(e Event) Piece {
	return Piece{Room: e.Room, Hour: Hour(e.Time), Timeline: Timeline{Entries: 1}}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
