package limiterfile

import (
	"strings"
	"testing"
	"time"
)

// One validation of the limiter, whoever states it: each value no limiter of its kind can take is
// refused naming its flag, a value of 0 stands for one not given unless the flag was, and a kind
// left empty (judge takes a record file's) is not judged here.
func TestValidateRefusesWhatNoLimiterTakes(t *testing.T) {
	given := func(flags ...string) func(string) bool {
		return func(f string) bool { return strings.Contains(strings.Join(flags, " "), f) }
	}
	for _, tc := range []struct {
		name  string
		l     Limiter
		given func(string) bool
		want  string // "" for none
	}{
		{"a correct window", Limiter{Kind: "fixed-window", Limit: 10, Window: time.Second}, nil, ""},
		{"no kind yet", Limiter{Limit: 10, Window: 250 * time.Millisecond}, nil, ""},
		{"an unknown kind", Limiter{Kind: "leaky", Limit: 10}, nil, "--limiter"},
		{"a negative limit", Limiter{Kind: "fixed-window", Limit: -1, Window: time.Second}, nil, "--limit must be 0 or more"},
		{"a bucket of no tokens", Limiter{Kind: "token-bucket", Limit: 0, Window: time.Second}, nil, "--limit is"},
		{"a window of 1.5ms", Limiter{Kind: "sliding-window", Limit: 5, Window: 1500 * time.Microsecond}, nil, "--window must be a whole number of milliseconds"},
		{"a window given as 0", Limiter{Kind: "fixed-window", Limit: 5}, given("window"), "--window must be at least 1ms"},
		{"a window of two days", Limiter{Kind: "fixed-window", Limit: 5, Window: 48 * time.Hour}, nil, "--window must be at most 24h"},
		{"a negative hold", Limiter{Kind: "concurrency", Limit: 5, Hold: -time.Second}, nil, "--hold must be 0 or more"},
		{"stale-after given as 0", Limiter{Kind: "concurrency", Limit: 5}, given("stale-after"), "--stale-after must be at least 1ms"},
		{"stale-after of 1.5ms", Limiter{Kind: "concurrency", Limit: 5, StaleAfter: 1500 * time.Microsecond}, nil, "whole number of milliseconds"},
		{"stale-after within the hold", Limiter{Kind: "concurrency", Limit: 5, Hold: time.Second, StaleAfter: time.Second}, given("stale-after"), "must be longer than --hold"},
	} {
		err := tc.l.Validate(tc.given)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
