package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/limitctl/limitctl/internal/keys"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/scripts"
)

const tablesGoldenDir = "../testdata/tables"

// goldenWidths are the terminals every table is pinned at: the default 80x24 and a wide one.
var goldenWidths = []int{80, 120}

// checkTableGolden prints table as on a terminal of each golden width, checks that every
// identifier (a key, a SHA1, a flag word) shows whole and that no line is wider than the
// terminal unless an identifier makes it so, and compares with
// testdata/tables/<name>_<width>.golden (-update rewrites).
func checkTableGolden(t *testing.T, name string, table tabular, identifiers ...string) {
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
		checkGolden(t, filepath.Join(tablesGoldenDir, name+"_"+itoa64(int64(width))+".golden"), b.String())
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

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs (go test ./cmd -run %s -update rewrites it)\ngot:\n%s\nwant:\n%s", path, t.Name(), got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// A cluster's inspection: long keys on three nodes, every kind, stale members and flags.
func TestInspectTableFits(t *testing.T) {
	nodes := []string{"10.0.12.101:7000", "10.0.12.102:7001", "10.0.12.103:7002"}
	rows := []inspectKeyJSON{
		{Key: "limitctl:{checkout-api}:concurrency:tenant:acme-industries", Node: nodes[0], Type: "zset", Kind: "concurrency", Size: 23, TTLMs: 600000,
			OldestAgeMs: ptr[int64](1_860_000), NewestAgeMs: ptr[int64](12), Stale: 3, MemoryBytes: ptr[int64](2311), Flags: []string{"STALE", "OVER_LIMIT"}},
		{Key: "limitctl:{checkout-api}:concurrency:tenant:globex", Node: nodes[1], Type: "zset", Kind: "concurrency", Size: 4, TTLMs: 600000,
			OldestAgeMs: ptr[int64](950), NewestAgeMs: ptr[int64](40), MemoryBytes: ptr[int64](412), Flags: []string{}},
		{Key: "rl:sliding:user:8812734", Node: nodes[2], Type: "zset", Kind: "window_log", Size: 2502, TTLMs: -1,
			OldestAgeMs: ptr[int64](662_000), NewestAgeMs: ptr[int64](1000), Stale: 2500, MemoryBytes: ptr[int64](190_442), Flags: []string{"NO_TTL", "STALE", "OVER_LIMIT"}},
		{Key: "rl:fw:user:8812734:29114400", Node: nodes[0], Type: "string", Kind: "counter", Size: 5, TTLMs: 42_300, MemoryBytes: ptr[int64](72), Flags: []string{}},
		{Key: "rl:tb:user:8812734", Node: nodes[1], Type: "hash", Kind: "bucket", Size: 7, TTLMs: 3_600_000, OldestAgeMs: ptr[int64](3000), NewestAgeMs: ptr[int64](3000), Flags: []string{}},
		{Key: "rl:junk", Node: nodes[2], Type: "list", Kind: "unknown", Size: 2, TTLMs: -1, MemoryBytes: ptr[int64](96), Flags: []string{"NO_TTL"}},
		{Key: "rate:user42", Node: nodes[0], Type: "string", Kind: "gcra", Size: 1, TTLMs: 2000, MemoryBytes: ptr[int64](64), Flags: []string{},
			FullInMs: ptr[int64](1500), FullAtMs: ptr[int64](1748779201500)},
		{Key: "jobs:export", Node: nodes[1], Type: "zset", Kind: "concurrency", Size: 2, TTLMs: -1, MemoryBytes: ptr[int64](128), Flags: []string{"NO_TTL"},
			Scores: ptr("deadline"), ScoresGuessed: true, Expired: ptr[int64](1)},
	}
	tot := keys.Totals{Keys: len(rows), Members: 23 + 4 + 2502 + 2, Stale: 2503, Memory: 2311 + 412 + 190_442 + 72 + 96, MemoryUnknown: 1}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.Key)
		if len(r.Flags) > 0 {
			ids = append(ids, strings.Join(r.Flags, ","))
		}
	}
	checkTableGolden(t, "inspect", inspectTable(rows, tot), ids...)

	// Without --stale no key has stale members: the column of zeros gives its room to others.
	for i := range rows {
		rows[i].Stale = 0
	}
	tot.Stale = 0
	var b bytes.Buffer
	if err := inspectTable(rows, tot).WriteTerminal(&b, 120); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "STALE  ") {
		t.Errorf("a column of zero stale members shows:\n%s", b.String())
	}
}

