package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/hammer"
)

// A hammer run's report file carries the run's strategies and each assertion worded as the
// summary words it (the value, then why it failed), with the time it was generated.
func TestWriteRunWritesTheRunsPage(t *testing.T) {
	d := fixtureData()
	rec := NewRecorder(0)
	for _, s := range fixtureSnapshots(20) {
		rec.Add(s)
	}
	zero, nine := 0.0, 9.0
	res := hammer.Result{Summary: d.Summary, Judgement: hammer.Judgement{Assertions: []verdict.AssertionResult{
		{Expr: "lua.overshoot==0", Passed: true, Actual: &zero},
		{Expr: "naive.overshoot==0", Passed: false, Actual: &nine, Reason: "peak 29 of 20"},
	}}}
	path := filepath.Join(t.TempDir(), "run.html")
	generated := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	if err := WriteRun(path, res, rec, generated); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	byID, _ := parse(t, string(page))
	asserts := byID["assertions"]
	if asserts == nil {
		t.Fatal("no assertions on the page")
	}
	for _, want := range []string{"PASS", "lua.overshoot==0", "(" + hammer.ActualText(res.Assertions[0]) + ")",
		"FAIL", "naive.overshoot==0", "(" + hammer.ActualText(res.Assertions[1]) + ")"} {
		if !strings.Contains(asserts.text, want) {
			t.Errorf("assertions %q lack %q", asserts.text, want)
		}
	}
	for _, want := range []string{"naive", "lua", "2026"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
