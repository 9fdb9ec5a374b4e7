package lint

// Rule names, as printed in diagnostics and accepted by `-- limitctl:ignore`.
const (
	RuleSyntax           = "syntax"
	RuleGlobalWrite      = "global-write"
	RuleUndeclaredKey    = "undeclared-key"
	RuleKeysCommand      = "keys-command"
	RuleNondeterministic = "nondeterministic"
	RuleMissingExpire    = "missing-expire"
	RuleUnboundedLoop    = "unbounded-loop"
	RuleArgvNumber       = "argv-number"
)

// Rule describes one check, for `limitctl lint` help and the docs.
type Rule struct {
	Name        string `json:"name"`
	Severity    string `json:"severity"`
	Description string `json:"description"`
}

var rules = []Rule{
	{RuleSyntax, SeverityError,
		"the file does not parse as Lua; nothing else is checked"},
	{RuleGlobalWrite, SeverityError,
		"assignment to a global variable or a global function declaration; Redis refuses scripts that write globals, so declare it local"},
	{RuleUndeclaredKey, SeverityError,
		"a key argument of redis.call/pcall that does not come from KEYS (ARGV, concatenation, a loop variable or a literal); Redis Cluster routes a script by its KEYS only"},
	{RuleKeysCommand, SeverityError,
		"the KEYS command inside a script walks the whole keyspace and blocks the server; use SCAN from the client or pass the keys in KEYS"},
	{RuleNondeterministic, SeverityWarning,
		"TIME, RANDOMKEY, SRANDMEMBER, SPOP or math.random inside a script; pass time and randomness in ARGV so clients share one clock and tests can inject it"},
	{RuleMissingExpire, SeverityWarning,
		"a key is written but the script never sets its TTL (EXPIRE, PEXPIRE, SET ... EX/PX, SETEX...); an abandoned key would live forever"},
	{RuleUnboundedLoop, SeverityWarning,
		"a loop with a constant condition, or a loop over a reply that grows with the data, calls redis.call; the script's run time, during which Redis serves nobody else, has no bound"},
	{RuleArgvNumber, SeverityWarning,
		"ARGV (always a string) used in arithmetic or an ordering comparison without tonumber; comparisons fail or compare as text"},
}

// Rules lists every rule in the order the docs present them.
func Rules() []Rule {
	return append([]Rule(nil), rules...)
}

// severityOf returns the fixed severity of a rule: a rule never changes
// severity, so --strict is the only knob.
func severityOf(rule string) string {
	for _, r := range rules {
		if r.Name == rule {
			return r.Severity
		}
	}
	panic("lint: unknown rule " + rule)
}
