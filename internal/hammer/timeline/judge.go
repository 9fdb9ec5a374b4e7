package timeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/clocksync"
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/hammer/runkeys"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// One timeline. Every process's calls are placed on the server's clock (µs, less an origin)
// with the bound its clock samples give (clocksync.Clock: o(t) ∈ [lo(t), hi(t)], drift
// included): a call's sending at lo, its reply and its release at hi. Each interval then holds
// the instants the call really spanned on the server's clock, so the three facts the refusal
// judges stand on (refusal/judge.go) hold across processes as they do in one: a call ran
// within [sent, replied]; only a call sent before a refusal's reply can have run before it;
// a refusal is judged once every call sent before its reply is recorded. The widening is the
// rounding those judges already allow for (sent rounded down, replied up), only larger: it
// can hide a too-strict limiter, never blame a correct one. The stamps a call was given (on a
// client clock) are the limiter's own time and stay as they are; how far the processes'
// clocks disagree is added to the skew the judges allow (their margins, not their rules).
//
// The low-water mark. A process publishes, with its calls, a mark m on its clock: every call it
// sent before m is published. t + lo(t) grows with t (lo moves by at most MaxDrift per µs), so
// every call it sent at or after m is placed at or after m + lo(m): that is its mark on the
// timeline, and the least of every process's marks is the run's. A process that stopped
// publishing before it marked its calls complete (killed, or cut off from Redis) may have made
// any number of calls after its last mark, each possibly admitted or held (abandoned or
// unreleased requests stay held): the run's mark stays there, and no refusal after it is
// judged, as a single process stops judging when its masters change.
//
// Bound. A process whose clock is unknown (no sample), stepped (samples that disagree), or
// known only within more than MaxBoundShare of the window leaves the strategy unjudged, with
// the reason.

// MaxBoundShare is the widest a process's clock bound may be, as a share of the window, for
// refusals to be judged: beyond it the allowance hides most of what a limiter does wrong.
const MaxBoundShare = 0.25

// A process as its evidence keys show it.
type process struct {
	name    string
	clock   *clocksync.Clock
	meta    map[string]Meta
	seconds map[string][]int64 // strategy: its published keys' numbers
	budget  int64              // bytes: its calls reached Config.MaxBytes, and it published no more
}

func (p *process) has(strategy string) bool {
	_, ok := p.meta[strategy]
	return ok
}

