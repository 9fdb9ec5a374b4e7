package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/corpus"
	"github.com/limitctl/limitctl/internal/redistest"
)

// Soundness: no verdict blames a correct limiter (SPEC section 11). The corpus (internal/corpus)
// makes correct limiters of every kind's families by construction, and each is hammered as a user
// would, with the tool's own defaults for what the flags leave out: blamed is OVERSHOOT, TOO
// STRICT or LEAKS, in any run. A short pass (a sample, at the defaults) runs in make test; make
// verify-soundness (LIMITCTL_SOUNDNESS=1) runs every limiter under every load profile and skew,
// idle and beside two busy loops (hack/verify-power.sh).

// soundnessLoads are the loads each limiter is run under in the long pass: the defaults, then each
// profile with the clocks agreeing and with them further apart than the default.
var soundnessLoads = [][]string{
	nil,
	{"--profile", "steady", "--skew", "0s"},
	{"--profile", "bursty", "--skew", "0s"},
	{"--profile", "steady", "--skew", "20ms"},
	{"--profile", "bursty", "--skew", "20ms"},
}

type soundStrategy struct {
	Verdict      string `json:"verdict"`
	VerdictText  string `json:"verdict_text"`
	Overshoot    int64  `json:"overshoot"`
	FalseRejects *int64 `json:"false_rejects"`
	Admitted     int64  `json:"admitted"`
	Rejected     int64  `json:"rejected"`
}

// blamed says why a verdict blames the limiter, or "".
func (s soundStrategy) blamed() string {
	switch {
	case s.Overshoot > 0:
		return "overshoot"
	case s.FalseRejects != nil && *s.FalseRejects > 0:
		return "false rejects"
	case strings.Contains(s.Verdict, "OVERSHOOT"), strings.Contains(s.Verdict, "TOO STRICT"), strings.Contains(s.Verdict, "LEAKS"):
		return s.Verdict
	}
	return ""
}

// soundnessDuration is how long a limiter is hammered: long enough for a few of its windows (a
// minute's window is judged on the part of one a run sees).
func soundnessDuration(l corpus.Limiter, long bool) time.Duration {
	d := 3 * time.Second
	if long {
		d = 5 * time.Second
	}
	if l.Window > time.Second && l.Window < time.Minute {
		d = min(3*l.Window, 15*time.Second)
	}
	return d
}

func TestSoundnessCorrectLimitersAreNeverBlamed(t *testing.T) {
	long := os.Getenv("LIMITCTL_SOUNDNESS") != ""
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("LIMITCTL_SOUNDNESS_SEED"), 10, 64); err == nil {
		seed = v
	}
	limiters := corpus.Sample(seed, 4)
	loads := soundnessLoads[:1]
	if long {
		limiters, loads = corpus.Correct(seed), soundnessLoads
	} else if testing.Short() {
		limiters = limiters[:1]
	}
	t.Logf("corpus seed %d (LIMITCTL_SOUNDNESS_SEED=%d repeats it): %d limiters, %d loads each", seed, seed, len(limiters), len(loads))
	srv := redistest.Start(t)
	dir := t.TempDir()
	for i, l := range limiters {
		t.Run(l.Name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("l%d.lua", i))
			if err := os.WriteFile(path, []byte(l.Source), 0o644); err != nil {
				t.Fatal(err)
			}
			verdicts := map[string]int{}
			clean := 0
			for _, load := range loads {
				args := append([]string{"--addr", srv.Addr, "hammer", "--duration", soundnessDuration(l, long).String(), "-o", "json"}, l.Flags(path)...)
				r := run(t, append(args, load...)...)
				var doc struct {
					Strategies []soundStrategy `json:"strategies"`
				}
				if err := json.Unmarshal([]byte(r.out), &doc); err != nil || len(doc.Strategies) != 1 {
					t.Fatalf("%v: exit %d, not one strategy's JSON: %v\n%s\n%s", load, r.code, err, r.out, r.errOut)
				}
				st := doc.Strategies[0]
				verdicts[st.Verdict]++
				if why := st.blamed(); why != "" {
					t.Errorf("%v: blamed (%s), exit %d: %s\n%s", load, why, r.code, st.VerdictText, l.Source)
					continue
				}
				if st.Admitted == 0 {
					t.Errorf("%v: nothing admitted: %s", load, st.VerdictText)
					continue
				}
				clean++
			}
			t.Logf("%s: never blamed in %d of %d runs (verdicts %v)", l.Name, clean, len(loads), verdicts)
		})
	}
}
