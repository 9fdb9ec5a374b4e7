package cmd

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limitapp"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// The race inside the application (hammer --http-redis-trace): limitapp's routes, real net/http
// handlers on a real redis-server, traced in that Redis by MONITOR, through the proxy the
// application connects to, and on a 3-master cluster.

// traceDoc is what these tests read of a traced run's JSON.
type traceDoc struct {
	Strategies []struct {
		Name     string `json:"name"`
		Verdict  string `json:"verdict"`
		Admitted int64  `json:"admitted"`
		Rejected int64  `json:"rejected"`
		Redis    *struct {
			Source     string             `json:"source"`
			Decision   string             `json:"decision"`
			Why        string             `json:"why"`
			Commands   map[string]int64   `json:"commands"`
			PerAdmit   map[string]float64 `json:"per_admit"`
			PerRefusal map[string]float64 `json:"per_refusal"`
		} `json:"redis"`
		FirstOvershoot *traceOvershoot `json:"first_overshoot"`
	} `json:"strategies"`
}

// traceOvershoot is what these tests read of a first overshoot: the commands behind it.
type traceOvershoot struct {
	Redis *struct {
		Keys     []string `json:"keys"`
		Commands []struct {
			Cmd       string          `json:"cmd"`
			Keys      []string        `json:"keys"`
			Client    string          `json:"client"`
			AtUs      int64           `json:"at_us"`
			Reply     json.RawMessage `json:"reply"`
			ReplyFrom string          `json:"reply_from"`
		} `json:"commands"`
		Race *struct {
			Key    string `json:"key"`
			Reads  [2]int `json:"reads"`
			Writes []int  `json:"writes"`
		} `json:"race"`
	} `json:"redis"`
}

// traceGroup is one run's routes, a racing one beside an atomic one where the kind has both.
type traceGroup struct {
	kind     limiter.Kind
	patterns []limitapp.Pattern
}

// traceGroups are the routes the trace must tell apart: a handler that GETs then INCRs, Kong's
// read on arrival and count after the response, two counters read then INCRed, the seed's
// ZCARD/ZADD in the handler (check-then-act), beside INCR first, WATCH/MULTI retried, INCR first
// with a TTL read after it, INCR first with a pipeline of reads after the decision, the seed's
// Lua acquire, and two libraries' own scripts (redis_rate, ulule/limiter): atomic.
var traceGroups = []traceGroup{
	{limiter.FixedWindow, []limitapp.Pattern{limitapp.CheckThenUpdate, limitapp.IncrFirst}},
	{limiter.FixedWindow, []limitapp.Pattern{limitapp.Gateway, limitapp.Watch}},
	{limiter.FixedWindow, []limitapp.Pattern{limitapp.TwoCounters, limitapp.IncrTTL}},
	{limiter.Concurrency, []limitapp.Pattern{limitapp.ConcurrencyNaive, limitapp.ConcurrencyAtomic}},
	{limiter.FixedWindow, []limitapp.Pattern{limitapp.IncrThenReads, limitapp.Ulule}},
	{limiter.TokenBucket, []limitapp.Pattern{limitapp.RedisRate}},
}

// traceSetup is where a traced run's application runs and how the hammer reaches its Redis.
type traceSetup struct {
	name  string
	app   *limitapp.App
	extra []string // the limiter's Redis and the trace's flags
}

// monitorSetup serves the routes on a redis-server of their own, traced by MONITOR.
func monitorSetup(t *testing.T) traceSetup {
	srv := redistest.Start(t)
	return traceSetup{"monitor", limitapp.StartOn(t, srv.Client(t), httpConfig), []string{"--addr", srv.Addr, "--http-redis-trace"}}
}

// proxySetup serves the routes with their Redis client pointed at a free port, where each run's
// proxy listens (--http-redis-proxy), forwarding to the redis-server.
func proxySetup(t *testing.T) traceSetup {
	srv := redistest.Start(t)
	proxy := "127.0.0.1:" + strconv.Itoa(redistest.FreePort(t))
	rdb := redis.NewClient(&redis.Options{Addr: proxy})
	t.Cleanup(func() { rdb.Close() })
	return traceSetup{"proxy", limitapp.StartOn(t, rdb, httpConfig), []string{"--addr", srv.Addr, "--http-redis-proxy", proxy}}
}