// Judge judges the refusals of each of strategies over the calls every process of the run
// published (nil when none did). ran names each process that left a summary, with the strategies it ran: one that
// published none of a strategy's calls leaves it unjudged.
func Judge(ctx context.Context, rdb redis.UniversalClient, keys runkeys.Scheme, ran map[string][]string, strategies []string) (map[string]fold.Refusals, error) {
	procs, err := read(ctx, rdb, keys)
	if err != nil {
		return nil, err
	}
	if len(procs) == 0 {
		return nil, nil // no process published: refusals stay unjudged, as before there was a timeline
	}
	out := map[string]fold.Refusals{}
	for _, st := range strategies {
		why := ""
		for name, sts := range ran {
			if p := procs[name]; contains(sts, st) && (p == nil || !p.has(st)) {
				why = fmt.Sprintf("process %s published none of its calls", name)
			}
		}
		for name, p := range procs {
			if _, finished := ran[name]; !finished && !p.has(st) {
				// It may have run the strategy unpublished, and left no summary to say otherwise.
				why = fmt.Sprintf("process %s published none of its calls of %s and left no summary", name, st)
			}
		}
		if why != "" {
			out[st] = unjudged(why)
			continue
		}
		v, err := judgeStrategy(ctx, rdb, keys, st, procs)
		if err != nil {
			return nil, err
		}
		out[st] = v
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// read finds every process's evidence keys (SCAN on every master) and reads their clocks and metas.
func read(ctx context.Context, rdb redis.UniversalClient, keys runkeys.Scheme) (map[string]*process, error) {
	procs := map[string]*process{}
	get := func(name string) *process {
		if procs[name] == nil {
			procs[name] = &process{name: name, clock: clocksync.New(time.Time{}), meta: map[string]Meta{}, seconds: map[string][]int64{}}
		}
		return procs[name]
	}
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return nil, err
	}
	for _, m := range masters {
		iter := m.Scan(ctx, 0, keys.CallsPattern(), 1000).Iterator()
		for iter.Next(ctx) {
			name, what, st, n, ok := keys.CallsKeyOf(iter.Val())
			if !ok {
				continue
			}
			p := get(name)
			switch what {
			case runkeys.CallsClock:
				vals, err := m.LRange(ctx, iter.Val(), 0, -1).Result()
				if err != nil {
					return nil, err
				}
				for _, v := range vals {
					if s, ok := parseSample(v); ok {
						p.clock.Add(s)
					}
				}
			case runkeys.CallsMeta:
				fields, err := m.HGetAll(ctx, iter.Val()).Result()
				if err != nil {
					return nil, err
				}
				for st, doc := range fields {
					if st == budgetField {
						p.budget, _ = strconv.ParseInt(doc, 10, 64)
						continue
					}
					var meta Meta
					if json.Unmarshal([]byte(doc), &meta) == nil {
						p.meta[st] = meta
					}
				}
			default:
				p.seconds[st] = append(p.seconds[st], n)
			}
		}
		if err := iter.Err(); err != nil {
			return nil, err
		}
	}
	for _, p := range procs {
		for _, secs := range p.seconds {
			sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
		}
	}
	return procs, nil
}

// feed is one process's calls of a strategy, read key by key in the order they were published.
type feed struct {
	p        *process
	meta     Meta
	secs     []int64
	next     int
	mark     int64 // on the process's clock: every call sent before it is read
	complete bool
	prev     [2]int64
}

// at is the earliest place on the timeline of an instant t of the feed's clock.
func (f *feed) lo(t int64) int64 {
	l, _, _ := f.p.clock.Offset(t)
	return t + l
}

func (f *feed) hi(t int64) int64 {
	_, h, _ := f.p.clock.Offset(t)
	return t + h
}

func judgeStrategy(ctx context.Context, rdb redis.UniversalClient, keys runkeys.Scheme, st string, procs map[string]*process) (fold.Refusals, error) {
	var feeds []*feed
	names := make([]string, 0, len(procs))
	for name := range procs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := procs[name]
		meta, ok := p.meta[st]
		if !ok {
			continue
		}
		switch {
		case p.clock.Samples() == 0:
			return unjudged(fmt.Sprintf("process %s measured no bound of its clock against the server's TIME", name)), nil
		case p.clock.Err() != nil:
			return unjudged(fmt.Sprintf("process %s's clock and the server's disagreed beyond drift (a clock stepped)", name)), nil
		}
		feeds = append(feeds, &feed{p: p, meta: meta, secs: p.seconds[st], mark: meta.Begin})
	}
	if len(feeds) == 0 {
		return unjudged("no process published its calls"), nil
	}
	spec, origin, why := mergedSpec(feeds)
	if why != "" {
		return unjudged(why), nil
	}
	if spec.Model = limiter.Kind(spec.Kind).Model(); spec.Model == nil {
		return unjudged(fmt.Sprintf("the processes ran a limiter this one does not know (%s)", spec.Kind)), nil
	}
	keyCount := max(1, feeds[0].meta.Keys)
	judges := fold.NewRefusals(spec, keyCount)
	mark := func(f *feed) int64 {
		if f.complete {
			return refusal.Forever
		}
		return f.lo(f.mark) - origin
	}
	firstMark := int64(refusal.Forever)
	for _, f := range feeds {
		firstMark = min(firstMark, mark(f))
	}
	judged, stopped := firstMark, ""
	for {
		var low *feed
		for _, f := range feeds {
			if !f.complete && (low == nil || mark(f) < mark(low)) {
				low = f
			}
		}
		if low == nil {
			judged = refusal.Forever
			break
		}
		if low.next >= len(low.secs) || low.secs[low.next] != int64(low.next) {
			stopped = fmt.Sprintf("process %s stopped publishing its calls (still running, killed, or cut off from Redis): what it did after is unknown", low.p.name)
			if low.p.budget > 0 {
				stopped = fmt.Sprintf("process %s's calls reached the evidence bound of %s (--evidence-max-mib): it published no more",
					low.p.name, human.Bytes(low.p.budget))
			}
			break
		}
		elems, err := rdb.LRange(ctx, keys.Calls(low.p.name, st, low.secs[low.next]), 0, -1).Result()
		if err != nil {
			return fold.Refusals{}, err
		}
		low.next++
		for _, e := range elems {
			fl, err := decode([]byte(e), &low.prev)
			if err != nil {
				return fold.Refusals{}, fmt.Errorf("process %s, %s: %w", low.p.name, st, err)
			}
			for _, d := range fl.calls {
				if int(d.Key) >= keyCount {
					return fold.Refusals{}, fmt.Errorf("process %s, %s: %w", low.p.name, st, errCorrupt)
				}
				judges.Record(low.place(d, spec.Server, origin))
			}
			if fl.complete {
				low.complete = true
			} else {
				low.mark = max(low.mark, fl.mark)
			}
			if w := low.p.clock.Width(low.mark); float64(w) > MaxBoundShare*float64(spec.Window) {
				return unjudged(fmt.Sprintf("process %s's clock is known against the server's TIME only within %s, more than a quarter of the window (%s)",
					low.p.name, human.Latency(time.Duration(w)*time.Microsecond), human.Latency(time.Duration(spec.Window)*time.Microsecond))), nil
			}
		}
		judged = refusal.Forever
		for _, f := range feeds {
			judged = min(judged, mark(f))
		}
		judges.JudgeBefore(judged, 0)
	}
	judges.JudgeBefore(judged, 0)
	var v fold.Refusals
	judges.FoldRefusals(&v)
	if stopped != "" {
		// As a single process says a master's change: the reason, then from when.
		v.RefusalsUnjudged = stopped + ", so refusals from " + human.Latency(time.Duration(max(0, judged))*time.Microsecond) + " into the run on are not judged"
		v.NoRefusalJudged = judged <= firstMark
	}
	return v, nil
}

