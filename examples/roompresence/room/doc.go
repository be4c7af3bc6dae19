// Package room is the domain of the room-presence example, with no I/O:
// badge-reader events (a person entering or leaving a room), presence
// periods (one per visit), hourly room timelines, the expected results of
// a whole event log (for verification) and a generator of realistic days
// of events.
//
// Everything here is pure: values are built anew, never changed in place,
// so reducers may run again on a replayed batch without harm.
package room
