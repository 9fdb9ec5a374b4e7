package ciformat

import (
	"fmt"

	"github.com/limitctl/limitctl/internal/bench"
)

// verdictLines are the strategies' verdicts as the summary prints them, one line each: the
// strategy, the word and the evidence from bench's Judge.
func verdictLines(s bench.Summary) []string {
	out := make([]string, len(s.Strategies))
	for i, st := range s.Strategies {
		v := st.Judge(s.Limiter, s.Limit, s.Duration)
		out[i] = fmt.Sprintf("%s  %s  %s", st.Name, v.Word, v.Text)
	}
	return out
}
