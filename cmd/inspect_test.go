package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// decodeInspect parses inspect -o json, checks it has exactly the fields of its contract plus
// the ones added since (CHANGELOG; nulls included), and normalises what depends on the server and the clock: TTLs (counting
// down since the fixture was written) and memory (present, or null when memKnown is false).
func decodeInspect(t *testing.T, out string, memKnown bool) inspectDoc {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got := sortedKeys(raw); !reflect.DeepEqual(got, []string{"keys", "scanned", "schema_version"}) {
		t.Errorf("top-level fields %v", got)
	}
	var rawKeys []map[string]json.RawMessage
	if err := json.Unmarshal(raw["keys"], &rawKeys); err != nil {
		t.Fatal(err)
	}
	specFields := []string{"estimate", "expired", "flags", "full_at_ms", "full_in_ms", "key", "kind", "memory_bytes", "newest_age_ms", "node",
		"oldest_age_ms", "pair_key", "score_unit", "scores", "scores_guessed", "size", "stale", "ttl_ms", "type", "window_ms"}
	for _, k := range rawKeys {
		if got := sortedKeys(k); !reflect.DeepEqual(got, specFields) {
			t.Errorf("key fields %v, want %v", got, specFields)
		}
	}
	var got inspectDoc
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != 1 {
		t.Errorf("schema_version %d", got.SchemaVersion)
	}
	for i := range got.Keys {
		k := &got.Keys[i]
		switch {
		case k.TTLMs == -1:
		case k.TTLMs > 3540000 && k.TTLMs <= 3600000:
			k.TTLMs = 3600000
		default:
			t.Errorf("%s: ttl_ms %d, want -1 or just under an hour", k.Key, k.TTLMs)
		}
		if memKnown != (k.MemoryBytes != nil && *k.MemoryBytes > 0) {
			t.Errorf("%s: memory_bytes %v, want known=%v", k.Key, k.MemoryBytes, memKnown)
		}
		k.MemoryBytes = nil
	}
	return got
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sameKeys compares an inspection with the fixture's expectation, nodes given by node(key).
func sameKeys(t *testing.T, got []inspectKey, node func(key string) string) {
	t.Helper()
	want := wantInspect()
	for i := range want {
		want[i].Node = node(want[i].Key)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("inspect keys:\n got %s\nwant %s", g, w)
	}
}

func TestInspectIsExactInEveryFormat(t *testing.T) {
	srv := redistest.Start(t)
	seedLimiterKeys(t, srv.Client(t))
	a := []string{"--addr", srv.Addr, "inspect", "rl:*", "--stale", "10m", "--limit", "3", "--clock", "local", "--count", "3"}

	j := decodeInspect(t, at(t, append(a, "-o", "json")...).wantExit(t, ExitOK).out, true)
	if j.Scanned != 8 {
		t.Errorf("scanned %d, want 8", j.Scanned)
	}
	sameKeys(t, j.Keys, func(string) string { return srv.Addr })

	tsv := at(t, a...).wantExit(t, ExitOK)
	lines := strings.Split(strings.TrimRight(tsv.out, "\n"), "\n")
	if lines[0] != "key\tnode\ttype\tkind\tsize\tttl_ms\toldest_age_ms\tnewest_age_ms\tstale\tmemory_bytes\tflags\tdetail" {
		t.Errorf("tsv header %q", lines[0])
	}
	if len(lines) != 9 || strings.HasPrefix(lines[8], "total") {
		t.Errorf("tsv: want a header and 8 rows, no totals line (a script would read it as data):\n%s", tsv.out)
	}
	row := strings.Split(lines[2], "\t")
	row[5], row[9] = "TTL", "MEMORY" // they depend on the clock and the server
	if want := []string{"rl:conc:u1", srv.Addr, "zset", "concurrency", "4", "TTL", "1800000", "1000", "2", "MEMORY", "STALE,OVER_LIMIT", ""}; !reflect.DeepEqual(row, want) {
		t.Errorf("tsv row %q, want %q", row, want)
	}
	if tsv.errOut != "" {
		t.Errorf("stderr %q, want nothing", tsv.errOut)
	}

	table := runIn(t, runConfig{now: fixedNow, tty: true, columns: 160}, a...).wantExit(t, ExitOK)
	for _, want := range []string{"KEY", "OLDEST", "rl:conc:u1", "30m", "1s", "none", "STALE,OVER_LIMIT", "total (8 keys)", "2511 members", "2505"} {
		if !strings.Contains(table.out, want) {
			t.Errorf("table lacks %q:\n%s", want, table.out)
		}
	}
	if strings.Contains(table.out, "\x1b[") {
		t.Errorf("table holds escape codes:\n%s", table.out)
	}
	// On an 80-column terminal the same table fits, keeping each key, its size and flags.
	narrow := runIn(t, runConfig{now: fixedNow, tty: true, columns: 80}, a...).wantExit(t, ExitOK)
	for _, line := range strings.Split(strings.TrimRight(narrow.out, "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("a line of %d columns on an 80-column terminal: %q", n, line)
		}
	}
	for _, want := range []string{"rl:conc:u1", "STALE,OVER_LIMIT", "2511 members"} {
		if !strings.Contains(narrow.out, want) {
			t.Errorf("80-column table lacks %q:\n%s", want, narrow.out)
		}
	}
}

func TestInspectLiteralKeysEmptyMatchesAndBounds(t *testing.T) {
	srv := redistest.Start(t)
	seedLimiterKeys(t, srv.Client(t))
	addr := []string{"--addr", srv.Addr, "--clock", "local"}

	// A literal key is read directly; a missing one is a note, not an error.
	r := at(t, append([]string{"inspect", "rl:fw:u4", "rl:nope", "-o", "json"}, addr...)...).wantExit(t, ExitOK)
	j := decodeInspect(t, r.out, true)
	if len(j.Keys) != 1 || j.Keys[0].Key != "rl:fw:u4" || j.Scanned != 2 {
		t.Errorf("literal keys: %+v", j)
	}
	r.wantOneLineError(t, "note: no such key: rl:nope")

	// No match: an empty report, one note, exit 0.
	r = at(t, append([]string{"inspect", "other:*", "-o", "json"}, addr...)...).wantExit(t, ExitOK)
	if strings.TrimSpace(r.out) != "{\n  \"schema_version\": 1,\n  \"scanned\": 0,\n  \"keys\": []\n}" {
		t.Errorf("empty match JSON:\n%s", r.out)
	}
	r.wantOneLineError(t, "note: no key matches other:*")

	r = at(t, append([]string{"inspect", "rl:*", "--max-keys", "3"}, addr...)...).wantExit(t, ExitOK)
	if n := strings.Count(r.out, "\n"); n != 4 {
		t.Errorf("--max-keys 3 printed %d lines, want header and 3 rows:\n%s", n, r.out)
	}
	r.wantOneLineError(t, "stopped at --max-keys 3")

	r = at(t, append([]string{"inspect", "--type", "zset", "-o", "json"}, addr...)...).wantExit(t, ExitOK)
	if j := decodeInspect(t, r.out, true); len(j.Keys) != 4 {
		t.Errorf("--type zset: %d keys, want 4", len(j.Keys))
	}
}

func TestInspectMembers(t *testing.T) {
	srv := redistest.Start(t)
	seedLimiterKeys(t, srv.Client(t))
	addr := []string{"--addr", srv.Addr, "--clock", "local"}
	r := at(t, append([]string{"inspect", "--members", "rl:conc:u1", "--top", "3", "--stale", "10m", "-o", "json"}, addr...)...).wantExit(t, ExitOK)
	want := `{
  "schema_version": 1,
  "key": "rl:conc:u1",
  "node": "` + srv.Addr + `",
  "size": 4,
  "score_unit": "ms",
  "scores": "start",
  "scores_guessed": true,
  "members": [
    {
      "member": "req-4",
      "score": 1748777400000,
      "time": "2025-06-01T11:30:00.000Z",
      "age_ms": 1800000,
      "stale": true
    },
    {
      "member": "req-3",
      "score": 1748778000000,
      "time": "2025-06-01T11:40:00.000Z",
      "age_ms": 1200000,
      "stale": true
    },
    {
      "member": "req-2",
      "score": 1748779198000,
      "time": "2025-06-01T11:59:58.000Z",
      "age_ms": 2000,
      "stale": false
    }
  ]
}
`
	if r.out != want {
		t.Errorf("--members JSON:\n%s\nwant:\n%s", r.out, want)
	}
	tsv := at(t, append([]string{"inspect", "--members", "rl:sliding:u2"}, addr...)...).wantExit(t, ExitOK)
	if !strings.Contains(tsv.out, "r-2\t1748778540\t2025-06-01T11:49:00.000Z\t660000\tno\n") {
		t.Errorf("seconds scores read wrong:\n%s", tsv.out)
	}
	at(t, append([]string{"inspect", "--members", "rl:fw:u4"}, addr...)...).wantExit(t, ExitError).wantOneLineError(t, "rl:fw:u4 is a string", "not a sorted set", "inspect the key without --members")
	at(t, append([]string{"inspect", "--members", "rl:nope"}, addr...)...).wantExit(t, ExitError).wantOneLineError(t, "rl:nope: no such key")
}

// inspectReader is the smallest ACL that runs inspect on a single server: read commands,
// PING to connect, TIME for the server clock. See the comment at the top of inspect.go.
const inspectReader = "user reader on >pw ~* resetchannels -@all +@read +ping +time"

func TestInspectAsAReadOnlyACLUser(t *testing.T) {
	srv := redistest.Start(t, inspectReader,
		"user nomemory on >pw ~* resetchannels -@all +@read +ping +time -memory",
		"user notime on >pw ~* resetchannels -@all +@read +ping")
	admin := srv.Client(t)
	seedLimiterKeys(t, admin)
	ctx := context.Background()
	admin.Do(ctx, "ACL", "LOG", "RESET")

	as := func(user string, args ...string) result {
		return runEnv(t, map[string]string{"REDISCLI_AUTH": "pw"}, append([]string{"--addr", srv.Addr, "--username", user}, args...)...)
	}
	r := as("reader", "inspect", "rl:*", "--stale", "10m", "--limit", "3", "-o", "json").wantExit(t, ExitOK)
	if got := decodeInspect(t, r.out, true); len(got.Keys) != 8 {
		t.Errorf("reader saw %d keys, want 8", len(got.Keys))
	}
	as("reader", "inspect", "--members", "rl:conc:u1", "--stale", "10m").wantExit(t, ExitOK)
	// Had inspect sent anything beyond what the user may run, Redis would have refused it
	// and logged the refusal.
	if denied := aclDenials(t, admin); len(denied) != 0 {
		t.Errorf("inspect ran commands a read-only user may not: %v", denied)
	}

	// Where MEMORY USAGE is refused, memory is unknown (null), not an error.
	r = as("nomemory", "inspect", "rl:*", "--stale", "10m", "--limit", "3", "-o", "json").wantExit(t, ExitOK)
	got := decodeInspect(t, r.out, false)
	sameKeysIgnoringTime(t, got.Keys, srv.Addr)

	// Without TIME the server clock cannot be read: one line that says how to do without.
	as("notime", "inspect", "rl:*").wantExit(t, ExitError).wantOneLineError(t, "TIME", "NOPERM", "--clock local")
	as("notime", "inspect", "rl:*", "--clock", "local").wantExit(t, ExitOK)
}

// sameKeysIgnoringTime checks keys, types, kinds and sizes, for runs on the real clock.
func sameKeysIgnoringTime(t *testing.T, got []inspectKey, node string) {
	t.Helper()
	want := wantInspect()
	if len(got) != len(want) {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Key != w.Key || g.Type != w.Type || g.Size != w.Size || g.Node != node {
			t.Errorf("got %+v, want %+v on %s", g, w, node)
		}
	}
}

func TestInspectWatchWithoutATerminalPrintsAReportPerInterval(t *testing.T) {
	srv := redistest.Start(t)
	seedLimiterKeys(t, srv.Client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 350*time.Millisecond)
	defer cancel()
	r := runIn(t, runConfig{now: fixedNow, ctx: ctx}, "--addr", srv.Addr, "inspect", "rl:conc:*", "--watch", "100ms", "--clock", "local").wantExit(t, ExitInterrupted)
	if n := strings.Count(r.out, "key\tnode\ttype"); n < 2 {
		t.Errorf("%d reports in 350ms at --watch 100ms, want several:\n%s", n, r.out)
	}
	r.wantOneLineError(t, "interrupted: watch stopped")
}

func TestInspectBadInput(t *testing.T) {
	cases := map[string][]string{
		"unknown flag":          {"inspect", "--bogus"},
		"bad stale":             {"inspect", "--stale", "soon"},
		"negative stale":        {"inspect", "--stale", "-1s"},
		"zero count":            {"inspect", "--count", "0"},
		"negative max-keys":     {"inspect", "--max-keys", "-1"},
		"negative limit":        {"inspect", "--limit", "-2"},
		"unknown type":          {"inspect", "--type", "tree"},
		"unknown unit":          {"inspect", "--score-unit", "minutes"},
		"unknown scores":        {"inspect", "--scores", "expiry"},
		"unknown clock":         {"inspect", "--clock", "sundial"},
		"members and args":      {"inspect", "--members", "rl:a", "rl:b"},
		"members pattern":       {"inspect", "--members", "rl:*"},
		"empty members":         {"inspect", "--members", ""},
		"top without members":   {"inspect", "--top", "5"},
		"negative top":          {"inspect", "--members", "rl:a", "--top", "-1"},
		"watch too fast":        {"inspect", "--watch", "1ms"},
		"watch is not a number": {"inspect", "--watch", "often"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			// No server at this address: bad input is refused before connecting.
			run(t, append([]string{"--addr", "127.0.0.1:1"}, args...)...).wantExit(t, ExitUsage).wantOneLineError(t, "limitctl:", "inspect --help")
		})
	}
}