// clusterSetup serves the routes on a 3-master cluster, traced by MONITOR on every master.
func clusterSetup(t *testing.T) traceSetup {
	c := redistest.StartCluster(t, 3, 0)
	extra := []string{"--http-redis-trace"}
	for _, a := range c.Addrs() {
		extra = append(extra, "--addr", a)
	}
	return traceSetup{"cluster", limitapp.StartOnCluster(t, c.Client(t), httpConfig), extra}
}

// tracedRun runs a group once and reports, per route, whether it read as it must: a racing
// route OVERSHOOT, check-then-act, and a first overshoot whose commands show two reads of one key
// before a write to it; an atomic one exact (its power better than the limit) and atomic. why
// says what a route read when it did not.
func tracedRun(t *testing.T, s traceSetup, g traceGroup, d time.Duration, extra ...string) (ok map[limitapp.Pattern]bool, why map[limitapp.Pattern]string) {
	t.Helper()
	var targets []string
	for _, p := range g.patterns {
		targets = append(targets, targetName(p)+"="+s.app.URL(p))
	}
	r, _, by := hammerHTTP(t, g.kind, d, targets, append(append([]string(nil), s.extra...), extra...)...)
	var doc traceDoc
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s", r.code, err, r.errOut)
	}
	ok, why = map[limitapp.Pattern]bool{}, map[limitapp.Pattern]string{}
	for _, p := range g.patterns {
		name := targetName(p)
		for _, st := range doc.Strategies {
			if st.Name != name {
				continue
			}
			if st.Redis == nil {
				t.Fatalf("%s: no redis in the JSON: exit %d %s", name, r.code, r.errOut)
			}
			if want := wantOf(p); blamed(by[name], want) || want != limitapp.Overshoot && st.Redis.Decision == "check-then-act" {
				t.Errorf("%s (%s) blamed: %s, %s: %s", name, want, st.Verdict, st.Redis.Decision, st.Redis.Why)
			}
			why[p] = st.Verdict + "; " + st.Redis.Decision + ": " + st.Redis.Why
			if wantOf(p) != limitapp.Overshoot {
				ok[p] = judgedAs(by[name], limitapp.Exact) && st.Redis.Decision == "atomic"
				continue
			}
			ok[p] = st.Verdict == "OVERSHOOT" && st.Redis.Decision == "check-then-act" && raceShown(t, name, st.FirstOvershoot)
		}
	}
	return ok, why
}

// raceShown reports whether a first overshoot's commands show two reads of one key before a write
// to it, as the race names them.
func raceShown(t *testing.T, name string, ov *traceOvershoot) bool {
	if ov == nil || ov.Redis == nil || ov.Redis.Race == nil {
		return false
	}
	cmds, race := ov.Redis.Commands, ov.Redis.Race
	holds := func(i int) bool {
		if i < 0 || i >= len(cmds) {
			return false
		}
		for _, k := range cmds[i].Keys {
			if k == race.Key {
				return true
			}
		}
		return false
	}
	if len(race.Writes) == 0 || !holds(race.Reads[0]) || !holds(race.Reads[1]) || !holds(race.Writes[0]) ||
		!(race.Reads[0] < race.Reads[1] && race.Reads[1] < race.Writes[0]) {
		t.Errorf("%s: a race that is not two reads of one key before a write to it: %+v", name, ov.Redis)
		return false
	}
	for i := race.Reads[0] + 1; i < race.Writes[0]; i++ {
		if holds(i) && (cmds[i].Cmd == "INCR" || cmds[i].Cmd == "INCRBY" || cmds[i].Cmd == "ZADD") {
			t.Errorf("%s: a write between the race's first read and its write: %+v", name, cmds[i])
			return false
		}
	}
	return true
}

func wantOf(p limitapp.Pattern) limitapp.Want {
	for _, r := range limitapp.Routes() {
		if r.Pattern == p {
			return r.Want
		}
	}
	return ""
}

