package lint

// ReadsTime reports whether a script reads the server's clock: redis.call or redis.pcall (or
// server.call, server.pcall, or a local alias of one) with the command TIME in any letter case.
// The hammer answers such a script's TIME itself (its virtual clock) unless it is given the time.
func ReadsTime(src []byte) bool {
	for _, d := range Lint("script.lua", src) {
		if isTimeRead(d) {
			return true
		}
	}
	return false
}

// isTimeRead is the nondeterministic diagnostic of a TIME call.
func isTimeRead(d Diagnostic) bool {
	return d.Rule == RuleNondeterministic && d.Message == nondeterministicMessage("TIME", "time")
}
