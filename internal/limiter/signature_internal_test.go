package limiter

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/scripts"
)

// headerSlots are the KEYS[n] or ARGV[n] a script's header comment names, in order, with the
// word after each: "-- ARGV[1] limit  ARGV[2] window_ms".
func headerSlots(src, table string) (names []string) {
	slot := regexp.MustCompile(table + `\[(\d+)\] (\w+)`)
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "--") {
			continue
		}
		for _, m := range slot.FindAllStringSubmatch(line, -1) {
			if n, _ := strconv.Atoi(m[1]); n != len(names)+1 {
				return append(names, "out of order: "+m[0])
			}
			names = append(names, m[2])
		}
	}
	return names
}

// highestSlot is the highest KEYS[n] or ARGV[n] the script's code reads.
func highestSlot(src, table string) int {
	most := 0
	for _, m := range regexp.MustCompile(table+`\[(\d+)\]`).FindAllStringSubmatch(src, -1) {
		n, _ := strconv.Atoi(m[1])
		most = max(most, n)
	}
	return most
}

// Every kind's signature agrees in its three places: the script's header comment, its
// declaration in package scripts (from which the Contract's Args are made), and the args
// function, which must put each value in the slot its name says. Distinct sentinel values
// show a swapped pair.
func TestEveryShippedSignatureAgrees(t *testing.T) {
	cfg := Config{Limit: 101, StaleAfter: 202 * time.Millisecond, Window: 303 * time.Millisecond,
		Rate: 4.5, Burst: 505, Cost: 6}
	now, member := time.UnixMilli(707_070), "member-sentinel"
	want := map[string]string{ // each ARGV name and the value it must carry
		"limit": "101", "stale_after_ms": "202", "window_ms": "303", "rate_per_s": "4.5",
		"burst": "505", "cost": "6", "now_ms": "707070", "member": member,
	}
	for _, d := range kinds {
		s, err := scripts.Lookup(d.Script)
		if err != nil {
			t.Fatalf("%s: %v", d.Kind, err)
		}
		if got := headerSlots(s.Source, "ARGV"); !slices.Equal(got, s.Args) {
			t.Errorf("%s: the script's header names ARGV %q, package scripts declares %q", d.Kind, got, s.Args)
		}
		if got := len(headerSlots(s.Source, "KEYS")); got != len(s.Keys) || highestSlot(s.Source, "KEYS") != len(s.Keys) {
			t.Errorf("%s: the header names %d KEYS and the code reads up to KEYS[%d], package scripts declares %d",
				d.Kind, got, highestSlot(s.Source, "KEYS"), len(s.Keys))
		}
		if got := highestSlot(s.Source, "ARGV"); got != len(s.Args) {
			t.Errorf("%s: the code reads up to ARGV[%d], package scripts declares %d", d.Kind, got, len(s.Args))
		}
		if got, wantArgs := d.Contract.Args, "{"+strings.Join(s.Args, "} {")+"}"; got != wantArgs {
			t.Errorf("%s: Contract.Args %q, want %q", d.Kind, got, wantArgs)
		}
		keys, args := d.args(cfg, nil, nil, "key-sentinel", now, member)
		if len(keys) != len(s.Keys) || len(args) != len(s.Args) {
			t.Fatalf("%s: args gives %d keys and %d args, the script takes %d and %d", d.Kind, len(keys), len(args), len(s.Keys), len(s.Args))
		}
		for i, name := range s.Args {
			value, known := want[name]
			if !known {
				t.Errorf("%s: ARGV[%d] %s has no sentinel in this test", d.Kind, i+1, name)
			} else if got := fmt.Sprint(args[i]); got != value {
				t.Errorf("%s: ARGV[%d] %s carries %s, want %s", d.Kind, i+1, name, got, value)
			}
		}
		if !strings.HasPrefix(keys[0], "key-sentinel") {
			t.Errorf("%s: KEYS[1] is %q, want the limiter's key", d.Kind, keys[0])
		}
	}
}