// unjudged is a strategy whose refusals no one judged, why saying why.
func unjudged(why string) fold.Refusals {
	return fold.Refusals{RefusalsUnjudged: why, NoRefusalJudged: true}
}

// place puts a call of the feed's process on the timeline (µs since origin): its sending as
// early, its reply and release as late as the clock's bound allows.
func (f *feed) place(c evidence.Decision, server bool, origin int64) evidence.Decision {
	c.SentUs = f.lo(c.SentUs) - origin
	c.RepliedUs = f.hi(c.RepliedUs) - origin
	if c.ReleasedUs != 0 {
		c.ReleasedUs = f.hi(c.ReleasedUs) - origin
	}
	if server {
		c.ClockLoUs, c.ClockHiUs = c.SentUs, c.RepliedUs
	}
	c.ID = 0 // ids are per process: no trace to look up
	return c
}

// mergedSpec is the spec the judges of every process's calls are built from: the first
// process's, its skew widened by how far the processes' stamp clocks disagree and its horizon
// the longest; origin is where the timeline starts (the earliest process's begin).
func mergedSpec(feeds []*feed) (spec refusal.Spec, origin int64, why string) {
	spec = feeds[0].meta.Spec
	origin = int64(math.MaxInt64)
	lowest, highest := int64(math.MaxInt64), int64(math.MinInt64)
	for _, f := range feeds {
		s := f.meta.Spec
		if s.Kind != spec.Kind || s.Limit != spec.Limit || s.Window != spec.Window || s.Server != spec.Server || s.Aligned != spec.Aligned ||
			s.RatePerSec != spec.RatePerSec || s.StaleAfter != spec.StaleAfter || s.Rules != spec.Rules || f.meta.Keys != feeds[0].meta.Keys {
			return spec, 0, fmt.Sprintf("processes %s and %s ran different limits or rules", feeds[0].p.name, f.p.name)
		}
		spec.Skew, spec.Horizon = max(spec.Skew, s.Skew), max(spec.Horizon, s.Horizon)
		spec.Quantum = max(spec.Quantum, s.Quantum)
		spec.Monotone = spec.Monotone || s.Monotone
		spec.Base = min(spec.Base, s.Base)
		origin = min(origin, f.lo(f.meta.Begin))
		// How far this process's stamps can be from the server's clock at its start.
		lowest, highest = min(lowest, s.Base-f.hi(f.meta.Begin)), max(highest, s.Base-f.lo(f.meta.Begin))
	}
	spec.Skew += max(0, highest-lowest)
	return spec, origin, ""
}
