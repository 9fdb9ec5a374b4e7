package bench

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/limitctl/limitctl/internal/limiter"
)

// Classify names the kind of a failed decision, for errors-by-kind counts.
func Classify(err error) string {
	if err == nil {
		return ""
	}
	if limiter.IsReplyError(err) {
		return "reply" // the script answered, but --script-allowed could not read the answer
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return "timeout"
	}
	msg := err.Error()
	upper := strings.ToUpper(msg)
	switch {
	case strings.HasPrefix(upper, "NOSCRIPT"):
		return "noscript"
	case strings.HasPrefix(upper, "BUSY"):
		return "busy"
	case strings.HasPrefix(upper, "READONLY"):
		return "readonly"
	case strings.HasPrefix(upper, "LOADING"):
		return "loading"
	case strings.HasPrefix(upper, "OOM"):
		return "oom"
	// NOPERM also ends an EXECABORT when EXEC itself is not allowed.
	case strings.Contains(upper, "NOPERM"), strings.Contains(upper, "NOAUTH"), strings.Contains(upper, "WRONGPASS"),
		// Redis 7.0's words when a script calls a command the user's ACL does not allow.
		strings.Contains(msg, "user executing the script can't run this command"):
		return "noperm"
	case strings.HasPrefix(upper, "MOVED"), strings.HasPrefix(upper, "ASK"), strings.HasPrefix(upper, "CLUSTERDOWN"),
		strings.HasPrefix(upper, "CROSSSLOT"), strings.HasPrefix(upper, "TRYAGAIN"):
		return "cluster"
	case strings.Contains(msg, "script") || strings.Contains(msg, "Script") || strings.Contains(msg, "@user_script"):
		return "script"
	case strings.Contains(msg, "i/o timeout"):
		return "timeout"
	case errors.As(err, &netErr), strings.Contains(msg, "connection refused"), strings.Contains(msg, "EOF"),
		strings.Contains(msg, "connection reset"), strings.Contains(msg, "broken pipe"), strings.Contains(msg, "closed"):
		return "connection"
	}
	return "other"
}
