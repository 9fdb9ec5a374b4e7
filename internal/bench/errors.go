package bench

import (
	"errors"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/rediserr"
)

// classifyDecision names the kind of a failed decision, for errors-by-kind counts: the kind an
// error names itself (an endpoint's: status, timeout, reset, ...), reply when the script
// answered but --script-allowed could not read the answer, otherwise what Redis's error says
// (rediserr), a bare ERR being the script's own failure where the strategy runs one.
func classifyDecision(err error, strategy limiter.Strategy) string {
	var kinded interface{ ErrorKind() string }
	if errors.As(err, &kinded) {
		return kinded.ErrorKind()
	}
	if limiter.IsReplyError(err) {
		return "reply"
	}
	if strategy.RunsScript() {
		return string(rediserr.ClassifyScriptCall(err))
	}
	return string(rediserr.Classify(err))
}
