package clocksync_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/clocksync"
	"github.com/limitctl/limitctl/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// simulated is a server whose clock reads offset + local·(1+drift) µs at local instant local:
// each sample runs TIME at a random instant of its round trip.
type simulated struct {
	offset int64
	drift  float64
	rng    *rand.Rand
}

func (s simulated) at(local float64) int64 { return s.offset + int64(local*(1+s.drift)) }

func (s simulated) sample(sent int64, rtt int64) clocksync.Sample {
	ran := float64(sent) + s.rng.Float64()*float64(rtt)
	return clocksync.Sample{Sent: sent, Answered: sent + rtt, Server: s.at(ran)}
}

// trueOffset is server − local at the local instant t.
func (s simulated) trueOffset(t int64) int64 { return s.at(float64(t)) - t }

// The bound holds the true offset at every instant, before, between and after the samples, for
// any round trip, any placement of TIME within it and a drift within MaxDrift.
func TestOffsetBoundHoldsTheTrueOffset(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		srv := simulated{offset: rng.Int64N(2e9) - 1e9, drift: (rng.Float64()*2 - 1) * clocksync.MaxDrift * 0.99, rng: rng}
		c := clocksync.New(time.Now())
		at := int64(0)
		for range 1 + rng.IntN(20) {
			at += rng.Int64N(3e6)
			c.Add(srv.sample(at, 1+rng.Int64N(5000)))
		}
		if err := c.Err(); err != nil {
			t.Fatalf("seed %d: a drift within MaxDrift read as a step: %v", seed, err)
		}
		for range 50 {
			probe := rng.Int64N(at+10e6) - 5e6
			lo, hi, ok := c.Offset(probe)
			want := srv.trueOffset(probe)
			if !ok || want < lo || want > hi {
				t.Fatalf("seed %d: at %d µs the offset is %d, bound [%d, %d] ok=%v", seed, probe, want, lo, hi, ok)
			}
		}
	}
}

// Many short round trips narrow the bound to about the shortest one.
func TestShortRoundTripsGiveANarrowBound(t *testing.T) {
	srv := simulated{offset: 123_456, rng: rand.New(rand.NewPCG(1, 2))}
	c := clocksync.New(time.Now())
	for i := range int64(10) {
		c.Add(srv.sample(i*1000, 40))
	}
	if w := c.Width(5000); w < 0 || w > 45 {
		t.Fatalf("ten round trips of 40 µs gave a bound %d µs wide", w)
	}
	if w := c.Width(60e6); w < 60e6*clocksync.MaxDrift {
		t.Fatalf("a minute after the samples the bound is %d µs wide, less than the drift allows", w)
	}
}

// A server whose clock is set 50 ms back between two samples is caught: no one offset holds.
func TestAStepIsCaught(t *testing.T) {
	srv := simulated{offset: 1e12, rng: rand.New(rand.NewPCG(3, 4))}
	c := clocksync.New(time.Now())
	c.Add(srv.sample(0, 100))
	c.Add(srv.sample(1e6, 100))
	srv.offset -= 50_000
	c.Add(srv.sample(2e6, 100))
	if !errors.Is(c.Err(), clocksync.ErrStepped) {
		t.Fatalf("a 50 ms step went unseen: %v", c.Err())
	}
	if _, _, ok := c.Offset(2e6); ok {
		t.Fatal("a stepped clock still answered an offset")
	}
}

func TestNoSampleNoOffset(t *testing.T) {
	c := clocksync.New(time.Now())
	if _, _, ok := c.ToServer(0, 10); ok || c.Width(0) != -1 {
		t.Fatal("a clock with no sample answered a bound")
	}
	if _, ok := c.Last(); ok {
		t.Fatal("a clock with no sample has a latest one")
	}
	for _, s := range []clocksync.Sample{{Sent: 0, Answered: 50, Server: 1000}, {Sent: 900, Answered: 960, Server: 1910}} {
		c.Add(s)
		if last, ok := c.Last(); !ok || last != s {
			t.Fatalf("latest sample %+v, want %+v", last, s)
		}
	}
}

// Against a real server on this machine, whose wall clock is this process's, the bound holds the
// base's own wall time; a process whose clock runs 50 ms ahead (a reader shifted as a skewed
// host would see it) is placed 50 ms off, and ToServer widens an interval by the bound.
func TestMeasureAgainstRedisTIME(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	for _, shift := range []time.Duration{0, 50 * time.Millisecond, -50 * time.Millisecond} {
		base := time.Now()
		c := clocksync.New(base)
		read := func(ctx context.Context) (time.Time, error) {
			st, err := rdb.Time(ctx).Result()
			return st.Add(shift), err
		}
		for range 3 {
			if err := c.Measure(ctx, read, 5); err != nil {
				t.Fatal(err)
			}
		}
		now := c.Local(time.Now())
		lo, hi, ok := c.Offset(now)
		want := base.Add(shift).UnixMicro()
		if !ok || want < lo-1 || want > hi+1 {
			t.Fatalf("shift %v: the base's wall time %d is outside [%d, %d]", shift, want, lo, hi)
		}
		from, to, ok := c.ToServer(now, now+1000)
		if !ok || from > now+want || to < now+1000+want || to-from < 1000 {
			t.Fatalf("shift %v: [now, now+1ms] placed at [%d, %d], offset %d", shift, from, to, want)
		}
	}
}

func TestMeasureReportsAFailedTIME(t *testing.T) {
	c := clocksync.New(time.Now())
	boom := errors.New("NOPERM this user has no permissions to run the 'time' command")
	err := c.Measure(context.Background(), func(context.Context) (time.Time, error) { return time.Time{}, boom }, 3)
	if !errors.Is(err, boom) || c.Samples() != 0 {
		t.Fatalf("a refused TIME gave %v with %d samples", err, c.Samples())
	}
}
