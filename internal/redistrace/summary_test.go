package redistrace

import (
	"context"
	"testing"
)

// The fit over slices finds what an admit and a refusal send, and whole numbers are taken only
// where the run's total agrees with them: a few admits beside many refusals (weighing little in
// the fit) still read 1, a command retried (WATCH) keeps its fraction.
func TestPerDecisionFitsAndSnapsOnlyToWholeNumbersTheTotalAgrees(t *testing.T) {
	for _, c := range []struct {
		name                    string
		a, f                    float64 // the fit
		admits, refusals, total float64
		wantA, wantF            float64
	}{
		{"INCR first, few admits", 0.6, 1.0, 80, 10100, 10180, 1, 1},
		{"INCR first, the fit at 0", 0, 1.0, 40, 2074, 2114, 1, 1},
		{"GET then INCR: INCR only on admits", 0.9, 0.02, 164, 10018, 164, 1, 0},
		{"two reads a request", 2.1, 1.9, 55, 197, 504, 2, 2},
		{"WATCH retried", 1.7, 1.2, 40, 53, 218, 1.7, 1.2},
	} {
		a, f := snap(c.a, c.f, c.admits, c.refusals, c.total)
		if a != c.wantA || f != c.wantF {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, a, f, c.wantA, c.wantF)
		}
	}
	// Slices of 10 admits and none refused, then 0 admits and 30 refused: a command sent twice
	// by an admit and once by a refusal.
	var saa, sff, saf, ya, yf float64
	for _, s := range [][2]float64{{10, 0}, {0, 30}, {10, 30}, {5, 10}} {
		c := 2*s[0] + s[1]
		saa, sff, saf, ya, yf = saa+s[0]*s[0], sff+s[1]*s[1], saf+s[0]*s[1], ya+s[0]*c, yf+s[1]*c
	}
	if a, f := fit(saa, sff, saf, ya, yf); a < 1.999 || a > 2.001 || f < 0.999 || f > 1.001 {
		t.Errorf("fit: %v, %v; want 2, 1", a, f)
	}
}

// Replaying MONITOR's commands in order, the clock moved on as Redis's was, gives the replies
// Redis gave: the counts GET read and INCR made, a key gone once its TTL has passed; a script's
// call stays unknown, and what a reply already known says stands.
func TestReplayGivesTheRepliesRedisGave(t *testing.T) {
	k := "app:r.0"
	mk := func(at int64, name string, args ...string) *Command {
		return &Command{Name: name, Args: args, Keys: []string{k}, AtUs: at}
	}
	cmds := []*Command{
		mk(0, "GET", k), mk(10, "GET", k), mk(20, "INCR", k), mk(30, "PEXPIRE", k, "5"), mk(40, "INCR", k),
		mk(50, "EVALSHA", "abc", "1", k), {Name: "INCR", Args: []string{k}, Keys: []string{k}, AtUs: 50, In: "script"},
		mk(60, "GET", k),
		mk(6_000, "GET", k), // 5ms after the PEXPIRE: gone
		{Name: "INCR", Args: []string{k}, Keys: []string{k}, AtUs: 6_010, Reply: Reply{From: FromProxy, Value: int64(41)}},
	}
	if err := replay(context.Background(), cmds); err != nil {
		t.Fatal(err)
	}
	want := []string{"nil", "nil", "1", "1", "2", "", "3", `"3"`, "nil", "41"}
	for i, c := range cmds {
		got := ""
		if c.Reply.From != "" {
			got = string(c.Reply.JSON())
			if got == "null" {
				got = "nil"
			}
		}
		if got != want[i] {
			t.Errorf("%d %s at %dµs: reply %s, want %s", i, c.Name, c.AtUs, got, want[i])
		}
	}
}
