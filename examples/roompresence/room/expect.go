package room

import "time"

// TimelineKey names one room's hour.
type TimelineKey struct {
	Room string
	Hour time.Time
}

// Expected is what the pipeline must have stored after reading an event
// log: the presence row of every visit, and the timeline of every room
// and hour touched.
type Expected struct {
	Periods   map[string]Period
	Timelines map[TimelineKey]Timeline
}

// NewExpected returns an empty Expected; Add events to it.
func NewExpected() *Expected {
	return &Expected{Periods: map[string]Period{}, Timelines: map[TimelineKey]Timeline{}}
}

// Add accounts for one event of the log. The timelines of completed
// visits are added by Finish, once every event is in.
func (x *Expected) Add(e Event) {
	x.Periods[e.Visit] = x.Periods[e.Visit].With(e)
	if e.Kind == Enter {
		x.add(EntryPiece(e))
	}
}

// Finish adds every complete visit to the timelines of the hours it
// covers. Call it once, after the last Add.
func (x *Expected) Finish() {
	for _, p := range x.Periods {
		for _, pc := range p.Pieces() {
			x.add(pc)
		}
	}
}

func (x *Expected) add(pc Piece) {
	k := TimelineKey{Room: pc.Room, Hour: pc.Hour}
	x.Timelines[k] = x.Timelines[k].Merge(pc.Timeline)
}
