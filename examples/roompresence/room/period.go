package room

import "time"

// Period is the presence of one person in one room during one visit: the
// row of the presence table, saved by visit id. A zero Start or End is
// not known yet (its event has not been seen).
type Period struct {
	Visit  string
	Room   string
	Person string
	Start  time.Time
	End    time.Time
}

// With returns p updated with one of its visit's events: an ENTER sets the
// start, a LEAVE the end. The order in which the two arrive does not
// matter, and applying an event twice changes nothing, which is what makes
// saving periods an idempotent upsert.
func (p Period) With(e Event) Period {
	p.Visit, p.Room, p.Person = e.Visit, e.Room, e.Person
	if e.Kind == Enter {
		p.Start = e.Time.UTC()
	} else {
		p.End = e.Time.UTC()
	}
	return p
}

// Complete reports whether both ends of the visit are known.
func (p Period) Complete() bool { return !p.Start.IsZero() && !p.End.IsZero() }

// Equal reports whether p and q describe the same row.
func (p Period) Equal(q Period) bool {
	return p.Visit == q.Visit && p.Room == q.Room && p.Person == q.Person && p.Start.Equal(q.Start) && p.End.Equal(q.End)
}
