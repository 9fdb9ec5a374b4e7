package cmd

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/limitctl/limitctl/internal/golden"
	"github.com/limitctl/limitctl/internal/keys"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/tableprint"
)

const tablesGoldenDir = "../testdata/tables"

// goldenWidths are the terminals every table is pinned at: the default 80x24 and a wide one.
var goldenWidths = []int{80, 120}

// checkTableGolden prints table as on a terminal of each golden width, checks no line is wider
// than the terminal, and compares with testdata/tables/<name>_<width>.golden (-update rewrites).
func checkTableGolden(t *testing.T, name string, table tableprint.Tabular) {
	t.Helper()
	for _, width := range goldenWidths {
		var b bytes.Buffer
		if err := table.WriteTerminal(&b, width); err != nil {
			t.Fatal(err)
		}
		checkFits(t, b.String(), width)
		checkGolden(t, filepath.Join(tablesGoldenDir, name+"_"+strconv.Itoa(width)+".golden"), b.String())
	}
}

// checkFits fails for a line wider than width or ending in a space.
func checkFits(t *testing.T, out string, width int) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("a line of %d columns on a %d-column terminal:\n%s", n, width, line)
		}
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing space: %q", line)
		}
	}
}

func checkGolden(t *testing.T, path, got string) { t.Helper(); golden.Check(t, path, got) }

func ptr[T any](v T) *T { return &v }

// A cluster's inspection: long keys on three nodes, every kind, stale members and flags.
func TestInspectTableFits(t *testing.T) {
	nodes := []string{"10.0.12.101:7000", "10.0.12.102:7001", "10.0.12.103:7002"}
	age := func(ms int64) *time.Duration { d := msDuration(ms); return &d }
	fullAt := time.UnixMilli(1748779201500)
	rows := []keys.KeyInfo{
		{Key: "limitctl:{checkout-api}:concurrency:tenant:acme-industries", Node: nodes[0], Type: "zset", Kind: keys.KindConcurrency, Size: 23, TTL: msDuration(600000),
			OldestAge: age(1_860_000), NewestAge: age(12), Stale: 3, Memory: ptr[int64](2311), Flags: []keys.Flag{keys.FlagStale, keys.FlagOverLimit}},
		{Key: "limitctl:{checkout-api}:concurrency:tenant:globex", Node: nodes[1], Type: "zset", Kind: keys.KindConcurrency, Size: 4, TTL: msDuration(600000),
			OldestAge: age(950), NewestAge: age(40), Memory: ptr[int64](412), Flags: []keys.Flag{}},
		{Key: "rl:sliding:user:8812734", Node: nodes[2], Type: "zset", Kind: keys.KindWindowLog, Size: 2502, TTL: -1,
			OldestAge: age(662_000), NewestAge: age(1000), Stale: 2500, Memory: ptr[int64](190_442), Flags: []keys.Flag{keys.FlagNoTTL, keys.FlagStale, keys.FlagOverLimit}},
		{Key: "rl:fw:user:8812734:29114400", Node: nodes[0], Type: "string", Kind: keys.KindCounter, Size: 5, TTL: msDuration(42_300), Memory: ptr[int64](72), Flags: []keys.Flag{}},
		{Key: "rl:tb:user:8812734", Node: nodes[1], Type: "hash", Kind: keys.KindBucket, Size: 7, TTL: msDuration(3_600_000), OldestAge: age(3000), NewestAge: age(3000), Flags: []keys.Flag{}},
		{Key: "rl:junk", Node: nodes[2], Type: "list", Kind: keys.KindUnknown, Size: 2, TTL: -1, Memory: ptr[int64](96), Flags: []keys.Flag{keys.FlagNoTTL}},
		{Key: "rate:user42", Node: nodes[0], Type: "string", Kind: keys.KindGCRA, Size: 1, TTL: msDuration(2000), Memory: ptr[int64](64), Flags: []keys.Flag{},
			FullIn: age(1500), FullAt: &fullAt},
		{Key: "jobs:export", Node: nodes[1], Type: "zset", Kind: keys.KindConcurrency, Size: 2, TTL: -1, Memory: ptr[int64](128), Flags: []keys.Flag{keys.FlagNoTTL},
			Scores: keys.ScoresDeadline, ScoresGuessed: true, Expired: ptr[int64](1)},
	}
	in := keys.Inspection{Keys: rows}
	checkTableGolden(t, "inspect", in.Table())

	// Without --stale no key has stale members: the column of zeros gives its room to others.
	for i := range rows {
		rows[i].Stale = 0
	}
	var b bytes.Buffer
	if err := in.Table().WriteTerminal(&b, 120); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "STALE  ") {
		t.Errorf("a column of zero stale members shows:\n%s", b.String())
	}
}

