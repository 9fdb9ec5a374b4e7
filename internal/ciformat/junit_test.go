package ciformat

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/lint"
)

// jenkinsSchema is the JUnit schema Jenkins reads (its xunit plugin's junit-10.xsd), as the
// elements each element may hold and the attributes it must and may carry. GitLab reads the same
// testsuites/testsuite/testcase/failure tree. Text content is allowed where the schema is mixed.
var jenkinsSchema = map[string]struct {
	children, required, optional []string
}{
	"testsuites": {children: []string{"testsuite"}, optional: []string{"name", "time", "tests", "failures", "errors", "skipped", "disabled"}},
	"testsuite": {children: []string{"testsuite", "properties", "testcase", "system-out", "system-err"},
		required: []string{"name", "tests", "failures", "errors"},
		optional: []string{"group", "time", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url"}},
	"properties": {children: []string{"property"}},
	"property":   {required: []string{"name", "value"}},
	"testcase": {children: []string{"skipped", "error", "failure", "system-out", "system-err"},
		required: []string{"name"}, optional: []string{"time", "classname", "group", "file"}},
	"failure":    {optional: []string{"type", "message"}},
	"error":      {optional: []string{"type", "message"}},
	"skipped":    {optional: []string{"type", "message"}},
	"system-out": {},
	"system-err": {},
}

// surefireTime is the schema's SUREFIRE_TIME: seconds, digits with an optional fraction.
var surefireTime = regexp.MustCompile(`^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$`)

// checkSchema walks doc with encoding/xml's parser and fails on anything the schema refuses: an
// unknown element or one in the wrong place, a missing or unknown attribute, a time that is not
// seconds, a count that is not a number.
func checkSchema(t *testing.T, doc []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var stack []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			name := tok.Name.Local
			rule, known := jenkinsSchema[name]
			switch {
			case !known:
				t.Errorf("element <%s> is not in the schema", name)
			case len(stack) == 0 && name != "testsuites":
				t.Errorf("root <%s>, want <testsuites>", name)
			case len(stack) > 0 && !slices.Contains(jenkinsSchema[stack[len(stack)-1]].children, name):
				t.Errorf("<%s> inside <%s>", name, stack[len(stack)-1])
			}
			have := map[string]string{}
			for _, a := range tok.Attr {
				have[a.Name.Local] = a.Value
				if !slices.Contains(rule.required, a.Name.Local) && !slices.Contains(rule.optional, a.Name.Local) {
					t.Errorf("<%s %s=...> is not in the schema", name, a.Name.Local)
				}
			}
			for _, r := range rule.required {
				if _, ok := have[r]; !ok {
					t.Errorf("<%s> lacks %s", name, r)
				}
			}
			if v, ok := have["time"]; ok && !surefireTime.MatchString(v) {
				t.Errorf("<%s time=%q> is not seconds", name, v)
			}
			for _, count := range []string{"tests", "failures", "errors", "skipped"} {
				if v, ok := have[count]; ok && name != "testcase" {
					if _, err := strconv.Atoi(v); err != nil {
						t.Errorf("<%s %s=%q> is not a number", name, count, v)
					}
				}
			}
			stack = append(stack, name)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && len(jenkinsSchema[stack[len(stack)-1]].children) > 0 && strings.TrimSpace(string(tok)) != "" {
				t.Errorf("text %q inside <%s>", tok, stack[len(stack)-1])
			}
		}
	}
}

