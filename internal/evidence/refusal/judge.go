package refusal

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/tally"
	"github.com/limitctl/limitctl/internal/trace"
)

// A refusal is wrong when the evidence proves that the limiter had room at every instant it can
// have decided: a false reject. The judges here prove it the other way round from the overshoot
// checkers. For each refused decision k they compute an upper bound on what any correct limiter
// of the kind can have counted when it decided k, from what the hammer saw of every other call:
// when it was sent and answered (on the run's monotonic clock), the time it was given (its stamp,
// on the limiter's clock), and its outcome. When even that bound leaves room, the refusal is
// certainly wrong. Every allowance below widens the bound: it can hide a too-strict limiter,
// never blame a correct one.
//
// Three facts carry every rule:
//   - A call ran at one instant somewhere in [sent, replied]. Only a call sent before k's reply
//     can have run before k; counting more calls than that is always sound (only less sharp).
//   - A refused call takes no room in a correct limiter. An admitted call may; so may a call
//     whose outcome the hammer does not know (it errored, timed out, was cut off at the end of
//     the run, or replied what the contract cannot read). Such a call may also have run at any
//     time after it was sent, even after its error came back (a timed-out command still queued
//     in Redis), so it counts against every later decision: a handful of them stop the judging
//     of a key, never blame it.
//   - A decision is judged only once every call sent before its reply has been recorded (the
//     low-water mark of the workers' calls in flight), so no call that can have run before it is
//     missing from the evidence.
//
// The correct families every judge must hold, each made by internal/corpus and hammered by cmd's
// soundness test (none may be blamed, idle or loaded, under every profile and skew): fixed windows
// of any alignment (epoch in the key or in the state, a grid phased by its first hit, the first hit
// by time or by expiry, a start rounded to a whole second), counting refused calls or not; sliding
// logs counted at the call's now and lists of the last limit times; buckets refilled continuously
// (never backwards) or by GCRA, and, for refusals only, in steps of up to a window (a bucket that
// refills later holds fewer tokens: refusing then is its right); concurrency sets scored by start
// or by deadline that reclaim at stale-after; told the time in ms, µs, ns, seconds or whole
// seconds, or reading TIME on the virtual clock.
//
// Refused calls outnumber admitted ones ten to one under contention, so they are kept as groups
// (per millisecond of their stamp, or of their sending), each judged as one call that could have
// run anywhere in the union of its members' intervals with the least favourable of their stamps:
// whatever a group proves holds for every member. Each key keeps only what later decisions can
// still need; the rest is folded into counts, so memory follows the load within the judging lag
// and the window, not the length of the run.

// FalseReject is the evidence for one refusal proven wrong: the refused call (times in ms from
// the run's start) and what was counted against it.
type FalseReject struct {
	SentMs    float64 `json:"sent_ms"`
	RepliedMs float64 `json:"replied_ms"`
	// StampMs is the time the call was given (client or virtual clock), from the run's start;
	// null on the server's clock, where [sent, replied] is all that is known.
	StampMs *float64 `json:"stamp_ms"`
	// HeldOrAdmitted is the most that can have been counted against the call: requests possibly
	// held (concurrency), admits possibly in its window (windows), tokens possibly drawn since
	// the bucket was last known to hold at least its level (token bucket).
	HeldOrAdmitted int64 `json:"held_or_admitted"`
	// AbandonedReclaimable (concurrency only) is how many of the places the limiter counted
	// beyond what was possibly held requests abandoned more than stale-after ago (beyond the
	// script's unit and the clocks' allowances) can fill: requests a correct limiter had
	// reclaimed, the likely reason for the refusal. The least of those requests and
	// limit - held_or_admitted.
	AbandonedReclaimable *int64 `json:"abandoned_reclaimable,omitempty"`
	Limit                int64  `json:"limit"`
	// TokensLeft is what the bucket certainly held (token bucket only): at least the cost.
	TokensLeft *float64 `json:"tokens_left,omitempty"`
	// Request is the refused call with its commands and Redis's replies (what the limiter saw),
	// null when its worker's ring no longer held it by the time it was judged.
	Request *trace.Request `json:"request"`
	ID      uint64         `json:"-"` // the refused call's request id, to find its record
}

