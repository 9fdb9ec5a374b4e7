package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// A run whose naive strategy overshot says how, in the JSON (first_overshoot: the moment and
// the requests behind it, each command with the reply Redis sent) and below the verdict lines
// on stderr; lua, which held, has nothing to show (null, no how-line).
func TestHammerShowsHowTheFirstOvershootHappened(t *testing.T) {
	srv := redistest.Start(t)
	for attempt := 1; ; attempt++ {
		r := execBinary(t, nil, "--addr", srv.Addr, "hammer", "--strategies", "naive,lua", "--duration", "2s", "-o", "json").wantExit(t, ExitOK)
		var doc hammerDoc
		if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
			t.Fatal(err)
		}
		naive, lua := doc.Strategies[0], doc.Strategies[1]
		if lua.FirstOvershoot != nil || strings.Contains(r.errOut, "lua  how:") {
			t.Fatalf("lua held, yet shows a trace: %+v\n%s", lua.FirstOvershoot, r.errOut)
		}
		if naive.Overshoot == 0 {
			if attempt == 3 {
				t.Fatal("naive never overshot in three 2s runs")
			}
			continue
		}
		ov := naive.FirstOvershoot
		if ov == nil || ov.Held == nil || *ov.Held <= ov.Limit || ov.Limit != 20 || len(ov.Requests) == 0 {
			t.Fatalf("naive overshot (peak %d); first_overshoot %+v", naive.Peak, ov)
		}
		for _, req := range ov.Requests {
			ops := []string{}
			for _, s := range req.Steps {
				ops = append(ops, s.Op)
				if s.SentUs > s.RepliedUs || s.RepliedUs > int64(doc.DurationS*1e6)+1e6 {
					t.Errorf("%s %s: sent %dµs replied %dµs in a %.1fs run", req.ID, s.Op, s.SentUs, s.RepliedUs, doc.DurationS)
				}
			}
			if got := strings.Join(ops, " "); got != "ZREMRANGEBYSCORE ZCARD ZADD PEXPIRE" {
				t.Errorf("%s: steps %s, want naive's four commands", req.ID, got)
			}
		}
		if !strings.Contains(r.errOut, "naive  how: r") || !strings.Contains(r.errOut, " held at ") {
			t.Errorf("stderr has no how-line for naive:\n%s", r.errOut)
		}
		return
	}
}
