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
	"github.com/limitctl/limitctl/internal/keys/kind"
	"github.com/limitctl/limitctl/internal/keys/scores"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// flagsCell is a key's flags as the table shows them.
func flagsCell(flags []keys.Flag) string {
	s := make([]string, len(flags))
	for i, f := range flags {
		s[i] = string(f)
	}
	return strings.Join(s, ",")
}

const tablesGoldenDir = "../testdata/tables"

// goldenWidths are the terminals every table is pinned at: the default 80x24 and a wide one.
var goldenWidths = []int{80, 120}

// checkTableGolden prints table as on a terminal of each golden width, checks that every
// identifier (a key, a SHA1, a flag word) shows whole and that no line is wider than the
// terminal unless an identifier makes it so, and compares with
// testdata/tables/<name>_<width>.golden (-update rewrites).
func checkTableGolden(t *testing.T, name string, table tableprint.Tabular, identifiers ...string) {
	t.Helper()
	for _, width := range goldenWidths {
		var b bytes.Buffer
		if err := table.WriteTerminal(&b, width); err != nil {
			t.Fatal(err)
		}
		for _, id := range identifiers {
			if !strings.Contains(b.String(), id) {
				t.Errorf("at %d columns %q is cut or missing:\n%s", width, id, b.String())
			}
		}
		checkFits(t, b.String(), width, identifiers...)
		golden.Check(t, filepath.Join(tablesGoldenDir, name+"_"+strconv.Itoa(width)+".golden"), b.String())
	}
}

// checkFits fails for a line ending in a space, or wider than width. Identifiers are never
// cut, so an identifier that leaves less than idRoom columns beside it lets the table run past
// the terminal: the columns that never give way cannot fit next to it.
func checkFits(t *testing.T, out string, width int, identifiers ...string) {
	t.Helper()
	room := width
	for _, id := range identifiers {
		if utf8.RuneCountInString(id) > width-idRoom {
			room = 1 << 30
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > room {
			t.Errorf("a line of %d columns on a %d-column terminal:\n%s", n, width, line)
		}
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing space: %q", line)
		}
	}
}

// idRoom is what a table needs beside its longest identifier for the columns that never give
// way (a count, a state, a flag).
const idRoom = 30

func checkGolden(t *testing.T, path, got string) { t.Helper(); golden.Check(t, path, got) }

func ptr[T any](v T) *T { return &v }

// A cluster's inspection: long keys on three nodes, every kind, stale members and flags.
func TestInspectTableFits(t *testing.T) {
	nodes := []string{"10.0.12.101:7000", "10.0.12.102:7001", "10.0.12.103:7002"}
	age := func(ms int64) *time.Duration { d := msDuration(ms); return &d }
	fullAt := time.UnixMilli(1748779201500)
	rows := []keys.KeyInfo{
		{Key: "limitctl:{checkout-api}:concurrency:tenant:acme-industries", Node: nodes[0], Type: "zset", Kind: kind.Concurrency, Size: 23, TTL: msDuration(600000),
			OldestAge: age(1_860_000), NewestAge: age(12), Stale: 3, Memory: ptr[int64](2311), Flags: []keys.Flag{keys.FlagStale, keys.FlagOverLimit}},
		{Key: "limitctl:{checkout-api}:concurrency:tenant:globex", Node: nodes[1], Type: "zset", Kind: kind.Concurrency, Size: 4, TTL: msDuration(600000),
			OldestAge: age(950), NewestAge: age(40), Memory: ptr[int64](412), Flags: []keys.Flag{}},
		{Key: "rl:sliding:user:8812734", Node: nodes[2], Type: "zset", Kind: kind.WindowLog, Size: 2502, TTL: -1,
			OldestAge: age(662_000), NewestAge: age(1000), Stale: 2500, Memory: ptr[int64](190_442), Flags: []keys.Flag{keys.FlagNoTTL, keys.FlagStale, keys.FlagOverLimit}},
		{Key: "rl:fw:user:8812734:29114400", Node: nodes[0], Type: "string", Kind: kind.Counter, Size: 5, TTL: msDuration(42_300), Memory: ptr[int64](72), Flags: []keys.Flag{}},
		{Key: "rl:tb:user:8812734", Node: nodes[1], Type: "hash", Kind: kind.Bucket, Size: 7, TTL: msDuration(3_600_000), OldestAge: age(3000), NewestAge: age(3000), Flags: []keys.Flag{}},
		{Key: "rl:junk", Node: nodes[2], Type: "list", Kind: kind.Unknown, Size: 2, TTL: -1, Memory: ptr[int64](96), Flags: []keys.Flag{keys.FlagNoTTL}},
		{Key: "rate:user42", Node: nodes[0], Type: "string", Kind: kind.GCRA, Size: 1, TTL: msDuration(2000), Memory: ptr[int64](64), Flags: []keys.Flag{},
			FullIn: age(1500), FullAt: &fullAt},
		{Key: "jobs:export", Node: nodes[1], Type: "zset", Kind: kind.Concurrency, Size: 2, TTL: -1, Memory: ptr[int64](128), Flags: []keys.Flag{keys.FlagNoTTL},
			Scores: scores.Deadline, ScoresGuessed: true, Expired: ptr[int64](1)},
	}
	in := keys.Inspection{Keys: rows}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.Key)
		if len(r.Flags) > 0 {
			ids = append(ids, flagsCell(r.Flags))
		}
	}
	checkTableGolden(t, "inspect", in.Table(), ids...)

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
	list := keys.MemberList{Key: "limitctl:{checkout-api}:concurrency:tenant:acme-industries", Size: 23, Unit: scores.UnitMillis, Stale: 10 * time.Minute}
	for i, age := range []int64{1_860_000, 1_200_000, 5000, 12} {
		at, d := fixedNow.Add(-msDuration(age)), msDuration(age)
		list.Members = append(list.Members, keys.Member{
			Member: "req-7f3c9a2e-4b1d-4e8a-9c0f-" + strings.Repeat(string(rune('a'+i)), 12),
			Score:  float64(1748779200000 - age), Time: &at, Age: &d, Stale: age > 600_000,
		})
	}
	var ids []string
	for _, m := range list.Members {
		ids = append(ids, m.Member)
	}
	checkTableGolden(t, "inspect_members", list.Table(), ids...)

	// Without --stale nothing was judged: STALE reads -, not a "no" for a member hours old.
	list.Stale = 0
	var b bytes.Buffer
	if err := list.Table().WriteTerminal(&b, 120); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1 : len(list.Members)+1] {
		if !strings.HasSuffix(line, "  -") {
			t.Errorf("without --stale a member's STALE is not -: %q", line)
		}
	}
	if strings.Contains(b.String(), "stale") {
		t.Errorf("without --stale the totals count stale members:\n%s", b.String())
	}
}

