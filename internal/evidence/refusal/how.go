package refusal

import (
	"fmt"
	"strconv"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/trace"
)

// HowTokens are the pieces of a strategy's first false reject in the how-lines' form: what
// the refused call's checks read (or its script replied), then when it was refused and what
// was counted against it.
//
//	lua    refused: r88 EVALSHA → {0, 20} (+0.00ms) → at 0.41s, at most 3 of 20 held
func (f *FalseReject) HowTokens(m Model) []string {
	var tokens []string
	if req := f.Request; req != nil && len(req.Steps) > 0 {
		start := req.Steps[0].SentUs
		for _, s := range req.Steps {
			if s.Phase != "check" && s.Phase != "call" || s.Op == "WATCH" {
				continue
			}
			tokens = append(tokens, fmt.Sprintf("%s %s → %s (+%.2fms)", req.ID, s.Op, trace.ReplyText(s.Reply), float64(s.RepliedUs-start)/1000))
		}
	}
	tokens = append(tokens, fmt.Sprintf("→ refused at %.2fs, %s", f.SentMs/1000, f.Counted(m, "")))
	if f.Request == nil {
		tokens = append(tokens, "(its commands were no longer kept)")
	}
	return tokens
}

// Counted says what the evidence counted against the refusal, as m words it (nil: a kind
// unknown, whose count is of admits), "were" the verb between its count and what it counted where
// a sentence needs one: "at most 3 of 20 held", "at most 3 of 20 were admitted in its window",
// "the bucket held at least 1.5 of 20 tokens".
func (f *FalseReject) Counted(m Model, were string) string {
	if f.TokensLeft != nil {
		return fmt.Sprintf("the bucket held at least %s of %s tokens", strconv.FormatFloat(*f.TokensLeft, 'f', -1, 64), human.Count(f.Limit))
	}
	if were != "" {
		were += " "
	}
	what := "admitted in its window"
	if m != nil {
		what = m.Counted()
	}
	counted := fmt.Sprintf("at most %s of %s %s%s", human.Count(f.HeldOrAdmitted), human.Count(f.Limit), were, what)
	if a := f.AbandonedReclaimable; a != nil && *a > 0 {
		counted += fmt.Sprintf(", %s abandoned more than stale-after ago", human.Count(*a))
	}
	return counted
}
