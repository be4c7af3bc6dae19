package simulation

// Flavour is the kind of source and state the topology uses.
type Flavour uint8

const (
	// Opaque: an opaque partitioned source whose replays read a different
	// number of records than the first attempt (more or fewer), and
	// opaque state.
	Opaque Flavour = iota
	// Transactional: a transactional partitioned source (a replay reads
	// exactly what the first attempt read) and transactional state.
	Transactional
)

func (f Flavour) String() string {
	if f == Transactional {
		return "transactional"
	}
	return "opaque"
}

// Options configures one run. The zero value of every field but Seed
// takes the default documented on it.
type Options struct {
	Seed    uint64
	Flavour Flavour

	// Records is the number of records per partition. Zero means 30.
	Records int
	// MaxSteps bounds the run; a run that has not committed every record
	// by then has stalled. Zero means 200000.
	MaxSteps int

	// Probabilities per event. Zero means the default in parentheses.
	Drop       float64 // a delivered message is lost instead (0.002)
	OpFail     float64 // counting a word fails retryably (0.01)
	ReadFail   float64 // a spout read fails retryably (0.03)
	WriteFail  float64 // a state write fails retryably after part of its keys (0.08)
	CrashEvery int     // a crash at about every CrashEvery-th step, at most MaxCrashes times (3000)
	MaxCrashes int     // (3)

	// SkipFreeze breaks the runtime on purpose: commits start without
	// freezing the batch's metadata first, so an opaque replay of a batch
	// whose commit wrote part of its keys may read other records. Tests
	// use it to show that the simulation catches the bug.
	SkipFreeze bool
}

func (o Options) withDefaults() Options {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	if o.Records == 0 {
		o.Records = 30
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 200000
	}
	def(&o.Drop, 0.002)
	def(&o.OpFail, 0.01)
	def(&o.ReadFail, 0.03)
	def(&o.WriteFail, 0.08)
	if o.CrashEvery == 0 {
		o.CrashEvery = 3000
	}
	if o.MaxCrashes == 0 {
		o.MaxCrashes = 3
	}
	return o
}
