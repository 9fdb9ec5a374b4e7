package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/limiter"
)

func writeReport(t *testing.T, d Data) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// element is what the structure checks need of a parsed element.
type element struct {
	name  string
	attrs map[string]string
	text  string // the text directly and indirectly inside it, for small elements
	svg   bool   // it contains an <svg>
}

// parse reads the page as XML: the report is written well-formed, so a strict XML parse is
// a stronger check than an HTML parser's error recovery. It returns the elements by id.
func parse(t *testing.T, page string) (byID map[string]*element, all []*element) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict = true
	dec.Entity = map[string]string{}
	byID = map[string]*element{}
	var stack []*element
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			el := &element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				name := a.Name.Local
				if a.Name.Space != "" {
					name = a.Name.Space + ":" + name
				}
				el.attrs[name] = a.Value
			}
			if id := el.attrs["id"]; id != "" {
				if byID[id] != nil {
					t.Errorf("duplicate id %q", id)
				}
				byID[id] = el
			}
			if el.name == "svg" {
				for _, open := range stack {
					open.svg = true
				}
			}
			stack = append(stack, el)
			all = append(all, el)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].name != tok.Name.Local {
				t.Fatalf("unbalanced </%s>", tok.Name.Local)
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			for _, open := range stack {
				if len(open.text) < 4000 {
					open.text += string(tok)
				}
			}
		}
	}
	if len(stack) != 0 {
		t.Fatalf("%d elements left open", len(stack))
	}
	return byID, all
}

func TestReportStructure(t *testing.T) {
	d := fixtureData()
	page := writeReport(t, d)
	if !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Error("no doctype")
	}
	byID, _ := parse(t, page)

	for _, id := range []string{"chart-overview", "chart-naive", "chart-lua", "throughput-naive",
		"throughput-lua", "latency-naive", "latency-lua"} {
		el := byID[id]
		if el == nil {
			t.Errorf("no element #%s", id)
			continue
		}
		if !el.svg {
			t.Errorf("#%s holds no chart", id)
		}
	}
	for _, name := range []string{"naive", "lua"} {
		if byID["strategy-"+name] == nil {
			t.Errorf("no section for %s", name)
		}
	}

	// The summary table carries the summary's numbers.
	rows := map[string][]string{
		"row-naive": {"naive", "73,410", "45,120", "27,990", "300", "28", "8", "(49×)", "7,341", "1.23ms", "4.87ms", "9.45ms", "23.0ms", "n/a"},
		"row-lua":   {"lua", "58,120", "35,900", "22,220", "20", "5,812", "1.22ms", "4.33ms", "10.3ms", "19.0ms", "6.4"},
	}
	for id, values := range rows {
		row := byID[id]
		if row == nil {
			t.Errorf("no summary row #%s", id)
			continue
		}
		for _, v := range values {
			if !strings.Contains(row.text, v) {
				t.Errorf("#%s lacks %q: %q", id, v, row.text)
			}
		}
	}
	if p := byID["percentiles-naive"]; p == nil || !strings.Contains(p.text, "2.60ms") {
		t.Error("naive's percentile table lacks p90 2.60ms")
	}
	assertions := byID["assertions"]
	if assertions == nil {
		t.Fatal("no assertions list")
	}
	for _, want := range []string{"PASS", "lua.overshoot==0", "FAIL", "lua.p99<4ms", "4.33ms"} {
		if !strings.Contains(assertions.text, want) {
			t.Errorf("assertions lack %q", want)
		}
	}
	if !strings.Contains(byID["strategy-naive"].text, "exceeded the limit: peak 28") ||
		!strings.Contains(byID["strategy-lua"].text, "held the limit exactly: peak 20") {
		t.Error("verdicts missing")
	}
}

