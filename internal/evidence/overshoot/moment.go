package overshoot

// Moment is what a checker saw when it first found more than the limit: how many, and
// which admits: the held requests by id (concurrency), the admits stamped in [fromMs, toMs]
// (windows and bucket on the stamps, epoch ms), or those sent at or after fromUs and answered
// by toUs (interval evidence, µs since the run began).
type Moment struct {
	Count    int64
	Held     []uint64
	By       uint64 // concurrency: the admit that raised the count above the limit
	FromMs   int64
	ToMs     int64
	Interval bool
	FromUs   int64
	ToUs     int64
	// AtUs, for the held spans (an endpoint's concurrency), is the instant at which Count
	// requests certainly held their slots at once (the middle of [FromUs, ToUs]); 0 otherwise.
	AtUs int64
	// LateMs, when set, is the bucket tier's bound: only admits at most that late were counted.
	LateMs int64
	// Allowed, when the interval spans more than one window, is the most a correct limiter
	// could have admitted certainly inside it (Count exceeded it); 0 means the limit itself.
	Allowed int64
	// Shared: the count holds other processes' admits too (the joint evidence of SharedAdmits,
	// a Redis witness), so only this process's can be shown and none is missing for it.
	Shared bool
}

// Every checker a kind's model builds is a Checker.
var (
	_ Checker = (*Witness)(nil)
	_ Checker = (*SlidingChecker)(nil)
	_ Checker = (*BucketChecker)(nil)
	_ Checker = (*UnalignedChecker)(nil)
	_ Checker = (*IntervalChecker)(nil)
	_ Checker = (*lateBucket)(nil)
	_ Checker = (*sharedChecker)(nil)
	_ Checker = (*RedisWitness)(nil)
)
