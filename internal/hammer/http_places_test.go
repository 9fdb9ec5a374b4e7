package hammer

import (
	"context"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/limitapp"
	"github.com/limitctl/limitctl/internal/limiterfile"
)

// An endpoint's evidence is judged long after its windows (a start waits for its widest span),
// yet what it proved of each window is kept at the window's time: the counts of a route that
// over-admits from its first window stand above the limit early in the run, not at its end.
func TestAnHTTPTargetsWindowsArePlacedWhereTheyWere(t *testing.T) {
	cfg := limitapp.Config{Limit: 10, Window: 500 * time.Millisecond}
	app := limitapp.Start(t, cfg)
	run := 4 * time.Second
	fl := Flags{Workers: 32, Duration: run, MaxDuration: run, Keys: 1, Witness: "local", OnError: "closed", Prefix: "limitctl",
		Embedded: "auto", Limiter: limiterfile.Limiter{Kind: "fixed-window", Limit: cfg.Limit, Window: cfg.Window,
			HTTP: limiterfile.HTTP{Targets: []string{"naive=" + app.URL(limitapp.MemoryCheckThenUpdate)}}},
		Given: func(f string) bool { return f == "max-duration" }}
	o, err := fl.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	var log notices
	res, err := Run(context.Background(), o, Deps{Timeout: 5 * time.Second, Notice: log.add})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Summary.Strategies[0]
	if st.Overshoot == 0 {
		t.Fatalf("the racing route read %s %s: no overshoot to place", res.Verdicts[0].Word, res.Verdicts[0].Text)
	}
	var firstOver time.Duration = -1
	for _, w := range st.Windows {
		if w.Count > cfg.Limit && firstOver < 0 {
			firstOver = w.At
		}
	}
	if firstOver < 0 || firstOver > res.Summary.Duration/2 {
		t.Errorf("the first window proven over the limit placed at %s of %s (windows %v); want it in the run's first half",
			firstOver, res.Summary.Duration, st.Windows)
	}
}