// parsed is a JUnit document as a reader sees it.
type parsed struct {
	counts
	Time   string `xml:"time,attr"`
	Suites []struct {
		counts
		Name       string `xml:"name,attr"`
		Time       string `xml:"time,attr"`
		Timestamp  string `xml:"timestamp,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Classname string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Time      string `xml:"time,attr"`
			File      string `xml:"file,attr"`
			Failures  []struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Errors []struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

type counts struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
}

// parseJUnit checks doc against the schema, parses it, and checks its counts add up: every test
// case is exactly one of passed, failed, errored or skipped, each suite counts its own, and
// <testsuites> their sum; times are seconds.
func parseJUnit(t *testing.T, doc []byte) parsed {
	t.Helper()
	checkSchema(t, doc)
	var p parsed
	if err := xml.Unmarshal(doc, &p); err != nil {
		t.Fatalf("parse: %v\n%s", err, doc)
	}
	total := [4]int{}
	for _, s := range p.Suites {
		var n [4]int // failures, errors, skipped, passed
		for _, c := range s.Cases {
			switch {
			case len(c.Errors) > 0:
				n[1]++
			case len(c.Failures) > 0:
				n[0]++
			case c.Skipped != nil:
				n[2]++
			default:
				n[3]++
			}
			if _, err := strconv.ParseFloat(c.Time, 64); err != nil {
				t.Errorf("test case %s time %q: %v", c.Name, c.Time, err)
			}
		}
		if s.Tests != len(s.Cases) || s.Failures != n[0] || s.Errors != n[1] || s.Skipped != n[2] || n[0]+n[1]+n[2]+n[3] != s.Tests {
			t.Errorf("suite %s counts tests=%d failures=%d errors=%d skipped=%d, cases say %d %v", s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), n)
		}
		total[0], total[1], total[2], total[3] = total[0]+s.Tests, total[1]+s.Failures, total[2]+s.Errors, total[3]+s.Skipped
	}
	if p.Tests != total[0] || p.Failures != total[1] || p.Errors != total[2] || p.Skipped != total[3] {
		t.Errorf("testsuites counts %d %d %d %d, suites sum to %v", p.Tests, p.Failures, p.Errors, p.Skipped, total)
	}
	return p
}

func TestLintJUnitIsATestCasePerFileAndAFailurePerError(t *testing.T) {
	wd := t.TempDir()
	twoErrors := "total = redis.call('GET', ARGV[1])\nreturn total\n" // global-write, undeclared-key
	warning := "redis.call('INCR', KEYS[1])\nreturn 1\n"              // missing-expire
	r := lintRunOf(t, wd, [2]string{"a.lua", twoErrors}, [2]string{"b.lua", warning}, [2]string{"clean.lua", cleanLua})
	r.Started = time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	r.Files[0].Elapsed = 1500 * time.Microsecond
	doc, err := LintJUnit(r)
	if err != nil {
		t.Fatal(err)
	}
	p := parseJUnit(t, doc)
	s := p.Suites[0]
	if len(p.Suites) != 1 || s.Name != "limitctl lint" || s.Tests != 3 || s.Failures != 1 || s.Timestamp != "2026-05-04T03:02:01" {
		t.Fatalf("suite %+v, want limitctl lint: 3 tests, 1 failure, started 2026-05-04T03:02:01", s)
	}
	a := s.Cases[0]
	if a.Name != "a.lua" || a.Classname != "lint" || a.File != "a.lua" || a.Time != "0.002" || len(a.Failures) != 2 {
		t.Fatalf("a.lua: %+v, want 2 failures in 0.002s", a)
	}
	for i, rule := range []string{"global-write", "undeclared-key"} {
		f := a.Failures[i]
		if f.Type != rule || !strings.HasPrefix(f.Message, "1:") || !strings.Contains(f.Message, rule) || !strings.HasPrefix(f.Text, "a.lua:1:") {
			t.Errorf("failure %d: %+v, want %s at line 1 with the diagnostic as text", i, f, rule)
		}
	}
	// A warning fails nothing without --strict, but is in the output a reader shows.
	b := s.Cases[1]
	if len(b.Failures) != 0 || !strings.Contains(b.SystemOut, "b.lua:1:") || !strings.Contains(b.SystemOut, "missing-expire") {
		t.Errorf("b.lua: %+v, want a pass with the warning in system-out", b)
	}
	r.Strict = true
	doc, _ = LintJUnit(r)
	if p := parseJUnit(t, doc); p.Failures != 2 || len(p.Suites[0].Cases[1].Failures) != 1 {
		t.Errorf("with --strict %d failing files, want 2 (the warning fails b.lua)", p.Failures)
	}
}

// summaryOf is a finished run's numbers: naive overshot, lua held, custom's calls failed.
func summaryOf() bench.Summary {
	return bench.Summary{
		RunID: "r1", Target: bench.Target{Kind: "redis-server", Addr: "127.0.0.1:7000"}, Limiter: limiter.Concurrency,
		Limit: 20, Workers: 64, Duration: 2500 * time.Millisecond,
		Strategies: []bench.StrategySnapshot{
			{Name: "naive", Attempts: 1000, Admitted: 600, Rejected: 400, Contended: true, Findings: fold.Findings{Peak: 64, Overshoot: 44, OvershootEvent: 99}},
			{Name: "lua", Attempts: 1000, Admitted: 300, Rejected: 700, Contended: true, Findings: fold.Findings{Peak: 20}},
			{Name: "custom", Attempts: 1000, Admitted: 5, Rejected: 5, Errors: 990, ErrorsByKind: map[string]int64{"script": 990}, Findings: fold.Findings{Peak: 3}},
		},
	}
}

// resultOf judges exprs on sum as a run does; failures are the run's reasons to fail.
func resultOf(t *testing.T, sum bench.Summary, failures []string, exprs ...string) hammer.Result {
	t.Helper()
	var asserts []verdict.Assertion
	for _, e := range exprs {
		a, err := verdict.ParseAssertion(strings.TrimSuffix(e, " implied"), []string{"naive", "lua", "custom"})
		if err != nil {
			t.Fatal(err)
		}
		a.Implied = strings.HasSuffix(e, " implied")
		asserts = append(asserts, a)
	}
	j := hammer.Judge(hammer.Rules{Limiter: sum.Limiter, Assertions: asserts}, sum)
	j.Failures = failures
	return hammer.Result{Summary: sum, Judgement: j, Options: hammer.Options{Profile: limiter.ProfileSteady}}
}

func TestHammerJUnitHasACasePerAssertionAndPerVerdict(t *testing.T) {
	sum := summaryOf()
	customFailed := "custom: 990 of 1000 decisions failed (99.0%, more than 1%; check --script-keys)"
	res := resultOf(t, sum, nil, "lua.overshoot==0", "naive.overshoot>0", "lua.admitted>500", "custom.overshoot==0 implied")
	// The run's failures as hammer words them: the failed assertion, and custom's errors; the
	// implied check on custom, unjudged since its calls failed, is not one of them.
	res.Failures = []string{"assertion failed: " + hammer.DescribeAssertion(res.Assertions[2]), customFailed}
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	doc, err := HammerJUnit(res, started, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	p := parseJUnit(t, doc)
	s := p.Suites[0]
	if s.Name != "limitctl hammer" || s.Time != "2.500" || s.Tests != 7 || s.Failures != 2 || s.Skipped != 1 || s.Errors != 0 {
		t.Fatalf("suite %+v, want 7 cases (4 assertions, 3 verdicts): 2 failed, 1 skipped, in 2.500s", s)
	}
	props := map[string]string{}
	for _, pr := range s.Properties {
		props[pr.Name] = pr.Value
	}
	for k, v := range map[string]string{"run_id": "r1", "target": "redis-server 127.0.0.1:7000", "limiter": "concurrency",
		"limit": "20", "workers": "64", "limitctl_version": "v1.2.3", "strategies": "naive,lua,custom"} {
		if props[k] != v {
			t.Errorf("property %s = %q, want %q", k, props[k], v)
		}
	}
	byName := map[string]int{}
	for i, c := range s.Cases {
		byName[c.Classname+" "+c.Name] = i
	}
	failed := s.Cases[byName["hammer.assert lua.admitted>500"]]
	if len(failed.Failures) != 1 || !strings.Contains(failed.Failures[0].Message, "lua.admitted>500 (actual 300)") {
		t.Errorf("lua.admitted>500: %+v, want a failure with the actual value", failed)
	}
	for _, name := range []string{"hammer.assert lua.overshoot==0", "hammer.assert naive.overshoot>0", "hammer.verdict naive", "hammer.verdict lua"} {
		if c := s.Cases[byName[name]]; len(c.Failures)+len(c.Errors) != 0 || c.Skipped != nil {
			t.Errorf("%s: %+v, want a pass", name, c)
		}
	}
	if c := s.Cases[byName["hammer.assert custom.overshoot==0"]]; c.Skipped == nil || !strings.Contains(c.Skipped.Message, "not judged") {
		t.Errorf("the unjudged implied check: %+v, want skipped", c)
	}
	if c := s.Cases[byName["hammer.verdict custom"]]; len(c.Failures) != 1 || c.Failures[0].Message != customFailed {
		t.Errorf("custom's verdict: %+v, want its errors as the failure", c)
	}
	// Each verdict case says the verdict line's word, read from bench's Judge.
	for _, st := range sum.Strategies {
		c := s.Cases[byName["hammer.verdict "+st.Name]]
		if v := verdict.Judge(st, sum.Limiter, sum.Limit, sum.Duration); !strings.HasPrefix(c.SystemOut, st.Name+"  "+v.Word+"  "+v.Text) || c.Time != "2.500" {
			t.Errorf("verdict %s: %q in %ss, want the word %q and its evidence", st.Name, c.SystemOut, c.Time, v.Word)
		}
	}
}

// The report fails exactly when the run does: a passing run is green, and a failure no case
// names still fails one.
func TestHammerJUnitFailsExactlyWhenTheRunFails(t *testing.T) {
	sum := summaryOf()
	sum.Strategies = sum.Strategies[:2]
	pass := resultOf(t, sum, nil, "lua.overshoot==0", "naive.overshoot>0")
	doc, _ := HammerJUnit(pass, time.Time{}, "dev")
	if p := parseJUnit(t, doc); p.Failures+p.Errors+p.Skipped != 0 || p.Tests != 4 {
		t.Errorf("a passing run: %d tests, %d failed, %d errors, %d skipped; want 4 passing", p.Tests, p.Failures, p.Errors, p.Skipped)
	}
	odd := resultOf(t, sum, []string{"something else went wrong"}, "lua.overshoot==0")
	doc, _ = HammerJUnit(odd, time.Time{}, "dev")
	if p := parseJUnit(t, doc); p.Failures != 1 || p.Suites[0].Cases[len(p.Suites[0].Cases)-1].Name != "run" {
		t.Errorf("an unattributed failure: %d failed cases, want 1 named run", p.Failures)
	}
	interrupted := pass
	interrupted.Interrupted = true
	doc, _ = HammerJUnit(interrupted, time.Time{}, "dev")
	if p := parseJUnit(t, doc); p.Errors != 1 {
		t.Errorf("an interrupted run: %d errors, want 1", p.Errors)
	}
}

func TestErrorJUnitIsOneCaseInErrorOrFailed(t *testing.T) {
	doc, err := ErrorJUnit("hammer", time.Now(), 1200*time.Millisecond, errors.New(`dial tcp 127.0.0.1:1: connection refused & "more"`), false)
	if err != nil {
		t.Fatal(err)
	}
	p := parseJUnit(t, doc)
	if p.Tests != 1 || p.Errors != 1 || p.Suites[0].Cases[0].Errors[0].Message != `dial tcp 127.0.0.1:1: connection refused & "more"` {
		t.Errorf("error report: %+v", p)
	}
	// A check that failed before any load (the script failed lint) is a failure, as exit 3 is.
	doc, _ = ErrorJUnit("hammer", time.Now(), 0, errors.New("lint found errors in x.lua"), true)
	if p := parseJUnit(t, doc); p.Tests != 1 || p.Failures != 1 || p.Errors != 0 {
		t.Errorf("check failed report: %+v", p)
	}
}

// Text that XML cannot hold as it is (markup, a control character) still gives a document the
// parser reads back.
func TestJUnitEscapesWhatXMLCannotHold(t *testing.T) {
	message := `key "<a & 'b'>" and a control character` + "\x01"
	r := LintRun{WorkDir: "/w", Files: []LintedFile{{Name: "odd.lua"}},
		Diagnostics: []lint.Diagnostic{{File: "odd.lua", Line: 1, Col: 1, Severity: "error", Rule: "undeclared-key", Message: message}}}
	doc, err := LintJUnit(r)
	if err != nil {
		t.Fatal(err)
	}
	p := parseJUnit(t, doc)
	if got := p.Suites[0].Cases[0].Failures[0].Message; p.Failures != 1 || !strings.HasPrefix(got, `1:1: undeclared-key: key "<a & 'b'>" and a control character`) {
		t.Errorf("failure message %q\n%s", got, doc)
	}
}

// hammer report's merged run reads as a hammer run's, named for the command that judged it and
// with the number of processes; a report that could not merge anything names that command too.
func TestHammerReportsOfAMergedRun(t *testing.T) {
	sum := summaryOf()
	sum.Strategies, sum.Processes = sum.Strategies[:2], 3
	res := resultOf(t, sum, []string{"assertion failed: naive.overshoot==0 (actual 44)"}, "lua.overshoot==0", "naive.overshoot==0")
	doc, md, err := HammerReports("hammer report", res, nil, false, time.Time{}, time.Second, "dev")
	if err != nil {
		t.Fatal(err)
	}
	p := parseJUnit(t, doc)
	s := p.Suites[0]
	props := map[string]string{}
	for _, pr := range s.Properties {
		props[pr.Name] = pr.Value
	}
	if s.Name != "limitctl hammer report" || props["processes"] != "3" || s.Tests != 4 || s.Failures != 1 {
		t.Errorf("suite %q, processes %q, %d tests, %d failures; want limitctl hammer report, 3, 4, 1", s.Name, props["processes"], s.Tests, s.Failures)
	}
	for _, want := range []string{"### limitctl hammer report: FAILED\n", "64 workers per strategy across 3 processes, 2.5s"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("step summary lacks %q:\n%s", want, md)
		}
	}
	doc, md, _ = HammerReports("hammer report", hammer.Result{}, errors.New("no process of run r1 left a summary"), false, time.Time{}, time.Second, "dev")
	if p := parseJUnit(t, doc); p.Errors != 1 || p.Suites[0].Name != "limitctl hammer report" || p.Suites[0].Cases[0].Classname != "limitctl.hammer.report" {
		t.Errorf("a report without a run: %+v, want one error in suite limitctl hammer report", p)
	}
	if !strings.HasPrefix(string(md), "### limitctl hammer report: could not run\n") {
		t.Errorf("step summary of a report without a run:\n%s", md)
	}
}