func TestInspectMembersTableFits(t *testing.T) {
	list := keys.MemberList{Key: "limitctl:{checkout-api}:concurrency:tenant:acme-industries", Size: 23, Unit: keys.UnitMillis}
	for i, age := range []int64{1_860_000, 1_200_000, 5000, 12} {
		at, d := fixedNow.Add(-msDuration(age)), msDuration(age)
		list.Members = append(list.Members, keys.Member{
			Member: "req-7f3c9a2e-4b1d-4e8a-9c0f-" + strings.Repeat(string(rune('a'+i)), 12),
			Score:  float64(1748779200000 - age), Time: &at, Age: &d, Stale: age > 600_000,
		})
	}
	checkTableGolden(t, "inspect_members", list.Table())
}

func TestPurgeTableFits(t *testing.T) {
	res := keys.PurgeResult{TotalRemoved: 2504, Keys: []keys.PurgedKey{
		{Key: "limitctl:{checkout-api}:concurrency:tenant:acme-industries", Node: "10.0.12.101:7000", Unit: "ms", Scores: keys.ScoresStart, Removed: 3, Remaining: 20},
		{Key: "rl:sliding:user:8812734", Node: "10.0.12.103:7002", Unit: "us", Scores: keys.ScoresStart, Removed: 2500, Remaining: 2},
		{Key: "rl:odd:scores", Node: "10.0.12.102:7001", Skipped: "scores are not timestamps in any unit (give --score-unit)"},
		{Key: "jobs:export", Node: "10.0.12.102:7001", Unit: "s", Scores: keys.ScoresDeadline, Guessed: true, Removed: 1, Remaining: 1},
	}}
	checkTableGolden(t, "purge", res.Table())
	res.DryRun = true
	checkTableGolden(t, "purge_dry_run", res.Table())
}

func TestScriptsTablesFit(t *testing.T) {
	list := scriptcache.List()
	checkTableGolden(t, "scripts_list", list.Table())

	status := scriptcache.StatusReport{}
	for i, n := range []struct{ addr, role string }{{"10.0.12.101:7000", "master"}, {"10.0.12.104:7003", "replica"}} {
		node := scriptcache.NodeStatus{Node: n.addr, Role: n.role}
		for j, s := range list.Scripts[:3] {
			cached := i == 0 || j != 1
			if !cached {
				status.Missing++
			}
			node.Scripts = append(node.Scripts, scriptcache.ScriptStatus{Name: s.Name, SHA1: s.SHA1(), Cached: cached})
		}
		status.Nodes = append(status.Nodes, node)
	}
	checkTableGolden(t, "scripts_status", status.Table())
	checkTableGolden(t, "scripts_load", scriptcache.LoadReport{Loaded: []scriptcache.Loaded{
		{Name: list.Scripts[0].Name, SHA1: list.Scripts[0].SHA1(), Node: "10.0.12.101:7000", CachedBefore: true},
		{Name: list.Scripts[1].Name, SHA1: list.Scripts[1].SHA1(), Node: "10.0.12.104:7003"},
	}}.Table())
}

func TestLintTableFits(t *testing.T) {
	checkTableGolden(t, "lint", lint.Report{Diagnostics: []lint.Diagnostic{
		{File: "scripts/ours/concurrency_acquire_with_a_long_name.lua", Line: 12, Col: 5, Severity: "error", Rule: "undeclared-key",
			Message: "redis.call on a key built from ARGV: declare every key in KEYS so a cluster routes it"},
		{File: "fw.lua", Line: 3, Col: 1, Severity: "warning", Rule: "missing-expire", Message: "INCR without EXPIRE: the counter lives forever"},
	}}.Table())
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
