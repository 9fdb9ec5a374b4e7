package limiter

// Commands names the Redis commands one decision of a strategy sends, as INFO commandstats
// names them, and the commands its script runs inside Redis (which commandstats also counts).
// The hammer uses them to attribute server time to a strategy only when no other running
// strategy touches the same counters.
func Commands(k Kind, s Strategy) (decision, inner []string) {
	body := k.Describe().Commands
	switch s {
	case Naive:
		return body, nil
	case Multi:
		return append([]string{"multi", "exec"}, body...), nil
	case Watch:
		return append([]string{"watch", "unwatch", "multi", "exec", "zcount"}, body...), nil
	case Eval:
		return []string{"eval"}, body
	case Function:
		return []string{"fcall"}, body
	default: // lua, lua-ts-member, custom: EVALSHA (EVAL only after a NOSCRIPT)
		return []string{"evalsha"}, body
	}
}
