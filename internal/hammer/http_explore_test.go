package hammer

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/limitapp"
	"github.com/limitctl/limitctl/internal/limiterfile"
)

func TestExploreHTTP(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	cfg := limitapp.Config{Limit: 10, Window: 500 * time.Millisecond, Hold: 20 * time.Millisecond}
	app := limitapp.Start(t, cfg)
	for _, r := range limitapp.Routes() {
		if os.Getenv("ROUTE") != "" && os.Getenv("ROUTE") != string(r.Pattern) {
			continue
		}
		fl := Flags{Workers: 32, Duration: 3 * time.Second,
			Keys: 1, Witness: "local", OnError: "closed", Prefix: "limitctl", Embedded: "auto",
			Limiter: limiterfile.Limiter{Kind: string(r.Kind), Limit: cfg.Limit, Window: cfg.Window, Hold: cfg.Hold,
				HTTP: limiterfile.HTTP{Targets: []string{"t=" + app.URL(r.Pattern)}}},
			Given: func(f string) bool { return f == "hold" }}
		o, err := fl.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		var log notices
		res, err := Run(context.Background(), o, Deps{Timeout: 5 * time.Second, Notice: log.add})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(res, "", " ")
		_ = b
		st := res.Summary.Strategies[0]
		t.Logf("%s (%s, want %s): %s %s | admitted %d rejected %d errors %d statuses %v early %d | err %v", r.Pattern, r.Kind, r.Want, res.Verdicts[0].Word, res.Verdicts[0].Text,
			st.Admitted, st.Rejected, st.Errors, st.Statuses, st.Early, res.Err())
		if os.Getenv("JSON") != "" {
			t.Logf("%s", b)
		}
		for _, l := range res.HowLines(100) {
			t.Log(l)
		}
	}
}
