package keys

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// docExample is one ```redis block of docs/kinds.md: commands to send, the flags of the inspect
// and purge runs, and what they must report.
type docExample struct {
	line         int // where the block starts, for messages
	commands     []string
	inspectFlags map[string]string
	purgeFlags   map[string]string
	expect       map[string]map[string]string // key -> field -> want
	expectPurge  map[string]map[string]string
	expectReset  map[string]map[string]string // key -> field (deleted, with, skipped) -> want, for a dry-run reset of key
}

func readDocExamples(t *testing.T) []docExample {
	t.Helper()
	f, err := os.Open("../../docs/kinds.md")
	must(t, err)
	defer f.Close()
	var out []docExample
	var cur *docExample
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```redis":
			cur = &docExample{line: n, inspectFlags: map[string]string{}, purgeFlags: map[string]string{},
				expect: map[string]map[string]string{}, expectPurge: map[string]map[string]string{},
				expectReset: map[string]map[string]string{}}
		case cur == nil:
		case line == "```":
			out = append(out, *cur)
			cur = nil
		case strings.HasPrefix(line, "# inspect"):
			cur.inspectFlags = flagPairs(t, strings.Fields(line)[2:])
		case strings.HasPrefix(line, "# purge"):
			cur.purgeFlags = flagPairs(t, strings.Fields(line)[2:])
		case strings.HasPrefix(line, "# expect-purge "), strings.HasPrefix(line, "# expect-reset "), strings.HasPrefix(line, "# expect "):
			words := strings.Fields(line)
			fields := map[string]string{}
			for _, w := range words[3:] {
				k, v, ok := strings.Cut(w, "=")
				if !ok {
					t.Fatalf("docs/kinds.md:%d: %q is not field=value", n, w)
				}
				fields[k] = v
			}
			switch words[1] {
			case "expect-purge":
				cur.expectPurge[words[2]] = fields
			case "expect-reset":
				cur.expectReset[words[2]] = fields
			default:
				cur.expect[words[2]] = fields
			}
		case strings.HasPrefix(line, "#"):
			t.Fatalf("docs/kinds.md:%d: unknown directive %q", n, line)
		case line != "":
			cur.commands = append(cur.commands, line)
		}
	}
	must(t, sc.Err())
	return out
}

func flagPairs(t *testing.T, words []string) map[string]string {
	t.Helper()
	if len(words)%2 != 0 {
		t.Fatalf("flags %v: want --name value pairs", words)
	}
	m := map[string]string{}
	for i := 0; i < len(words); i += 2 {
		m[words[i]] = words[i+1]
	}
	return m
}

var placeholder = regexp.MustCompile(`\{(now_ms|now_sec|now_s|now_ns|rr_s|idx_(\d+))([+-][0-9.]+)?\}`)

// expand fills a line's placeholders from now.
func expand(t *testing.T, s string, now time.Time) string {
	return placeholder.ReplaceAllStringFunc(s, func(p string) string {
		m := placeholder.FindStringSubmatch(p)
		off := 0.0
		if m[3] != "" {
			var err error
			off, err = strconv.ParseFloat(m[3], 64)
			must(t, err)
		}
		switch {
		case m[1] == "now_ms":
			return strconv.FormatInt(now.UnixMilli()+int64(off), 10)
		case m[1] == "now_sec":
			return strconv.FormatInt(now.Unix()+int64(off), 10)
		case m[1] == "now_ns":
			return strconv.FormatInt(now.UnixNano()+int64(off), 10)
		case m[1] == "now_s":
			return strconv.FormatFloat(float64(now.UnixMicro())/1e6+off, 'f', 6, 64)
		case m[1] == "rr_s":
			epoch := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
			return strconv.FormatFloat(float64(now.Sub(epoch).Microseconds())/1e6+off, 'f', 6, 64)
		default:
			w, _ := strconv.ParseInt(m[2], 10, 64)
			return strconv.FormatInt(now.UnixMilli()/w+int64(off), 10)
		}
	})
}