// clusterNode returns a function naming the master of a key on a cluster.
func clusterNode(t *testing.T, cc *redis.ClusterClient) func(string) string {
	return func(key string) string {
		n, err := cc.MasterForKey(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		return n.Options().Addr
	}
}

// aclDenials lists the commands Redis refused (ACL LOG), but INFO: a server that does not
// answer HELLO is asked INFO whether it is a cluster node, and without it is taken as a single node.
func aclDenials(t *testing.T, admin *redis.Client) []string {
	t.Helper()
	entries, err := admin.Do(context.Background(), "ACL", "LOG").Slice()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		entry := map[string]any{}
		switch v := e.(type) {
		case []any: // RESP2: name, value, name, value...
			for i := 0; i+1 < len(v); i += 2 {
				name, _ := v[i].(string)
				entry[name] = v[i+1]
			}
		case map[any]any: // RESP3
			for name, value := range v {
				entry[fmt.Sprint(name)] = value
			}
		}
		if obj, _ := entry["object"].(string); obj != "info" {
			out = append(out, fmt.Sprintf("%v %v by %v", entry["reason"], obj, entry["username"]))
		}
	}
	return out
}

// q in inspect --watch means what it means in the hammer's dashboard: stop and leave the last
// view on the normal screen. Nothing was cut short, so the exit code is 0; Ctrl-C is 130.
func TestInspectWatchInARealTerminalQuitsOnQ(t *testing.T) {
	srv := redistest.Start(t)
	seedLimiterKeys(t, srv.Client(t))
	for _, c := range []struct {
		key, exit string
	}{{"q", "EXIT=0"}, {"C-c", "EXIT=130"}} {
		t.Run(c.key, func(t *testing.T) {
			m := shell(t, 200, 30, binary(t)+" --addr "+srv.Addr+" inspect 'rl:*' --watch 1s")
			m.WaitForText(15*time.Second, "Every 1s: limitctl inspect rl:*", "rl:conc:u1", "(q quit)")
			m.Keys(c.key)
			after := m.WaitForText(10*time.Second, c.exit, "rl:conc:u1", "total (8 keys)")
			if strings.Contains(after, "(q quit)") {
				t.Errorf("the live view is still on screen after %s:\n%s", c.key, after)
			}
		})
	}
}

