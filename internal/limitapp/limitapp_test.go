package limitapp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/demoapp"
	"github.com/limitctl/limitctl/internal/httptarget"
	"github.com/limitctl/limitctl/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

const testLimit = 5

// longWindow keeps a test's requests in one window, whatever the machine's load.
var longWindow = Config{Limit: testLimit, Window: 24 * time.Hour, Hold: 20 * time.Millisecond}

var keySeq atomic.Int64

// freshKey is a client identity no earlier request used.
func freshKey(t *testing.T) string {
	return fmt.Sprintf("%s.%d", strings.ReplaceAll(t.Name(), "/", "."), keySeq.Add(1))
}

func target(t *testing.T, url string) *httptarget.Target {
	t.Helper()
	tg, err := httptarget.New(httptarget.Spec{URL: url}, httptarget.Options{Run: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg
}

// sequence sends n requests for key one after another and returns how many were admitted
// before the first refusal, and in all.
func sequence(t *testing.T, tg *httptarget.Target, key string, n int) (beforeRefusal, admitted int) {
	t.Helper()
	refused := false
	for i := range n {
		d, err := tg.Acquire(context.Background(), key, httptarget.Call{Seq: uint64(i)})
		if err != nil {
			t.Fatalf("%s request %d: %v", tg.URL(), i, err)
		}
		if d.Allowed {
			admitted++
			if !refused {
				beforeRefusal++
			}
		}
		refused = refused || !d.Allowed
	}
	return beforeRefusal, admitted
}

// burst sends n requests for key at once (released together) and returns how many were admitted.
func burst(t *testing.T, tg *httptarget.Target, key string, n int) int64 {
	t.Helper()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, err := tg.Acquire(context.Background(), key, httptarget.Call{Worker: i})
			if err != nil {
				t.Errorf("%s: %v", tg.URL(), err)
				return
			}
			if d.Allowed {
				admitted.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	return admitted.Load()
}

func TestCorrectWindowsAndBucketsAdmitExactlyTheLimitInASequence(t *testing.T) {
	app := StartOn(t, redistest.Shared(t).Client(t), longWindow)
	for _, p := range []Pattern{CheckThenUpdate, IncrFirst, FirstHit, Epoch, BlockThree, TwoCounters, Watch, IncrTTL, IncrThenReads, SlidingLog, Bucket, RedisRate, Ulule} {
		t.Run(string(p), func(t *testing.T) {
			before, all := sequence(t, target(t, app.URL(p)), freshKey(t), 3*testLimit)
			if before != testLimit || all != testLimit {
				t.Errorf("%d admitted before the first refusal and %d in all of %d one after another; want %d and %d",
					before, all, 3*testLimit, testLimit, testLimit)
			}
		})
	}
}

func TestAtomicPatternsNeverAdmitMoreThanTheLimitInABurst(t *testing.T) {
	app := StartOn(t, redistest.Shared(t).Client(t), longWindow)
	for _, p := range []Pattern{IncrFirst, FirstHit, Epoch, BlockThree, Watch, IncrTTL, IncrThenReads, SlidingLog, Bucket, RedisRate, Ulule} {
		t.Run(string(p), func(t *testing.T) {
			tg := target(t, app.URL(p))
			for range 5 {
				// 6 times the limit at once: every burst is contended, so exactly the limit passes.
				if got := burst(t, tg, freshKey(t), 6*testLimit); got != testLimit {
					t.Fatalf("a burst of %d at once admitted %d; want exactly %d", 6*testLimit, got, testLimit)
				}
			}
		})
	}
}

// untilOver bursts on fresh keys until one admits more than the limit, or gives up.
func untilOver(t *testing.T, tg *httptarget.Target, over func(admitted int64) bool) {
	t.Helper()
	for attempt := range 200 {
		if over(burst(t, tg, freshKey(t), 6*testLimit)) {
			t.Logf("raced on burst %d", attempt+1)
			return
		}
	}
	t.Fatalf("%s: 200 bursts of %d at once never went over a limit of %d", tg.URL(), 6*testLimit, testLimit)
}

func TestNaiveWindowsAdmitMoreThanTheLimitUnderConcurrentLoad(t *testing.T) {
	app := StartOn(t, redistest.Shared(t).Client(t), longWindow)
	for _, p := range []Pattern{CheckThenUpdate, Gateway, TwoCounters} {
		t.Run(string(p), func(t *testing.T) {
			// One window of a day: more than the limit admitted in one burst is an overshoot.
			untilOver(t, target(t, app.URL(p)), func(n int64) bool { return n > testLimit })
		})
	}
}

func TestNaiveConcurrencyHoldsMoreThanTheLimitAndAtomicNever(t *testing.T) {
	app := StartOn(t, redistest.Shared(t).Client(t), longWindow)
	untilOver(t, target(t, app.URL(ConcurrencyNaive)), func(int64) bool {
		_, peak := app.Held(ConcurrencyNaive)
		return peak > testLimit
	})
	tg := target(t, app.URL(ConcurrencyAtomic))
	for range 10 {
		burst(t, tg, freshKey(t), 6*testLimit)
		if _, peak := app.Held(ConcurrencyAtomic); peak == testLimit {
			break // contended: the limit held at once
		}
	}
	if now, peak := app.Held(ConcurrencyAtomic); peak != testLimit || now != 0 {
		t.Errorf("the atomic limiter held %d at most (want exactly %d: contended, never over) and %d after the load (want 0)", peak, testLimit, now)
	}
}

func TestConcurrencyRoutesHoldTheirSlotThenReleaseBeforeAnswering(t *testing.T) {
	app := StartOn(t, redistest.Shared(t).Client(t), longWindow)
	for _, p := range []Pattern{ConcurrencyNaive, ConcurrencyAtomic} {
		t.Run(string(p), func(t *testing.T) {
			tg, key := target(t, app.URL(p)), freshKey(t)
			for i := range 3 * testLimit { // one at a time: each released before the next is sent
				d, err := tg.Acquire(context.Background(), key, httptarget.Call{Seq: uint64(i)})
				if err != nil || !d.Allowed {
					t.Fatalf("request %d: %+v, %v; want admitted", i, d, err)
				}
				if took := d.Received.Sub(d.Sent); took < longWindow.Hold {
					t.Fatalf("request %d answered %v after it was sent; the route holds %v first", i, took, longWindow.Hold)
				}
				if n := app.Redis.ZCard(context.Background(), demoapp.Key(p, key)).Val(); n != 0 {
					t.Fatalf("request %d answered with %d slots still held: the release comes before the answer", i, n)
				}
			}
		})
	}
}

func TestBlockThreeRefusesAFreshWindowAfterAnExcess(t *testing.T) {
	app := StartOn(t, redistest.Shared(t).Client(t), longWindow)
	ctx := context.Background()
	for _, c := range []struct {
		p         Pattern
		afterward bool // admitted in the window after an excess
	}{{BlockThree, false}, {IncrFirst, true}} {
		tg, key := target(t, app.URL(c.p)), freshKey(t)
		if _, all := sequence(t, tg, key, testLimit+1); all != testLimit {
			t.Fatalf("%s: %d admitted of %d; want %d", c.p, all, testLimit+1, testLimit)
		}
		app.Redis.Del(ctx, demoapp.Key(c.p, key)) // the window ends: its count is gone
		d, err := tg.Acquire(ctx, key, httptarget.Call{})
		if err != nil || d.Allowed != c.afterward {
			t.Errorf("%s: the first request of a fresh window after an excess: %+v, %v; want admitted=%v", c.p, d, err, c.afterward)
		}
	}
}

func TestTwoProcessesWithACountInMemoryAdmitTwiceTheLimit(t *testing.T) {
	pp := StartPerProcess(t, longWindow)
	tg := target(t, pp.URL())
	if _, all := sequence(t, tg, freshKey(t), 4*testLimit); all != 2*testLimit {
		t.Errorf("behind a round-robin front, %d admitted of %d one after another; want %d (each process its limit)", all, 4*testLimit, 2*testLimit)
	}
	for _, backend := range pp.Backends { // each process alone is a correct window
		if _, all := sequence(t, target(t, "http://"+backend+"/window/{key}"), freshKey(t), 2*testLimit); all != testLimit {
			t.Errorf("one process: %d admitted; want %d", all, testLimit)
		}
	}
}

func TestKeyPatternsFindEveryKeyARouteWritesAndNoOtherClients(t *testing.T) {
	app := Start(t, longWindow)
	ctx := context.Background()
	for _, r := range Routes() {
		key := freshKey(t)
		other := key + "0" // a client whose key the first's is a prefix of
		for _, k := range []string{key, other} {
			if _, err := target(t, app.URL(r.Pattern)).Acquire(ctx, k, httptarget.Call{}); err != nil {
				t.Fatal(err)
			}
		}
		if r.Kind == "concurrency" || r.Memory {
			continue // released before the answer, or counted in memory: nothing is left to find
		}
		pattern := strings.ReplaceAll(app.KeyPattern(r.Pattern), "{key}", key)
		keys, err := app.Redis.Keys(ctx, pattern).Result()
		if err != nil || len(keys) == 0 {
			t.Errorf("%s: %s found %v, %v; want the route's keys", r.Pattern, pattern, keys, err)
		}
		for _, k := range keys {
			if strings.HasSuffix(k, other) {
				t.Errorf("%s: %s found %s, another client's", r.Pattern, pattern, k)
			}
		}
	}
	// Every key written is some route's.
	all, _ := app.Redis.Keys(ctx, "*").Result()
	for _, k := range all {
		if !strings.HasPrefix(k, "limitapp:") && !strings.HasPrefix(k, "rate:limitapp:") {
			t.Errorf("key %s is no route's", k)
		}
	}
}