// The file must open offline: nothing it refers to may live on a network.
func TestReportLoadsNothing(t *testing.T) {
	page := writeReport(t, fixtureData())
	_, all := parse(t, page)
	for _, el := range all {
		switch el.name {
		case "script", "link", "iframe", "img", "object", "embed", "image", "use", "audio", "video", "source":
			t.Errorf("<%s> in a self-contained report", el.name)
		}
		for name, value := range el.attrs {
			if strings.HasPrefix(name, "xmlns") {
				continue // a namespace name, never fetched
			}
			v := strings.ToLower(value)
			if strings.Contains(v, "http://") || strings.Contains(v, "https://") || strings.HasPrefix(v, "//") {
				t.Errorf("<%s %s=%q> points at the network", el.name, name, value)
			}
		}
	}
	lower := strings.ToLower(page)
	for _, bad := range []string{"@import", "url(", "@font-face", "<script"} {
		if strings.Contains(lower, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if n := len(regexp.MustCompile(`(?i)https?://`).FindAllString(page, -1)); n != strings.Count(page, "xmlns=\"http://www.w3.org/2000/svg\"")+strings.Count(page, "xmlns:xlink=\"http://www.w3.org/1999/xlink\"") {
		t.Errorf("%d http(s) references beyond SVG namespace names", n)
	}
}

func TestReportWithoutSeries(t *testing.T) {
	d := fixtureData()
	d.Series = nil
	d.Assertions = nil
	byID, _ := parse(t, writeReport(t, d))
	for _, id := range []string{"chart-naive", "chart-lua", "summary-table", "row-naive"} {
		if byID[id] == nil {
			t.Errorf("no #%s", id)
		}
	}
	if byID["chart-naive"].svg || !strings.Contains(byID["chart-naive"].text, "Not enough samples") {
		t.Error("a strategy without points should say so instead of charting")
	}
	if byID["chart-overview"] != nil {
		t.Error("overview chart without any points")
	}
	if byID["assertions"] != nil {
		t.Error("assertions list without assertions")
	}
}

// The page judges as the summary does: a strategy that never reached its limit proved nothing,
// one whose decisions mostly failed is not judged, and the first error messages are shown.
func TestReportSaysNoEvidenceAndShowsErrors(t *testing.T) {
	d := fixtureData()
	lua := &d.Summary.Strategies[1]
	lua.Contended = false
	lua.Peak = 7
	byID, _ := parse(t, writeReport(t, d))
	sec := byID["strategy-lua"]
	if sec == nil || sec.attrs["class"] != "warn" || !strings.Contains(sec.text, "no evidence: peak 7 of 20") ||
		strings.Contains(sec.text, "held the limit") {
		t.Fatalf("a never-contended strategy must read 'no evidence', not 'held': %+v", sec)
	}

	lua.Contended = true
	lua.Errors = lua.Attempts / 2
	lua.ErrorsByKind = map[string]int64{"script": lua.Errors}
	lua.ErrorSamples = []bench.ErrorSample{{Message: "ERR wrong number of arguments for 'zadd' command", Count: lua.Errors}}
	byID, _ = parse(t, writeReport(t, d))
	sec = byID["strategy-lua"]
	if sec.attrs["class"] != "warn" || !strings.Contains(sec.text, "not judged, too many errors") {
		t.Errorf("half the decisions failed, yet the section reads %q", sec.text)
	}
	if e := byID["errors-lua"]; e == nil || !strings.Contains(e.text, "wrong number of arguments for 'zadd'") {
		t.Error("the first error message is not on the page")
	}
	if byID["errors-naive"] != nil {
		t.Error("an error list for a strategy without errors")
	}
}

func TestReportOneStrategyHasNoOverview(t *testing.T) {
	d := fixtureData()
	d.Summary.Strategies = d.Summary.Strategies[1:]
	byID, _ := parse(t, writeReport(t, d))
	if byID["chart-overview"] != nil {
		t.Error("overview with one strategy")
	}
	if byID["chart-lua"] == nil || !byID["chart-lua"].svg {
		t.Error("no chart for lua")
	}
}

// Names come from the command line (a custom script's strategy, say): they must not break out.
func TestReportEscapesNames(t *testing.T) {
	d := fixtureData()
	evil := `<script>alert("x")</script> & co`
	d.Summary.Strategies[0].Name = evil
	d.Series[0].Name = evil
	d.Summary.Target.Addr = `"><em>pwned</em>`
	page := writeReport(t, d)
	if strings.Contains(page, "<script>") || strings.Contains(page, "<em>pwned") {
		t.Fatal("a name reached the page unescaped")
	}
	byID, _ := parse(t, page)
	found := false
	for id, el := range byID {
		if strings.HasPrefix(id, "chart-") && id != "chart-overview" && id != "chart-lua" {
			found = found || el.svg
		}
	}
	if !found {
		t.Error("the oddly named strategy lost its chart")
	}
}

func TestUniqueIDs(t *testing.T) {
	seen := map[string]bool{}
	got := []string{uniqueID("lua", seen), uniqueID("LUA", seen), uniqueID("lua-ts-member", seen), uniqueID("my script!", seen), uniqueID("", seen)}
	want := []string{"lua", "lua-2", "lua-ts-member", "my-script-", "strategy"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("uniqueID #%d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestWriteReportsWriterErrors(t *testing.T) {
	if err := Write(failingWriter{}, fixtureData()); err == nil {
		t.Fatal("no error from a failing writer")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A strategy that refused with room gets its count in the table, its badge and verdict, and a
// chart of the false rejects over time; one whose refusals were not judged says so, no chart.
func TestReportShowsFalseRejects(t *testing.T) {
	snaps := fixtureSnapshots(100)
	rec := NewRecorder(0)
	for i := range snaps {
		lua := &snaps[i].Strategies[1]
		lua.FalseRejects = int64(max(0, i-30) * 12) // from 3s on
		snaps[i].Strategies[0].RefusalsUnjudged, snaps[i].Strategies[0].NoRefusalJudged = bench.RefusalsShared, true
		rec.Add(snaps[i])
	}
	last := snaps[len(snaps)-1]
	lua := last.Strategies[1]
	lua.Tightest = &refusal.FalseReject{HeldOrAdmitted: 4, Limit: fixtureLimit}
	d := Data{Summary: bench.Summary{Limiter: limiter.Concurrency, Limit: fixtureLimit, Duration: 10 * time.Second,
		Strategies: []bench.StrategySnapshot{last.Strategies[0], lua}}, Series: rec.Series()}
	page := writeReport(t, d)
	byID, _ := parse(t, page)
	if el := byID["refusals-lua"]; el == nil || !el.svg {
		t.Fatal("no false-reject chart for lua")
	}
	if i := strings.Index(page, `id="refusals-lua"`); !strings.Contains(page[i:i+strings.Index(page[i:], "</svg>")], "rgba(220,38,38") {
		t.Error("lua's false rejects are not drawn in red")
	}
	if byID["refusals-naive"] != nil {
		t.Error("a chart of refusals that were not judged")
	}
	if row := byID["row-lua"]; row == nil || !strings.Contains(row.text, "828") {
		t.Errorf("lua's row lacks its 828 false rejects: %+v", row)
	}
	if row := byID["row-naive"]; row == nil || !strings.Contains(row.text, "n/a") {
		t.Errorf("naive's row does not say its refusals were not judged: %+v", row)
	}
	section := byID["strategy-lua"]
	if section == nil || !strings.Contains(section.text, verdict.TooStrict) || !strings.Contains(section.text, "refused with room: refused 828 while at most 4 of 20 were held") {
		t.Errorf("lua's verdict: %+v", section)
	}
	if s := byID["strategy-naive"]; s == nil || !strings.Contains(s.text, "Refusals not judged") {
		t.Errorf("naive's section does not say its refusals were not judged")
	}
}

// Red means a wrong answer (an overshoot, or a refusal proven wrong) and nothing else: a run
// without one has no red anywhere (no strategy line, no latency line, no errors badge, no
// failed latency assertion, no flat zero of false rejects), and the one that overshot is red in
// its section and its count chart only.
func TestRedMeansOvershootOnly(t *testing.T) {
	reds := []string{"rgba(220,38,38", "rgba(219,39,119", `class="bad"`, `badge bad`}
	hasRed := func(s string) bool {
		for _, r := range reds {
			if strings.Contains(s, r) {
				return true
			}
		}
		return false
	}
	d := fixtureData()
	page := writeReport(t, d)
	part := func(id, end string) string { // the element with this id, up to its end tag
		i := strings.Index(page, `id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no %s on the page", id)
		}
		return page[i : i+strings.Index(page[i:], end)]
	}
	if !hasRed(part("strategy-naive", "</section>")) {
		t.Fatal("naive overshot, yet its section has no red: the checks below would prove nothing")
	}
	for _, id := range []string{"latency-naive", "latency-lua", "throughput-naive"} {
		if hasRed(part(id, "</svg>")) {
			t.Errorf("%s is drawn in red, though red means overshoot", id)
		}
	}
	if hasRed(part("strategy-lua", "</section>")) {
		t.Error("lua's section is red, though it held")
	}

	// Without naive: errors on lua and a failed latency assertion, and not one red.
	lua := d.Summary.Strategies[1]
	lua.Errors, lua.ErrorsByKind = lua.Attempts/2, map[string]int64{"timeout": lua.Attempts / 2}
	d.Summary.Strategies = []bench.StrategySnapshot{lua}
	d.Series = d.Series[1:]
	d.Assertions = []Assertion{{Expr: "lua.p99<4ms", Passed: false, Actual: "4.33ms"}}
	if page := writeReport(t, d); hasRed(page[strings.Index(page, "</style>"):]) {
		t.Errorf("red on a page without overshoot")
	}
}

// A strategy that left keys behind says so in its badge and verdict, with the key as evidence,
// in red beside its limit's word.
func TestReportShowsLeaks(t *testing.T) {
	snaps := fixtureSnapshots(100)
	rec := NewRecorder(0)
	for i := range snaps {
		rec.Add(snaps[i])
	}
	last := snaps[len(snaps)-1]
	lua := last.Strategies[1]
	lua.Leaks = &bench.Leaks{KeysWithoutTTL: 2, Samples: []bench.KeyState{{Key: "rl:{r}:lua:exp", Type: "string", Size: 1, TTLMs: -1}}}
	d := Data{Summary: bench.Summary{Limiter: limiter.Concurrency, Limit: fixtureLimit, Duration: 10 * time.Second,
		Strategies: []bench.StrategySnapshot{last.Strategies[0], lua}}, Series: rec.Series()}
	page := writeReport(t, d)
	byID, _ := parse(t, page)
	section := byID["strategy-lua"]
	if section == nil || !strings.Contains(section.text, verdict.Leaks) ||
		!strings.Contains(section.text, "left keys behind: left 2 keys without a TTL (rl:{r}:lua:exp: string of 1, no TTL)") {
		t.Errorf("lua's verdict: %+v", section)
	}
	i := strings.Index(page, `id="strategy-lua"`)
	if i < 0 || !strings.Contains(page[i:], "badge bad") {
		t.Error("lua's leaks are not red")
	}
}