func TestPurgeTableFits(t *testing.T) {
	res := keys.PurgeResult{TotalRemoved: 2504, Keys: []keys.PurgedKey{
		{Key: "limitctl:{checkout-api}:concurrency:tenant:acme-industries", Node: "10.0.12.101:7000", Unit: "ms", Scores: scores.Start, Removed: 3, Remaining: 20},
		{Key: "rl:sliding:user:8812734", Node: "10.0.12.103:7002", Unit: "us", Scores: scores.Start, Removed: 2500, Remaining: 2},
		{Key: "rl:odd:scores", Node: "10.0.12.102:7001", Skipped: "scores are not timestamps in any unit (give --score-unit)"},
		{Key: "jobs:export", Node: "10.0.12.102:7001", Unit: "s", Scores: scores.Deadline, Guessed: true, Removed: 1, Remaining: 1},
	}}
	var ids []string
	for _, k := range res.Keys {
		ids = append(ids, k.Key)
	}
	checkTableGolden(t, "purge", res.Table(), ids...)
	res.DryRun = true
	checkTableGolden(t, "purge_dry_run", res.Table(), ids...)
}

func TestScriptsTablesFit(t *testing.T) {
	list := scriptcache.List()
	var ids []string
	for _, s := range list.Scripts {
		ids = append(ids, s.Name, s.SHA1())
	}
	checkTableGolden(t, "scripts_list", list.Table(), ids...)

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
	first, second := list.Scripts[0], list.Scripts[1]
	checkTableGolden(t, "scripts_status", status.Table(), "10.0.12.101:7000", "10.0.12.104:7003", first.Name)
	checkTableGolden(t, "scripts_load", scriptcache.LoadReport{Loaded: []scriptcache.Loaded{
		{Name: first.Name, SHA1: first.SHA1(), Node: "10.0.12.101:7000", CachedBefore: true},
		{Name: second.Name, SHA1: second.SHA1(), Node: "10.0.12.104:7003"},
	}}.Table(), first.Name, first.SHA1(), "10.0.12.101:7000")
}

func TestLintTableFits(t *testing.T) {
	checkTableGolden(t, "lint", lint.Report{Diagnostics: []lint.Diagnostic{
		{File: "scripts/ours/concurrency_acquire_with_a_long_name.lua", Line: 12, Col: 5, Severity: "error", Rule: "undeclared-key",
			Message: "redis.call on a key built from ARGV: declare every key in KEYS so a cluster routes it"},
		{File: "fw.lua", Line: 3, Col: 1, Severity: "warning", Rule: "missing-expire", Message: "INCR without EXPIRE: the counter lives forever"},
	}}.Table(), "scripts/ours/concurrency_acquire_with_a_long_name.lua", "fw.lua")
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
