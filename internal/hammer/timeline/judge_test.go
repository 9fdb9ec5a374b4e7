package timeline

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/clocksync"
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/hammer/runkeys"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// A simulated shared run of a concurrency limiter: processes whose clocks are offset from the
// server's by tens of ms, workers whose calls run at a random instant of their round trip, in
// the server's order, against a semaphore of room limit (a correct one has room = limit).
type simCall struct {
	proc                       int
	sent, replied, releaseDone int64 // server µs
	admitted                   bool
	recorded                   int64 // server µs: when its worker logged it
}

type event struct {
	at     int64
	worker int
	kind   int // 0: acquire runs, 1: release runs
}

type events []event

func (e events) Len() int              { return len(e) }
func (e events) Less(i, j int) bool    { return e[i].at < e[j].at }
func (e events) Swap(i, j int)         { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)           { *e = append(*e, x.(event)) }
func (e *events) Pop() any             { old := *e; x := old[len(old)-1]; *e = old[:len(old)-1]; return x }
func jitter(r *rand.Rand, n int) int64 { return int64(r.Intn(n)) }

// simulate runs workers (each of process w % procs) for duration µs of server time.
func simulate(seed int64, procs, workers int, room int, duration int64) []simCall {
	r := rand.New(rand.NewSource(seed))
	var out []simCall
	cur := make([]simCall, workers)
	held := 0
	q := &events{}
	start := func(w int, at int64) {
		cur[w] = simCall{proc: w % procs, sent: at}
		heap.Push(q, event{at + 20 + jitter(r, 100), w, 0})
	}
	for w := range workers {
		start(w, jitter(r, 1000))
	}
	for q.Len() > 0 {
		e := heap.Pop(q).(event)
		c := &cur[e.worker]
		if e.kind == 0 {
			c.replied = e.at + 20 + jitter(r, 100)
			if held < room {
				held++
				c.admitted = true
				// Held for a while, then released: the release runs somewhere in its round trip.
				heap.Push(q, event{c.replied + 2000 + jitter(r, 2000) + 20 + jitter(r, 100), e.worker, 1})
				continue
			}
			c.recorded = c.replied
		} else {
			held--
			c.releaseDone = e.at + 20 + jitter(r, 100)
			c.recorded = c.releaseDone
		}
		out = append(out, *c)
		if next := c.recorded + jitter(r, 200); next < duration {
			start(e.worker, next)
		}
	}
	return out
}

// publishSim writes what each process of the simulation would publish: its clock samples, its
// meta and its calls in flushes of 100ms with their low-water marks; a process listed in
// cutAt stops publishing at that server time (killed).
func publishSim(t *testing.T, rdb *redis.Client, keys runkeys.Scheme, calls []simCall, procs int, offsets []int64, spec refusal.Spec, cutAt map[int]int64) {
	t.Helper()
	ctx := context.Background()
	end := int64(0)
	for _, c := range calls {
		end = max(end, c.recorded)
	}
	for p := range procs {
		name := fmt.Sprintf("p%d", p)
		local := func(server int64) int64 { return server - offsets[p] }
		// Samples every measureEvery, each read at an instant inside a round trip of 100µs.
		for at := int64(0); at <= end+1_000_000; at += measureEvery.Microseconds() {
			s := clocksync.Sample{Sent: local(at) - 30, Answered: local(at) + 70, Server: at}
			rdb.RPush(ctx, keys.CallsKey(name, runkeys.CallsClock), fmt.Sprintf("%d %d %d", s.Sent, s.Answered, s.Server))
		}
		meta, _ := json.Marshal(Meta{Spec: spec, Keys: 1, Begin: local(0)})
		rdb.HSet(ctx, keys.CallsKey(name, runkeys.CallsMeta), "lua", meta)
		var mine []simCall
		for _, c := range calls {
			if c.proc == p {
				mine = append(mine, c)
			}
		}
		sort.Slice(mine, func(i, j int) bool { return mine[i].recorded < mine[j].recorded })
		enc := encoder{}
		next, flushes := 0, int64(0)
		for f := int64(100_000); ; f += 100_000 {
			if cut, ok := cutAt[p]; ok && f > cut {
				break
			}
			for next < len(mine) && mine[next].recorded <= f {
				c := mine[next]
				call := evidence.Decision{SentUs: local(c.sent), RepliedUs: local(c.replied), ClockLoUs: local(c.sent), ClockHiUs: local(c.sent), Outcome: evidence.Refused}
				if c.admitted {
					call.Outcome, call.ReleaseOK, call.ReleasedUs = evidence.Admitted, true, local(c.releaseDone)
				}
				enc.add(call, false)
				next++
			}
			mark := local(f)
			for _, c := range mine[next:] { // not yet logged: sent at or after the mark
				mark = min(mark, local(c.sent))
			}
			done := next == len(mine) && f > end
			if done {
				mark = refusal.Forever
			}
			rdb.RPush(ctx, keys.Calls(name, "lua", flushes/flushesPerKey), enc.take(mark))
			flushes++
			if done {
				break
			}
		}
	}
}

