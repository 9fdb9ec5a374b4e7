package hammer

import (
	"fmt"

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
		if cmds := st.FirstOvershoot.Redis; cmds != nil {
			head := fmt.Sprintf("%-*s  redis: ", nameW, st.Name)
			out = append(out, trace.Wrap(head, cmds.HowTokens(), width)...)
		}
	}
	for _, st := range r.Summary.Strategies {
		if f := st.FirstFalseReject; f != nil {
			head := fmt.Sprintf("%-*s  refused: ", nameW, st.Name)
			out = append(out, trace.Wrap(head, f.HowTokens(r.Summary.Limiter.Model()), width)...)
		}
	}
	return out
}
