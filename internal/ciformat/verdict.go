package ciformat

import (
	"fmt"

	"github.com/limitctl/limitctl/internal/hammer"
)

// verdictLines are the strategies' verdicts as the summary prints them, one line each: the
// strategy, the word and the evidence of the run's Judgement.
func verdictLines(res hammer.Result) []string {
	out := make([]string, len(res.Verdicts))
	for i, v := range res.Verdicts {
		out[i] = fmt.Sprintf("%s  %s  %s", res.Summary.Strategies[i].Name, v.Word, v.Text)
	}
	return out
}