// The refusal judges over every process's calls on the server's timeline blame no correct
// semaphore, whatever the processes' clocks (offsets of ±50ms and more, a run-time order the
// hammer never sees), and catch one that keeps a place too few; a process that stops
// publishing stops the judging there.
func TestJudgeOverProcessesWithOffsetClocks(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	spec := refusal.Spec{Kind: string(limiter.Concurrency), Limit: 4, Window: time.Second.Microseconds(), Horizon: time.Second.Microseconds()}
	offsets := []int64{-1_700_000_000_000 + 50_000, -1_700_000_000_000 - 50_000, 3_000_000_123}
	for seed := int64(1); seed <= 6; seed++ {
		for _, tc := range []struct {
			room   int
			cut    map[int]int64
			strict bool
		}{{4, nil, false}, {3, nil, true}, {4, map[int]int64{1: 1_000_000}, false}, {3, map[int]int64{2: 2_000_000}, true}} {
			keys := runkeys.Scheme{Prefix: "t", RunID: fmt.Sprintf("s%d-%d-%d", seed, tc.room, len(tc.cut))}
			calls := simulate(seed, 3, 9, tc.room, 3_000_000)
			publishSim(t, rdb, keys, calls, 3, offsets, spec, tc.cut)
			got, err := Judge(ctx, rdb, keys, map[string][]string{"p0": {"lua"}}, []string{"lua"})
			if err != nil {
				t.Fatal(err)
			}
			v := got["lua"]
			switch {
			case !tc.strict && v.FalseRejects != 0:
				t.Errorf("seed %d, a correct semaphore: %d false rejects, the first %+v", seed, v.FalseRejects, v.FirstFalseReject)
			case tc.strict && v.FalseRejects == 0:
				t.Errorf("seed %d, a semaphore a place short: no false reject (%s)", seed, v.RefusalsUnjudged)
			case (tc.cut != nil) != strings.Contains(v.RefusalsUnjudged, "stopped publishing"), v.NoRefusalJudged:
				t.Errorf("seed %d, cut %v: unjudged %q (none judged %v)", seed, tc.cut, v.RefusalsUnjudged, v.NoRefusalJudged)
			}
		}
	}
}

// A flush reads back as it was written, times relative to the one before included.
func TestFlushRoundTrip(t *testing.T) {
	calls := []evidence.Decision{
		{Key: 0, SentUs: 10, RepliedUs: 300, ClockLoUs: 1_700_000_000_000_000, ClockHiUs: 1_700_000_000_000_000, Outcome: evidence.Refused},
		{Key: 1, SentUs: 5, RepliedUs: 900, ClockLoUs: 1_699_999_999_990_000, ClockHiUs: 1_700_000_000_000_500, Outcome: evidence.Admitted, ReleaseOK: true, ReleasedUs: 4000},
		{Key: 2, SentUs: 700, RepliedUs: 800, ClockLoUs: 1_700_000_000_000_700, ClockHiUs: 1_700_000_000_000_700, Outcome: evidence.Unknown, Abandoned: true},
	}
	enc := encoder{offset: 1000}
	for _, c := range calls {
		enc.add(c, false)
	}
	var prev [2]int64
	f, err := decode(enc.take(650), &prev)
	if err != nil || f.mark != 1650 || f.complete || len(f.calls) != len(calls) {
		t.Fatalf("decoded %+v, %v", f, err)
	}
	for i, got := range f.calls {
		want := calls[i]
		want.SentUs, want.RepliedUs = want.SentUs+1000, want.RepliedUs+1000
		if want.ReleasedUs != 0 {
			want.ReleasedUs += 1000
		}
		if got != want {
			t.Errorf("call %d: %+v, want %+v", i, got, want)
		}
	}
	if f, err := decode(enc.take(refusal.Forever), &prev); err != nil || !f.complete || len(f.calls) != 0 {
		t.Errorf("the last flush: %+v, %v", f, err)
	}
	if _, err := decode([]byte{0x02, 0x05, 0x01}, &prev); err == nil {
		t.Error("a truncated flush decoded")
	}
}

// A process the report knows only by its name (it could not publish, and left no summary) may
// have made any calls: nothing is judged, and the report says whose.
func TestJudgeNothingWithAProcessOfNoAccount(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	keys := runkeys.Scheme{Prefix: "t", RunID: "ghost"}
	spec := refusal.Spec{Kind: string(limiter.Concurrency), Limit: 4, Window: time.Second.Microseconds()}
	publishSim(t, rdb, keys, simulate(1, 1, 4, 4, 500_000), 1, []int64{0}, spec, nil)
	rdb.HSet(context.Background(), keys.CallsKey("p9", runkeys.CallsMeta), presence, "1")
	got, err := Judge(context.Background(), rdb, keys, map[string][]string{"p0": {"lua"}}, []string{"lua"})
	if v := got["lua"]; err != nil || !v.NoRefusalJudged || !strings.Contains(v.RefusalsUnjudged, "process p9 published none of its calls") {
		t.Errorf("%+v, %v; want nothing judged, for p9", v, err)
	}
	// A run whose processes published nothing at all is as before there was a timeline.
	if got, err := Judge(context.Background(), rdb, runkeys.Scheme{Prefix: "t", RunID: "none"}, nil, []string{"lua"}); got != nil || err != nil {
		t.Errorf("%v, %v; want no verdict", got, err)
	}
}
