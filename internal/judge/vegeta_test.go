package judge_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/judge"
	"github.com/limitctl/limitctl/internal/limitapp"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/loadtools"
	"github.com/limitctl/limitctl/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// vegeta really runs here, against the limiters of internal/limitapp as applications deploy
// them (real net/http servers in front of a real redis-server): its records, read back as
// `vegeta encode --to json` writes them, must read OVERSHOOT on every wrong route and exact on
// every correct one.

// appConfig is the limit every route enforces: 5 per 200ms window, a concurrency slot held 50ms.
var appConfig = limitapp.Config{Limit: 5, Window: 200 * time.Millisecond, Hold: 50 * time.Millisecond}

// route is a limiter behind HTTP, the verdict it earns, and how vegeta loads it.
type route struct {
	name    string
	url     string // with {key}
	kind    limiter.Kind
	want    limitapp.Want
	workers int
}

func routes(t *testing.T) []route {
	app := limitapp.StartOn(t, redistest.Shared(t).Client(t), appConfig)
	var out []route
	for _, r := range limitapp.Routes() {
		workers := 8
		if r.Kind == limiter.Concurrency {
			workers = 16 // more than the limit at once, each admit held 50ms
		}
		out = append(out, route{string(r.Pattern), app.URL(r.Pattern), r.Kind, r.Want, workers})
	}
	pp := limitapp.StartPerProcess(t, appConfig)
	return append(out, route{"two processes, a count in memory each", pp.URL(), limiter.FixedWindow, limitapp.Overshoot, 8})
}

var attackSeq atomic.Int64

// attack has vegeta hammer url (a fresh key in place of {key}) at its full rate with workers
// for d, and returns its records as `vegeta encode --to json` writes them.
func attack(t *testing.T, vegeta, url string, workers int, d time.Duration) string {
	t.Helper()
	dir := t.TempDir()
	key := fmt.Sprintf("judge%d.%d", time.Now().UnixNano(), attackSeq.Add(1))
	targets := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(targets, []byte("GET "+strings.ReplaceAll(url, "{key}", key)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, out := filepath.Join(dir, "results.bin"), filepath.Join(dir, "results.json")
	for _, args := range [][]string{
		{"attack", "-rate", "0", "-max-workers", strconv.Itoa(workers), "-workers", strconv.Itoa(workers),
			"-duration", d.String(), "-targets", targets, "-output", bin},
		{"encode", "--to", "json", "--output", out, bin},
	} {
		if b, err := exec.Command(vegeta, args...).CombinedOutput(); err != nil {
			t.Fatalf("vegeta %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	return out
}

// judgeFile judges a vegeta file as the route's limiter.
func judgeFile(t *testing.T, path string, r route) hammer.Result {
	t.Helper()
	o := judge.Options{Files: []string{path}, Limiter: r.kind, Limit: appConfig.Limit, Window: appConfig.Window}
	if r.kind == limiter.Concurrency {
		o.Hold = appConfig.Hold
	}
	res, err := judge.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Verdicts) != 1 {
		t.Fatalf("%d verdicts, want one (the records' one key)", len(res.Verdicts))
	}
	return res
}

// runsOf is how many times each route is attacked: LIMITCTL_POWER_RUNS (default 20) under
// LIMITCTL_POWER, else short.
func runsOf(short int) int {
	if os.Getenv("LIMITCTL_POWER") == "" {
		return short
	}
	if n, err := strconv.Atoi(os.Getenv("LIMITCTL_POWER_RUNS")); err == nil && n > 0 {
		return n
	}
	return 20
}

// TestPowerJudgeOfVegeta is the catch rate behind the README's figure (make verify-power): each
// route attacked runs times (LIMITCTL_POWER=1; 2 otherwise, each attack longer while its
// records are too thin to judge), each file judged on its own. A
// wrong route must read OVERSHOOT and a correct one exact every time; no route built to earn
// anything else (TOO STRICT: the refusals of a load tool's records are not judged) may ever be
// blamed with an overshoot.
func TestPowerJudgeOfVegeta(t *testing.T) {
	vegeta := loadtools.Vegeta(t)
	runs := runsOf(2)
	for _, r := range routes(t) {
		t.Run(r.name, func(t *testing.T) {
			var hits int
			var last hammer.Result
			for range runs {
				path := attack(t, vegeta, r.url, r.workers, 5*appConfig.Window)
				res := judgeFile(t, path, r)
				v := res.Verdicts[0]
				// On a busy machine (make test beside other packages' tests under -race) a
				// second of records can be too thin to judge: each request's interval, from
				// its start to its end, spans more of a window, and the verdict says so (not
				// judged, which blames nothing). A user would attack for longer; so does the
				// test, up to 3 times as long, as hammer loads on. make verify-power keeps the
				// one-second figure: there a thin run counts as a miss. (A route built to
				// earn neither, such as one that refuses with room, reads not judged at any length.)
				judged := r.want == limitapp.Exact || r.want == limitapp.Overshoot
				for longer := 2; judged && v.Word == verdict.NotJudged && os.Getenv("LIMITCTL_POWER") == "" && longer <= 3; longer++ {
					t.Logf("%s: %s %s; attacking %dx as long", r.name, v.Word, v.Text, longer)
					path = attack(t, vegeta, r.url, r.workers, time.Duration(longer)*5*appConfig.Window)
					res = judgeFile(t, path, r)
					v = res.Verdicts[0]
				}
				last = res
				switch r.want {
				case limitapp.Overshoot:
					if v.Word == verdict.Overshoot {
						hits++
					}
				case limitapp.Exact:
					if v.Word == verdict.Exact {
						hits++
					}
				}
				if r.want != limitapp.Overshoot && v.Tone() == verdict.ToneBad {
					t.Errorf("a correct limiter blamed from %s: %s %s", path, v.Word, v.Text)
				}
			}
			v := last.Verdicts[0]
			switch r.want {
			case limitapp.Overshoot:
				t.Logf("%s: caught in %d of %d runs (last: %s)", r.name, hits, runs, v.Text)
			case limitapp.Exact:
				t.Logf("%s: exact (%s) in %d of %d runs", r.name, v.Text, hits, runs)
			default:
				t.Logf("%s: never blamed in %d of %d runs (last: %s %s)", r.name, runs, runs, v.Word, v.Text)
				return
			}
			if hits != runs {
				t.Errorf("%s in %d of %d runs only; the last: %s %s", r.want, hits, runs, v.Word, v.Text)
			}
			if r.want == limitapp.Overshoot && (last.Summary.Strategies[0].FirstOvershoot == nil ||
				len(last.Summary.Strategies[0].FirstOvershoot.Requests) == 0) && v.Word == verdict.Overshoot {
				t.Errorf("an overshoot told with no record behind it")
			}
		})
	}
}
