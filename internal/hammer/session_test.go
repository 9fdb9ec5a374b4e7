package hammer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// connectTo is a Deps.Connect for a test server.
func connectTo(t *testing.T, srv *redistest.Server) func(context.Context, int) (redis.UniversalClient, bench.Target, error) {
	return func(ctx context.Context, poolSize int) (redis.UniversalClient, bench.Target, error) {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: poolSize})
		t.Cleanup(func() { c.Close() })
		return c, bench.Target{Kind: "redis", Addr: srv.Addr}, nil
	}
}

// notices collects Deps.Notice lines.
type notices struct {
	mu    sync.Mutex
	lines []string
}

func (n *notices) add(line string) { n.mu.Lock(); n.lines = append(n.lines, line); n.mu.Unlock() }
func (n *notices) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.lines, "\n")
}

func baseOptions() Options {
	return Options{
		Limiter: limiter.Concurrency, Strategies: []limiter.Strategy{limiter.Naive, limiter.Lua},
		Workers: 16, Limit: 5, Requests: 400, Hold: time.Millisecond, Window: time.Second,
		StaleAfter: 10 * time.Second, Keys: 1, Prefix: "limitctl", RunID: "sess1",
	}
}

func TestRunJudgesAssertionsAndDeletesItsKeys(t *testing.T) {
	srv := redistest.Start(t)
	o := baseOptions()
	for _, expr := range []string{"lua.overshoot==0", "lua.attempts>=400"} {
		a, err := verdict.ParseAssertion(expr, []string{"naive", "lua"})
		if err != nil {
			t.Fatal(err)
		}
		o.Assertions = append(o.Assertions, a)
	}
	var log notices
	watched := 0
	res, err := Run(context.Background(), o, Deps{
		Connect: connectTo(t, srv), Timeout: time.Second, Notice: log.add,
		Watch: func(ctx context.Context, live Live, snaps <-chan bench.Snapshot) error {
			if live.Engine == nil || live.Quit == nil || live.Target.Addr != srv.Addr {
				t.Errorf("live %+v", live)
			}
			for range snaps {
				watched++
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() || res.Err() != nil || len(res.Assertions) != 2 {
		t.Fatalf("passed %v err %v assertions %+v", res.Passed(), res.Err(), res.Assertions)
	}
	if watched == 0 {
		t.Error("the watcher saw no snapshot")
	}
	if len(res.Summary.Strategies) != 2 || res.Summary.RunID != "sess1" {
		t.Errorf("summary %+v", res.Summary)
	}
	if !strings.Contains(log.String(), "target: redis "+srv.Addr) {
		t.Errorf("notices %q lack the target", log.String())
	}
	if keys, _ := srv.Client(t).Keys(context.Background(), "*").Result(); len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}

func TestRunFailedAssertionIsACheckFailure(t *testing.T) {
	srv := redistest.Start(t)
	o := baseOptions()
	o.Strategies = []limiter.Strategy{limiter.Lua}
	a, _ := verdict.ParseAssertion("lua.attempts>1000000", []string{"lua"})
	o.Assertions = []verdict.Assertion{a}
	o.KeepKeys = true
	res, err := Run(context.Background(), o, Deps{Connect: connectTo(t, srv), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed() || res.Err() == nil || !strings.Contains(res.Err().Error(), "lua.attempts>1000000 (actual 400)") {
		t.Fatalf("passed %v err %v", res.Passed(), res.Err())
	}
	var check *exitcode.CheckFailedError
	if !errors.As(res.Err(), &check) || check.ExitCode() != exitcode.CheckFailed {
		t.Errorf("err %T, want a check failure", res.Err())
	}
	if res.KeysKept != "limitctl:{sess1}:..." {
		t.Errorf("KeysKept %q", res.KeysKept)
	}
}

func TestRunRefusesACustomScriptLintFails(t *testing.T) {
	o := baseOptions()
	o.Strategies = []limiter.Strategy{limiter.Custom}
	o.Script, o.ScriptSource = "bad.lua", "redis.call('KEYS', '*')\nreturn {1, 1}\n"
	var log notices
	// No target is opened: a refused script stops the run first.
	_, err := Run(context.Background(), o, Deps{Notice: log.add, Connect: func(context.Context, int) (redis.UniversalClient, bench.Target, error) {
		t.Fatal("connected before lint")
		return nil, bench.Target{}, nil
	}})
	if c, ok := err.(exitcode.Coder); !ok || c.ExitCode() != exitcode.LintRefused {
		t.Fatalf("err %v, want lint's refusal (exit 4)", err)
	}
	if !strings.Contains(log.String(), "bad.lua") {
		t.Errorf("lint findings not reported: %q", log.String())
	}
}

// --evidence-max-mib in bytes: 0 is no bound, a positive bound never rounds down to none, and one
// beyond an int64 is none.
func TestEvidenceBoundInBytes(t *testing.T) {
	for mib, want := range map[float64]int64{0: 0, 256: 256 << 20, 0.02: 20971, 1e-9: 1, 1e300: 0} {
		if got := maxBytes(mib); got != want {
			t.Errorf("maxBytes(%v) = %d, want %d", mib, got, want)
		}
	}
}