// Keys in other libraries' layouts, through the command: the added JSON fields, the detail
// column, and the note that says a set was read as deadlines.
func TestInspectOtherLibrariesKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	sec := func(d time.Duration) float64 { return float64(fixedNow.Add(d).UnixMicro()) / 1e6 }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(rdb.ZAdd(ctx, "jobs:export", redis.Z{Score: sec(15 * time.Minute), Member: "b4a577edbccf1d80"},
		redis.Z{Score: sec(10 * time.Minute), Member: "0c1d2e3f40516273"}, redis.Z{Score: sec(-20 * time.Minute), Member: "11aa22bb33cc44dd"}).Err())
	must(rdb.Expire(ctx, "jobs:export", 15*time.Minute).Err())
	epoch2017 := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
	must(rdb.Set(ctx, "rate:user42", strconv.FormatFloat(fixedNow.Add(1500*time.Millisecond).Sub(epoch2017).Seconds(), 'f', 6, 64), 2*time.Second).Err())
	idx := fixedNow.UnixMilli() / 10000 // fixedNow is on a window boundary: the previous window counts whole
	must(rdb.Set(ctx, "up:u1:"+strconv.FormatInt(idx-1, 10), 6, 21*time.Second).Err())
	must(rdb.Set(ctx, "up:u1:"+strconv.FormatInt(idx, 10), 2, 21*time.Second).Err())

	a := []string{"--addr", srv.Addr, "inspect", "jobs:*", "rate:*", "up:*", "--clock", "local", "--stale", "5m", "--limit", "7"}
	r := at(t, append(a, "-o", "json")...).wantExit(t, ExitOK)
	var got inspectDoc // TTLs as the libraries set them: not decodeInspect's fixture of an hour
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.out)
	}
	byKey := map[string]inspectKey{}
	for _, k := range got.Keys {
		byKey[k.Key] = k
	}
	show := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return strconv.FormatInt(*p, 10)
	}
	j := byKey["jobs:export"]
	if j.Kind != "concurrency" || j.Scores == nil || *j.Scores != "deadline" || !j.ScoresGuessed || show(j.Expired) != "1" || j.Stale != 1 {
		t.Errorf("jobs:export: %+v, want a concurrency set of guessed deadlines, 1 expired, 1 stale", j)
	}
	g := byKey["rate:user42"]
	if g.Kind != "gcra" || show(g.FullInMs) != "1500" || show(g.FullAtMs) != strconv.FormatInt(fixedNow.Add(1500*time.Millisecond).UnixMilli(), 10) {
		t.Errorf("rate:user42: kind %s full_in_ms %s full_at_ms %s, want gcra full in 1500ms", g.Kind, show(g.FullInMs), show(g.FullAtMs))
	}
	cur := byKey["up:u1:"+strconv.FormatInt(idx, 10)]
	if cur.Kind != "sliding_counter" || show(cur.Estimate) != "8" || show(cur.WindowMs) != "10000" || cur.PairKey == nil ||
		*cur.PairKey != "up:u1:"+strconv.FormatInt(idx-1, 10) || strings.Join(cur.Flags, ",") != "OVER_LIMIT" {
		t.Errorf("current window: %+v, want a sliding_counter, estimate 8 = 2 + 6 over the limit 7, window 10000", cur)
	}
	r.wantOneLineError(t, "note: jobs:export read as deadlines: most of its scores lie in the future (--scores auto")

	table := runIn(t, runConfig{now: fixedNow, tty: true, columns: 200}, a...).wantExit(t, ExitOK)
	for _, want := range []string{"DETAIL", "deadlines (guessed), 1 expired", "full in 1.5s", "estimate 8, 10s window, with up:u1:"} {
		if !strings.Contains(table.out, want) {
			t.Errorf("table lacks %q:\n%s", want, table.out)
		}
	}
	// Told it is start times, the set is read so, and no note is printed.
	r = at(t, "--addr", srv.Addr, "inspect", "jobs:export", "--clock", "local", "--scores", "start", "-o", "json").wantExit(t, ExitOK)
	var start inspectDoc
	if err := json.Unmarshal([]byte(r.out), &start); err != nil || len(start.Keys) != 1 {
		t.Fatalf("not JSON of one key: %v\n%s", err, r.out)
	}
	if j := start.Keys[0]; j.Scores == nil || *j.Scores != "start" || j.ScoresGuessed || j.Expired != nil || r.errOut != "" {
		t.Errorf("--scores start: %+v, stderr %q", j, r.errOut)
	}
}
