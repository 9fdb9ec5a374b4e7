package refusal

import (
	"fmt"
	"strconv"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/trace"
)

// HowTokens are the pieces of a strategy's first false reject in the how-lines' form: what
// the refused call's checks read (or its script replied), then when it was refused and what
// was counted against it.
//
//	lua    refused: r88 EVALSHA → {0, 20} (+0.00ms) → at 0.41s, at most 3 of 20 held
func (f *FalseReject) HowTokens(kind limiter.Kind) []string {
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
	counted := fmt.Sprintf("at most %s of %s admitted in its window", human.Count(f.HeldOrAdmitted), human.Count(f.Limit))
	switch {
	case f.TokensLeft != nil:
		counted = fmt.Sprintf("the bucket held at least %s of %s tokens", strconv.FormatFloat(*f.TokensLeft, 'f', -1, 64), human.Count(f.Limit))
	case kind != "" && kind.Describe().Evidence == limiter.HeldEvidence:
		counted = fmt.Sprintf("at most %s of %s held", human.Count(f.HeldOrAdmitted), human.Count(f.Limit))
		if m := f.AbandonedReclaimable; m != nil && *m > 0 {
			counted += fmt.Sprintf(", %s abandoned more than stale-after ago", human.Count(*m))
		}
	}
	tokens = append(tokens, fmt.Sprintf("→ refused at %.2fs, %s", f.SentMs/1000, counted))
	if f.Request == nil {
		tokens = append(tokens, "(its commands were no longer kept)")
	}
	return tokens
}