// Room is how much room the evidence left: limit - held_or_admitted, or the tokens left
// beyond the cost. The least of a strategy's false rejects stands for all of them.
func (f *FalseReject) Room() float64 {
	if f.TokensLeft != nil {
		return *f.TokensLeft - 1
	}
	return float64(f.Limit - f.HeldOrAdmitted)
}

// Rules is what a strategy's limiter may rightly do that the judges must allow for,
// read from its contract (StrategyRun.EpochAligned and TimeQuantum are the others).
type Rules struct {
	// RefillStep: the token bucket may refill in steps of up to this (it is given the window,
	// as a refill of so many tokens per interval is); 0 is a continuous refill (given a rate).
	RefillStep time.Duration
	// StaleUnit is the unit in which a concurrency script is given stale-after (a millisecond
	// when 0); NoStaleAfter: the script is not given stale-after at all, so a slot whose
	// release failed may be held for ever as far as the hammer can know.
	StaleUnit    time.Duration
	NoStaleAfter bool
	// NoRelease: a concurrency limiter that releases by expiry (--script-release none) holds
	// every slot until stale-after reclaims it.
	NoRelease bool
}

// Spec is what every kind's judge is built from.
type Spec struct {
	// Kind names the limiter kind (a shared run's processes compare it), Model is its refusal
	// evidence (the kind's, limiter.Description.Model).
	Kind       string
	Model      Model `json:"-"`
	Limit      int64 // concurrency and windows: the limit; token bucket: the burst
	Aligned    bool  // fixed window: epoch-aligned (StrategyRun.EpochAligned)
	Base       int64 // µs: the stamp at the run's start
	Window     int64 // µs
	RatePerSec float64
	StaleAfter int64         // µs; 0 never reclaims
	Server     bool          // the script reads the server's clock: stamps are [sent, replied]
	Monotone   bool          // the virtual clock answers TIME monotonically per key (StrategyRun.MonotoneTime)
	Skew       int64         // µs: how far worker clocks disagree
	Horizon    int64         // µs: the call timeout
	Quantum    time.Duration // how finely the script is told the time (StrategyRun.TimeQuantum)
	Rules      Rules
}

// Grain is how much a script may round a time it compares (the unit it is given time in: a
// millisecond, or a second for whole seconds): by that much on both sides.
func (s Spec) Grain() int64 {
	if s.Quantum > time.Millisecond {
		return s.Quantum.Microseconds()
	}
	return 1000
}

// ServerRate is how much faster or slower the server's clock may run than the client's
// monotonic clock (as IntervalChecker allows); 0 when the stamps are the limiter's own time.
func (s Spec) ServerRate() float64 {
	if s.Server {
		return 0.001
	}
	return 0
}

// TTLSlack is how much longer than w a span timed by the server (a key's TTL) may last on the
// client's monotonic clock: the server's clock rate, and a millisecond of rounding.
func TTLSlack(w int64) int64 { return w/1000 + 1000 }

// Rule is one limiter kind's refusal rule for one key (its model's, Model.Rule), fed in batches
// by the key's Judge.
type Rule interface {
	// Add takes the decisions that took or may have taken room (admitted, unknown) since the
	// last batch.
	Add(calls []evidence.Decision)
	// AddRefused takes a group of the batch's refusals before they merge with earlier ones, for a
	// rule that needs them as later calls' possible predecessors (a refused call moves a textbook
	// bucket's clock); the others ignore them.
	AddRefused(g *Group)
	// Judge decides every group in ready (each replied before lowWater, in order of sending);
	// verdict is told the ones proven wrong and the most the evidence counted against them.
	Judge(ready []*Group, lowWater int64, verdict Verdict)
	// Settle forgets what no later decision can need: every later refusal is sent at or after
	// floor.
	Settle(floor int64)
}

