package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/trace"
)

// A strategy's first wrong refusal is drawn as its refused call: the command, what Redis
// answered it, and what the evidence counted against it; without its record, the sentence says so.
func TestReportDrawsTheFirstWrongRefusal(t *testing.T) {
	d := fixtureData()
	f := &refusal.FalseReject{SentMs: 412.5, RepliedMs: 413, HeldOrAdmitted: 3, Limit: 20, Request: &trace.Request{ID: "r88",
		Steps: []trace.StepOut{{Op: "EVALSHA", Phase: "call", Reply: json.RawMessage(`[0,20]`), SentUs: 412_500, RepliedUs: 412_950}}}}
	d.Summary.Strategies[1].FalseRejects, d.Summary.Strategies[1].FirstFalseReject = 7, f
	page := writeReport(t, d)
	for _, want := range []string{`id="refused-lua"`, `data-request="r88"`, "EVALSHA → {0, 20}",
		"refused at 0.41s while at most 3 of 20 were held"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report does not show %q", want)
		}
	}
	f.Request = nil
	page = writeReport(t, d)
	if strings.Contains(page, `id="refused-lua"`) || !strings.Contains(page, "Its commands were no longer kept") {
		t.Error("a refusal without its record is drawn, or not said to be missing")
	}
}