func TestInspectMembersTableFits(t *testing.T) {
	list := membersJSON{Key: "limitctl:{checkout-api}:concurrency:tenant:acme-industries", Size: 23, ScoreUnit: ptr("ms"), staleGiven: true}
	for i, age := range []int64{1_860_000, 1_200_000, 5000, 12} {
		list.Members = append(list.Members, memberJSON{
			Member: "req-7f3c9a2e-4b1d-4e8a-9c0f-" + strings.Repeat(string(rune('a'+i)), 12),
			Score:  float64(1748779200000 - age), Time: ptr(fixedNow.Add(-msDuration(age)).Format("2006-01-02T15:04:05.000Z07:00")),
			AgeMs: ptr(age), Stale: age > 600_000,
		})
	}
	var ids []string
	for _, m := range list.Members {
		ids = append(ids, m.Member)
	}
	checkTableGolden(t, "inspect_members", membersTable(list), ids...)

	// Without --stale nothing was judged: STALE reads -, not a "no" for a member hours old.
	list.staleGiven = false
	var b bytes.Buffer
	if err := membersTable(list).WriteTerminal(&b, 120); err != nil {
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
		{Key: "limitctl:{checkout-api}:concurrency:tenant:acme-industries", Node: "10.0.12.101:7000", Unit: "ms", Scores: keys.ScoresStart, Removed: 3, Remaining: 20},
		{Key: "rl:sliding:user:8812734", Node: "10.0.12.103:7002", Unit: "us", Scores: keys.ScoresStart, Removed: 2500, Remaining: 2},
		{Key: "rl:odd:scores", Node: "10.0.12.102:7001", Skipped: "scores are not timestamps in any unit (give --score-unit)"},
		{Key: "jobs:export", Node: "10.0.12.102:7001", Unit: "s", Scores: keys.ScoresDeadline, Guessed: true, Removed: 1, Remaining: 1},
	}}
	var ids []string
	for _, k := range res.Keys {
		ids = append(ids, k.Key)
	}
	checkTableGolden(t, "purge", purgeTable(res, false), ids...)
	checkTableGolden(t, "purge_dry_run", purgeTable(res, true), ids...)
}

func TestScriptsTablesFit(t *testing.T) {
	var list []scriptJSON
	for _, s := range scripts.All() {
		list = append(list, scriptJSON{Name: s.Name, SHA1: s.SHA1(), Keys: s.Keys, Args: s.Args, Description: s.Description})
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.Name, s.SHA1)
	}
	checkTableGolden(t, "scripts_list", scriptsListTable(list), ids...)

	var nodes []scriptcache.NodeStatus
	missing := 0
	for i, n := range []struct{ addr, role string }{{"10.0.12.101:7000", "master"}, {"10.0.12.104:7003", "replica"}} {
		node := scriptcache.NodeStatus{Node: n.addr, Role: n.role}
		for j, s := range list[:3] {
			cached := i == 0 || j != 1
			if !cached {
				missing++
			}
			node.Scripts = append(node.Scripts, scriptcache.ScriptStatus{Name: s.Name, SHA1: s.SHA1, Cached: cached})
		}
		nodes = append(nodes, node)
	}
	checkTableGolden(t, "scripts_status", scriptsStatusTable(nodes, missing), "10.0.12.101:7000", "10.0.12.104:7003", list[0].Name)
	checkTableGolden(t, "scripts_load", scriptsLoadTable([]scriptcache.Loaded{
		{Name: list[0].Name, SHA1: list[0].SHA1, Node: "10.0.12.101:7000", CachedBefore: true},
		{Name: list[1].Name, SHA1: list[1].SHA1, Node: "10.0.12.104:7003"},
	}), list[0].Name, list[0].SHA1, "10.0.12.101:7000")
}

func TestLintTableFits(t *testing.T) {
	checkTableGolden(t, "lint", lintTable([]lint.Diagnostic{
		{File: "scripts/ours/concurrency_acquire_with_a_long_name.lua", Line: 12, Col: 5, Severity: "error", Rule: "undeclared-key",
			Message: "redis.call on a key built from ARGV: declare every key in KEYS so a cluster routes it"},
		{File: "fw.lua", Line: 3, Col: 1, Severity: "warning", Rule: "missing-expire", Message: "INCR without EXPIRE: the counter lives forever"},
	}), "scripts/ours/concurrency_acquire_with_a_long_name.lua", "fw.lua")
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