// Verdict is told a group proven wrong: the most the evidence counted against it, the tokens
// the bucket certainly held (NaN for the other kinds), and the abandoned requests a correct
// limiter had reclaimed (-1 where the kind holds nothing).
type Verdict func(g *Group, counted int64, tokens float64, abandoned int64)

// Group is refusals judged as one: a call that ran somewhere in [SentMin, RepliedMax] with a
// stamp somewhere in [StampLo, StampHi] (OwnHi the latest of its calls' own stamps, ClockLoUs).
type Group struct {
	SentMin, RepliedMax int64
	StampLo, StampHi    int64
	OwnHi               int64
	key                 int64
	n                   int64
	first               evidence.Decision // the earliest sent, for the evidence
}

func (g *Group) addCall(d evidence.Decision) {
	if g.n == 0 || d.SentUs < g.first.SentUs {
		g.first = d
	}
	if g.n == 0 {
		g.SentMin, g.RepliedMax, g.StampLo, g.StampHi, g.OwnHi = d.SentUs, d.RepliedUs, d.ClockLoUs, d.ClockHiUs, d.ClockLoUs
	} else {
		g.SentMin, g.RepliedMax = min(g.SentMin, d.SentUs), max(g.RepliedMax, d.RepliedUs)
		g.StampLo, g.StampHi, g.OwnHi = min(g.StampLo, d.ClockLoUs), max(g.StampHi, d.ClockHiUs), max(g.OwnHi, d.ClockLoUs)
	}
	g.n++
}

func (g *Group) merge(o *Group) {
	if o.first.SentUs < g.first.SentUs {
		g.first = o.first
	}
	g.SentMin, g.RepliedMax = min(g.SentMin, o.SentMin), max(g.RepliedMax, o.RepliedMax)
	g.StampLo, g.StampHi, g.OwnHi = min(g.StampLo, o.StampLo), max(g.StampHi, o.StampHi), max(g.OwnHi, o.OwnHi)
	g.n += o.n
}

// Judge judges one key's refused decisions. The workers log their decisions (Log); the
// engine's loop hands them over, records and judges them in batches, so nothing here is shared
// between goroutines. Recording is an append; grouping and judging happen per batch, on sorted
// slices (no map, no allocation per group: with many keys nearly every refusal is a group).
type Judge struct {
	byStamp bool // group refusals by their stamp's millisecond (else by their sending's)

	calls   []evidence.Decision // admitted and unknown since the last batch
	refused []evidence.Decision // refused since the last batch
	closed  bool                // no later decision can be judged: recorded no more

	kind    Rule
	pending []Group // recorded, not yet judgeable, by key
	scratch *Scratch
	Count   int64
	First   *FalseReject
	Worst   *FalseReject
	// Where the refusals not judged yet start (µs since the run began), for unjudgedFrom: the
	// earliest sending among the pending groups (as of the last batch) and among the refusals
	// recorded since (forever when none).
	pendingFrom, waitingFrom int64
	verdict                  Verdict // found, made a func value once
	begin                    int64   // the stamp (µs) at the run's start, for the evidence
	server                   bool
	limit                    int64
}

// Scratch is what a batch works in; the keys of a strategy, judged one after the other,
// share one, so memory does not grow with their number.
type Scratch struct {
	fresh, merged []Group
	ready         []*Group
}

// maxKept bounds the capacity a key's buffers keep between batches: a key that once had a
// large batch gives the memory back.
const maxKept = 1024

// ShareScratch has r batch in scratch, which judges run one after another may share.
func (r *Judge) ShareScratch(scratch *Scratch) { r.scratch = scratch }

func New(spec Spec) *Judge {
	r := &Judge{begin: spec.Base, server: spec.Server, limit: spec.Limit, scratch: &Scratch{},
		pendingFrom: Forever, waitingFrom: Forever}
	r.verdict = r.found
	r.kind, r.byStamp = spec.Model.Rule(spec)
	return r
}