// Every route of traceGroups told by its commands, each group in one run: by MONITOR on a single
// node, through the proxy, and on a 3-master cluster; each route read as it must within a few
// runs on a busy machine (make verify-trace counts them: 19 of 20 and 20 of 20).
func TestHammerHTTPRedisTraceTellsTheRaceInsideTheApplication(t *testing.T) {
	skipInShortMode(t)
	for name, setup := range map[string]func(*testing.T) traceSetup{"monitor": monitorSetup, "proxy": proxySetup, "cluster": clusterSetup} {
		t.Run(name, func(t *testing.T) {
			s := setup(t)
			for _, g := range traceGroups {
				if s.name != "monitor" && g.kind != limiter.FixedWindow {
					continue // the other kinds once, by MONITOR
				}
				done := map[limitapp.Pattern]bool{}
				for attempt := 1; len(done) < len(g.patterns); attempt++ {
					ok, why := tracedRun(t, s, g, httpRun)
					for p, good := range ok {
						done[p] = done[p] || good
					}
					if attempt == 5 {
						for _, p := range g.patterns {
							if !done[p] {
								t.Errorf("%s: never as built in 5 runs: %s", p, why[p])
							}
						}
						break
					}
				}
			}
		})
	}
}

// make verify-trace (hack/verify-power.sh): each group LIMITCTL_POWER_RUNS times (20 by default)
// at the default duration, by MONITOR, through the proxy and on a cluster: each racing route
// OVERSHOOT, check-then-act and its race shown in 19 of 20 runs; each atomic one exact and
// atomic in every run.
func TestPowerHTTPRedisTrace(t *testing.T) {
	if os.Getenv("LIMITCTL_POWER") == "" {
		t.Skip("statistical power runs take minutes: make verify-trace")
	}
	runs := 20
	if v, err := strconv.Atoi(os.Getenv("LIMITCTL_POWER_RUNS")); err == nil && v > 0 {
		runs = v
	}
	for name, setup := range map[string]func(*testing.T) traceSetup{"monitor": monitorSetup, "proxy": proxySetup, "cluster": clusterSetup} {
		s := setup(t)
		for _, g := range traceGroups {
			var names []string
			for _, p := range g.patterns {
				names = append(names, targetName(p))
			}
			t.Run(name+"/"+strings.Join(names, "+"), func(t *testing.T) {
				as := map[limitapp.Pattern]int{}
				for i := range runs {
					ok, why := tracedRun(t, s, g, httpPowerRun)
					for _, p := range g.patterns {
						if ok[p] {
							as[p]++
						} else {
							t.Logf("run %d: %s: %s", i+1, p, why[p])
						}
					}
				}
				for _, p := range g.patterns {
					word, want := "exact and atomic", runs
					if wantOf(p) == limitapp.Overshoot {
						word, want = "caught check-then-act, its race shown,", (runs*19+19)/20
					}
					t.Logf("trace %s %s: %s in %d of %d runs", s.name, targetName(p), word, as[p], runs)
					if as[p] < want {
						t.Errorf("%s: %s in only %d of %d runs (want %d)", p, word, as[p], runs, want)
					}
				}
			})
		}
	}
}

