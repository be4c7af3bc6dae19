package state

// Volatile is implemented by a state or a backing map that may keep its
// data in the memory of its process only (Memory): what it holds is lost
// when the process ends. A topology run across worker processes refuses
// such state unless it says it accepts the loss
// (trident.Config.AllowVolatileState): a restarted worker would otherwise
// count from zero again, silently.
type Volatile interface {
	Volatile() bool
}

// Volatile reports true: a Memory map lives in its process.
func (m *Memory) Volatile() bool { return true }

// IsVolatile reports whether v (a state, a backing map) says it is
// Volatile.
func IsVolatile(v any) bool {
	x, ok := v.(Volatile)
	return ok && x.Volatile()
}