// Record adds one decision; a nil judge (refusals not judged) ignores it.
func (r *Judge) Record(d evidence.Decision) {
	switch {
	case r == nil || r.closed:
	case d.Outcome == evidence.Refused:
		r.refused = append(r.refused, d)
		r.waitingFrom = min(r.waitingFrom, d.SentUs)
	default:
		r.calls = append(r.calls, d)
	}
}

// groupKey is the millisecond a refusal is grouped by.
func (r *Judge) groupKey(d *evidence.Decision) int64 {
	if r.byStamp {
		return tally.FloorDiv(d.ClockLoUs, 1000)
	}
	return tally.FloorDiv(d.SentUs, 1000)
}

// JudgeBefore decides every refusal replied before lowWater: by then every call that can have run
// before it has been recorded.
func (r *Judge) JudgeBefore(lowWater int64) {
	r.kind.Add(r.calls)
	r.calls = reuse(r.calls)
	// This batch's refusals, grouped by key.
	slices.SortFunc(r.refused, func(a, b evidence.Decision) int { return cmp.Compare(r.groupKey(&a), r.groupKey(&b)) })
	sc := r.scratch
	fresh := sc.fresh[:0]
	for i := range r.refused {
		d := &r.refused[i]
		key := r.groupKey(d)
		if n := len(fresh); n == 0 || fresh[n-1].key != key {
			fresh = append(fresh, Group{key: key})
		}
		fresh[len(fresh)-1].addCall(*d)
	}
	r.refused = reuse(r.refused)
	for i := range fresh {
		r.kind.AddRefused(&fresh[i]) // before they merge: the members recorded since the last batch
	}
	// Merged into the pending groups, both sorted by key.
	merged := sc.merged[:0]
	i, j := 0, 0
	for i < len(r.pending) || j < len(fresh) {
		switch {
		case j == len(fresh) || (i < len(r.pending) && r.pending[i].key < fresh[j].key):
			merged = append(merged, r.pending[i])
			i++
		case i == len(r.pending) || fresh[j].key < r.pending[i].key:
			merged = append(merged, fresh[j])
			j++
		default:
			g := r.pending[i]
			g.merge(&fresh[j])
			merged = append(merged, g)
			i, j = i+1, j+1
		}
	}
	sc.fresh = fresh[:0]
	// Every group answered before the mark is judged; the others wait.
	ready := sc.ready[:0]
	floor := lowWater
	for k := range merged {
		if g := &merged[k]; g.RepliedMax < lowWater {
			ready = append(ready, g)
		} else {
			floor = min(floor, g.SentMin)
		}
	}
	if len(ready) > 0 {
		slices.SortFunc(ready, func(a, b *Group) int { return cmp.Compare(a.SentMin, b.SentMin) })
		r.kind.Judge(ready, lowWater, r.verdict)
	}
	clear(ready)
	sc.ready = ready[:0]
	kept := r.pending[:0]
	for k := range merged {
		if merged[k].RepliedMax >= lowWater {
			kept = append(kept, merged[k])
		}
	}
	r.pending, sc.merged = kept, merged[:0]
	r.kind.Settle(floor)
	r.pendingFrom, r.waitingFrom = Forever, Forever
	for k := range r.pending {
		r.pendingFrom = min(r.pendingFrom, r.pending[k].SentMin)
	}
}

// UnjudgedFrom is where the key's refusals not judged yet start: every refusal sent before it
// has been judged, given that every call sent before mark has been recorded (the engine's
// pass drained the workers' logs up to mark). A refusal sent before mark is in a group still
// pending (sent at pendingFrom or after) or recorded since the last batch (at waitingFrom or
// after), or it was judged; one sent at mark or after may not be recorded yet.
func (r *Judge) UnjudgedFrom(mark int64) int64 {
	if r.closed {
		return Forever // nothing more will be judged: nothing waits
	}
	return min(mark, r.pendingFrom, r.waitingFrom)
}

// reuse empties a buffer for the next batch, keeping its array unless it grew large.
func reuse[T any](xs []T) []T {
	if cap(xs) > maxKept {
		return nil
	}
	return xs[:0]
}