// TestKindsDocExamples runs every example of docs/kinds.md: keys written with the commands the
// library sends, then inspect (and purge) must say what the document says.
func TestKindsDocExamples(t *testing.T) {
	examples := readDocExamples(t)
	if len(examples) < 10 {
		t.Fatalf("%d examples in docs/kinds.md, want one per layout (10 or more)", len(examples))
	}
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2})
	defer rdb.Close()
	ctx := context.Background()
	clock := ServerClock(rdb)
	for _, ex := range examples {
		t.Run(fmt.Sprintf("line%d", ex.line), func(t *testing.T) {
			now, err := clock(ctx)
			must(t, err)
			// A window index must not roll over between writing and reading.
			if strings.Contains(strings.Join(ex.commands, " "), "{idx_") {
				if r := now.UnixMilli() % 10000; r > 7000 {
					time.Sleep(time.Duration(10000-r+50) * time.Millisecond)
					now, err = clock(ctx)
					must(t, err)
				}
			}
			for _, c := range ex.commands {
				args := []any{}
				for _, w := range strings.Fields(expand(t, c, now)) {
					if strings.HasPrefix(w, `"`) { // a Go-quoted word: binary bytes as \x escapes
						var err error
						w, err = strconv.Unquote(w)
						must(t, err)
					}
					args = append(args, w)
				}
				must(t, rdb.Do(ctx, args...).Err())
			}
			opts := InspectOptions{Clock: clock}
			if v, ok := ex.inspectFlags["--stale"]; ok {
				opts.Stale, err = time.ParseDuration(v)
				must(t, err)
			}
			if v, ok := ex.inspectFlags["--limit"]; ok {
				opts.Limit, err = strconv.ParseInt(v, 10, 64)
				must(t, err)
				opts.HasLimit = true
			}
			var names []string
			for k := range ex.expect {
				names = append(names, expand(t, k, now))
			}
			sel, err := Select(ctx, rdb, names, SelectOptions{})
			must(t, err)
			in, err := Inspect(ctx, rdb, sel, opts)
			must(t, err)
			got := map[string]KeyInfo{}
			for _, k := range in.Keys {
				got[k.Key] = k
			}
			for key, fields := range ex.expect {
				key = expand(t, key, now)
				k, ok := got[key]
				if !ok {
					t.Errorf("%s: not found", key)
					continue
				}
				for f, want := range fields {
					checkField(t, key, f, expand(t, want, now), keyField(k, f, in.Now))
				}
			}
			for key, fields := range ex.expectReset {
				key = expand(t, key, now)
				rsel, err := Select(ctx, rdb, []string{key}, SelectOptions{})
				must(t, err)
				plan, err := PlanReset(ctx, rdb, rsel, ResetOptions{DryRun: true, Clock: clock})
				must(t, err)
				if len(plan.Keys) != 1 {
					t.Errorf("reset %s: %d entries, want 1", key, len(plan.Keys))
					continue
				}
				rk := plan.Keys[0]
				for f, want := range fields {
					var v string
					switch f {
					case "deleted":
						v = strconv.FormatBool(rk.Deleted)
					case "with":
						v = strings.Join(rk.With, ",")
					case "skipped":
						v = strings.ReplaceAll(rk.Skipped, " ", "_")
					default:
						t.Fatalf("unknown reset field %q", f)
					}
					checkField(t, key, "reset "+f, expand(t, want, now), v)
				}
			}
			if len(ex.expectPurge) == 0 {
				return
			}
			popts := PurgeOptions{Batch: DefaultBatch, Clock: clock}
			popts.OlderThan, err = time.ParseDuration(ex.purgeFlags["--older-than"])
			must(t, err)
			if b, ok := ex.purgeFlags["--batch"]; ok {
				popts.Batch, err = strconv.ParseInt(b, 10, 64)
				must(t, err)
			}
			res, err := Purge(ctx, rdb, sel, popts)
			must(t, err)
			for _, pk := range res.Keys {
				for f, want := range ex.expectPurge[pk.Key] {
					var v string
					switch f {
					case "removed":
						v = strconv.FormatInt(pk.Removed, 10)
					case "remaining":
						v = strconv.FormatInt(pk.Remaining, 10)
					case "scores":
						v = string(pk.Scores)
					case "skipped":
						v = strings.ReplaceAll(pk.Skipped, " ", "_")
					default:
						t.Fatalf("unknown purge field %q", f)
					}
					checkField(t, pk.Key, f, want, v)
				}
			}
		})
	}
}

// keyField is a KeyInfo field by its JSON name, as text; "" when unset.
func keyField(k KeyInfo, field string, now time.Time) string {
	ptr := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	switch field {
	case "kind":
		return string(k.Kind)
	case "size":
		return strconv.FormatInt(k.Size, 10)
	case "unit":
		return string(k.Unit)
	case "scores":
		return string(k.Scores)
	case "scores_guessed":
		return strconv.FormatBool(k.ScoresGuessed)
	case "stale":
		return strconv.FormatInt(k.Stale, 10)
	case "expired":
		return ptr(k.Expired)
	case "estimate":
		return ptr(k.Estimate)
	case "window_ms":
		return strconv.FormatInt(k.Window.Milliseconds(), 10)
	case "pair_key":
		return k.PairKey
	case "flags":
		var fs []string
		for _, f := range k.Flags {
			fs = append(fs, string(f))
		}
		return strings.Join(fs, ",")
	case "oldest_age_ms":
		if k.OldestAge == nil {
			return ""
		}
		return strconv.FormatInt(k.OldestAge.Milliseconds(), 10)
	case "full_in_ms":
		if k.FullAt == nil {
			return ""
		}
		return strconv.FormatInt(max(0, k.FullAt.Sub(now).Milliseconds()), 10)
	}
	return "unknown field " + field
}

// checkField compares got with want: a value, or lo..hi for a number.
func checkField(t *testing.T, key, field, want, got string) {
	t.Helper()
	if lo, hi, ok := strings.Cut(want, ".."); ok {
		g, err1 := strconv.ParseInt(got, 10, 64)
		l, err2 := strconv.ParseInt(lo, 10, 64)
		h, err3 := strconv.ParseInt(hi, 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || g < l || g > h {
			t.Errorf("%s: %s = %q, want %s", key, field, got, want)
		}
		return
	}
	if got != want {
		t.Errorf("%s: %s = %q, want %q", key, field, got, want)
	}
}
