package bench

import (
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/rediserr"
)

// classifyDecision names the kind of a failed decision, for errors-by-kind counts: reply when
// the script answered but --script-allowed could not read the answer, otherwise what Redis's
// error says (rediserr), a bare ERR being the script's own failure where the strategy runs one.
func classifyDecision(err error, strategy limiter.Strategy) string {
	if limiter.IsReplyError(err) {
		return "reply"
	}
	if strategy.RunsScript() {
		return string(rediserr.ClassifyScriptCall(err))
	}
	return string(rediserr.Classify(err))
}
