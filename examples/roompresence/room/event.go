package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Kind is what a badge reader saw: a person entering or leaving a room.
type Kind string

// The two kinds of event.
const (
	Enter Kind = "ENTER"
	Leave Kind = "LEAVE"
)

// Event is one badge-reader event. Visit is the correlation id shared by
// one ENTER and its LEAVE.
type Event struct {
	ID     string    `json:"id"`
	Visit  string    `json:"visit"`
	Person string    `json:"person"`
	Room   string    `json:"room"`
	Kind   Kind      `json:"type"`
	Time   time.Time `json:"ts"`
}

// ErrMalformed is wrapped by every error Decode returns.
var ErrMalformed = errors.New("room: malformed event")

// Decode parses an event from its JSON form and checks it is complete.
func Decode(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	return e, nil
}

// Validate reports a missing field or an unknown kind.
func (e Event) Validate() error {
	switch {
	case e.ID == "", e.Visit == "", e.Person == "", e.Room == "":
		return fmt.Errorf("%w: id, visit, person and room are required (got %q, %q, %q, %q)", ErrMalformed, e.ID, e.Visit, e.Person, e.Room)
	case e.Kind != Enter && e.Kind != Leave:
		return fmt.Errorf("%w: type %q is neither ENTER nor LEAVE", ErrMalformed, e.Kind)
	case e.Time.IsZero():
		return fmt.Errorf("%w: event %s has no timestamp", ErrMalformed, e.ID)
	}
	return nil
}

// Encode returns the event's JSON form.
func (e Event) Encode() []byte {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err) // strings and a time: cannot fail
	}
	return b
}
