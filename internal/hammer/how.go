package hammer

import (
	"fmt"
	"strconv"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/trace"
)

// HowWidth is the width the how-lines wrap at when the output has no width of its own (a log):
// a line a person reads at a glance.
const HowWidth = 100

// HowLines say, below the verdict lines, how each strategy's first overshoot happened, in the
// article's form, and then what each first false reject's call saw: the requests behind it, what each saw and when its write went, and the count
// that resulted, wrapped at width (HowWidth when 0) under their strategy's name:
//
//	naive  how: r4117 ZCARD → 19 (+0.12ms) · r4120 ZCARD → 19 (+0.15ms) · r4117 ZADD (+0.31ms) ·
//	            r4120 ZADD (+0.33ms) → 21 held at 3.20s, limit 20 (r4117 raced; 19 more in the JSON)
func (r Result) HowLines(width int) []string {
	if width <= 0 || width > HowWidth {
		width = HowWidth
	}
	nameW := 0
	for _, st := range r.Summary.Strategies {
		nameW = max(nameW, len(st.Name))
	}
	var out []string
	for _, st := range r.Summary.Strategies {
		if st.FirstOvershoot == nil {
			continue
		}
		head := fmt.Sprintf("%-*s  how: ", nameW, st.Name)
		out = append(out, trace.Wrap(head, st.FirstOvershoot.HowTokens(), width)...)
	}
	for _, st := range r.Summary.Strategies {
		if f := st.FirstFalseReject; f != nil {
			head := fmt.Sprintf("%-*s  refused: ", nameW, st.Name)
			out = append(out, trace.Wrap(head, refusedTokens(f, r.Summary.Limiter), width)...)
		}
	}
	return out
}

// refusedTokens are the pieces of a strategy's first false reject in the how-lines' form: what
// the refused call's checks read (or its script replied), then when it was refused and what
// was counted against it.
//
//	lua    refused: r88 EVALSHA → {0, 20} (+0.00ms) → at 0.41s, at most 3 of 20 held
func refusedTokens(f *bench.FalseReject, kind limiter.Kind) []string {
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
	}
	tokens = append(tokens, fmt.Sprintf("→ refused at %.2fs, %s", f.SentMs/1000, counted))
	if f.Request == nil {
		tokens = append(tokens, "(its commands were no longer kept)")
	}
	return tokens
}
