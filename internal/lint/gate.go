package lint

// Gate is what a tool about to send a script to Redis (hammer --script)
// should do with its diagnostics: print report, and stop only when block.
// A syntax error does not block: gopher-lua's parser is not Redis' Lua, so
// a script it cannot parse may still compile on the server, which is the
// judge (SCRIPT LOAD refuses what does not). It comes back as a warning that
// says so. Every other error is a defect Redis itself would hit, and blocks.
func Gate(ds []Diagnostic) (report []Diagnostic, block bool) {
	report = make([]Diagnostic, 0, len(ds))
	for _, d := range ds {
		if d.Rule == RuleSyntax {
			d.Severity = SeverityWarning
			d.Message += "; the linter could not check this script, so Redis decides when it loads it"
		} else if d.Severity == SeverityError {
			block = true
		}
		report = append(report, d)
	}
	return report, block
}

// Unparsed reports whether ds say the file did not parse, in which case no
// other rule ran.
func Unparsed(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Rule == RuleSyntax {
			return true
		}
	}
	return false
}