// Close ends the judging (what is judged stands): no decision recorded from now on could be
// judged, so none is kept.
func (r *Judge) Close() {
	r.closed, r.calls, r.refused, r.pending = true, nil, nil, nil
}

// found records a group proven wrong.
func (r *Judge) found(g *Group, counted int64, tokens float64, abandoned int64) {
	r.Count += g.n
	ev := &FalseReject{
		SentMs: float64(g.first.SentUs) / 1000, RepliedMs: float64(g.first.RepliedUs) / 1000,
		HeldOrAdmitted: counted, Limit: r.limit, ID: g.first.ID,
	}
	if abandoned >= 0 {
		ev.AbandonedReclaimable = &abandoned
	}
	if !r.server {
		at := float64(g.first.ClockLoUs-r.begin) / 1000
		ev.StampMs = &at
	}
	if !math.IsNaN(tokens) {
		t := math.Floor(tokens*1000) / 1000 // shown rounded down: the bucket held at least this
		ev.TokensLeft = &t
	}
	if r.First == nil || ev.SentMs < r.First.SentMs {
		r.First = ev
	}
	if r.Worst == nil || ev.Room() < r.Worst.Room() {
		r.Worst = ev
	}
}

// Log is one worker's decisions since the judges last took them (or, in rounds, one
// connection's): only that worker adds to it, so recording never waits for another worker
// (and the logs sit on cache lines apart).
type Log struct {
	mu    sync.Mutex
	calls []evidence.Decision
	spare []evidence.Decision
	_     [64]byte
}

// Record adds a decision; a nil log (refusals not judged) ignores it.
func (l *Log) Record(d evidence.Decision) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.calls = append(l.calls, d)
	l.mu.Unlock()
}

// RecordAll adds decisions at once (a round's, under one lock); a nil log ignores them.
func (l *Log) RecordAll(calls []evidence.Decision) {
	if l == nil || len(calls) == 0 {
		return
	}
	l.mu.Lock()
	l.calls = append(l.calls, calls...)
	l.mu.Unlock()
}

// DrainTo hands the logged decisions to their keys' judges.
func (l *Log) DrainTo(keys []*Judge) {
	l.Drain(func(d evidence.Decision) { keys[d.Key].Record(d) })
}

// Drain hands the logged decisions to to, in the order they were logged.
func (l *Log) Drain(to func(d evidence.Decision)) {
	l.mu.Lock()
	calls := l.calls
	l.calls = l.spare[:0]
	l.mu.Unlock()
	for _, d := range calls {
		to(d)
	}
	l.spare = calls[:0]
}

// LowWater tracks each worker's call in flight, so a refusal is judged only once every call
// sent before its reply has been recorded.
type LowWater struct {
	slots []slot
}

// slot is µs the worker's current call started, or math.MaxInt64 when idle; a cache line of
// its own, so the workers' stores do not contend.
type slot struct {
	at atomic.Int64
	_  [56]byte
}

func NewLowWater(workers int) *LowWater {
	w := &LowWater{slots: make([]slot, workers)}
	for i := range w.slots {
		w.slots[i].at.Store(math.MaxInt64)
	}
	return w
}

// Enter marks worker busy from at (µs): the call it then sends is sent no earlier.
func (w *LowWater) Enter(worker int, at int64) { w.slots[worker].at.Store(at) }

// Leave marks worker idle, once its call is recorded.
func (w *LowWater) Leave(worker int) { w.slots[worker].at.Store(math.MaxInt64) }

// Mark is the low-water Mark: every call sent before it has been recorded. now must be read
// before the slots: a worker idle when its slot is read enters later, and reads the time it
// sends at after entering, so its call is sent after now.
func (w *LowWater) Mark(now int64) int64 {
	m := now
	for i := range w.slots {
		m = min(m, w.slots[i].at.Load())
	}
	return m
}

// Forever stands for a time that never comes.
const Forever = math.MaxInt64