// Bad input is one line and exit 2, before any load: the trace without the limiter's Redis, or
// without an HTTP target; MONITOR refused (an ACL user without it: use the proxy); a proxy
// address already taken; a proxy in front of a cluster.
func TestHammerHTTPRedisTraceBadInputIsOneLineExit2(t *testing.T) {
	srv := redistest.StartACL(t, "user app on >app-pw ~* &* +@all -monitor")
	app := limitapp.StartOn(t, srv.ClientAs(t, redistest.AdminUser, redistest.AdminPassword), httpConfig)
	ok := "naive=" + app.URL(limitapp.CheckThenUpdate)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	asApp := "redis://app:app-pw@" + srv.Addr
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"--http", ok, "--http-redis-trace"}, []string{"--http-redis-trace", "--url or --addr"}},
		{[]string{"--url", asApp, "--http-redis-trace"}, []string{"--http-redis-trace", "--http [NAME=]URL"}},
		{[]string{"--http", ok, "--http-redis-proxy", "127.0.0.1:1"}, []string{"--http-redis-proxy", "--url or --addr"}},
		{[]string{"--http", ok, "--url", asApp, "--http-redis-trace"}, []string{"MONITOR refused", "--http-redis-proxy"}},
		{[]string{"--http", ok, "--url", asApp, "--http-redis-proxy", taken.Addr().String()}, []string{"--http-redis-proxy " + taken.Addr().String(), "in use"}},
	} {
		r := run(t, append([]string{"hammer", "--limiter", "fixed-window", "--duration", "1s"}, c.args...)...).wantExit(t, ExitUsage)
		r.wantOneLineError(t, c.wants...)
		if keys := app.Redis.Keys(context.Background(), "limitapp:*").Val(); len(keys) != 0 {
			t.Fatalf("%v: load was sent before the error: %v", c.args, keys)
		}
	}
}

// The one-command demonstration (hammer --http-demo) in a real terminal at 80x24 and 120x40: a
// panel per route, the naive one's application told check-then-act beside the atomic one's,
// the how view (h) naming the race in commands once there is an overshoot; q ends the run with
// the summary, whose lines tell the race as the seed tells its own (two reads of one count
// before either INCR), exit 0 (the naive route caught, as the demonstration asserts).
func TestHTTPDemoShowsTheRaceInATerminal(t *testing.T) {
	skipInShortMode(t)
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(strconv.Itoa(size[0])+"x"+strconv.Itoa(size[1]), func(t *testing.T) {
			m := shell(t, size[0], size[1], binary(t)+" hammer --http-demo --duration 60s")
			screen := m.WaitForText(60*time.Second, "naive", "atomic", "redis", "check-then-act", "atomic  INCR", "RUNNING")
			if strings.Count(screen, "redis ") < 2 {
				t.Errorf("want each panel's redis line:\n%s", screen)
			}
			m.WaitForText(60*time.Second, "h how it happened")
			m.Keys("h")
			m.WaitForText(30*time.Second, "How the first overshoot happened", "redis:", "two reads of")
			m.Keys("q")
			// The summary is taller than 24 lines: its top is above the screen.
			after := m.WaitForPrinted(60*time.Second, "EXIT=0", "naive   redis  check-then-act", "atomic  redis  atomic", "naive   redis: GET", "two reads of")
			if !regexp.MustCompile(`two reads of \S+ before (either|the) INCR`).MatchString(after) {
				t.Errorf("the summary does not tell the race:\n%s", after)
			}
		})
	}
}

// --record keeps the trace (the commands after the calls, each target's summary) and judge
// reads it: the same decisions beside its verdicts, and the commands behind the first overshoot
// it finds, with the race among them.
func TestRecordedTraceIsJudgedAgain(t *testing.T) {
	skipInShortMode(t)
	s := monitorSetup(t)
	g := traceGroups[0]
	file := t.TempDir() + "/run.jsonl"
	for attempt := 1; ; attempt++ {
		_, why := tracedRun(t, s, g, httpRun, "--record", file)
		r := run(t, "judge", file, "-o", "json")
		var doc traceDoc
		if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
			t.Fatalf("judge: exit %d, %v\n%s", r.code, err, r.errOut)
		}
		got := map[string]string{}
		raced := false
		for _, st := range doc.Strategies {
			if st.Redis != nil {
				got[st.Name] = st.Redis.Decision
			}
			if st.Name == targetName(g.patterns[0]) && st.Verdict == "OVERSHOOT" {
				raced = raceShown(t, st.Name, st.FirstOvershoot)
			}
		}
		if got[targetName(g.patterns[0])] != "check-then-act" || got[targetName(g.patterns[1])] != "atomic" {
			t.Fatalf("judge of the record: decisions %v; the run: %v", got, why)
		}
		if raced {
			return
		}
		if attempt == 5 {
			t.Fatalf("judge never showed the race in the naive route's first overshoot in 5 runs: %v", why)
		}
	}
}
