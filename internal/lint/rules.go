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
	RuleShebang          = "shebang"
	RuleReadonlyWrite    = "readonly-write"
	RuleLibrary          = "library"
	RuleReplyType        = "reply-type"
	RuleReplyKey         = "reply-key"
)

// Rule describes one check, for `limitctl lint` help and the docs.
type Rule struct {
	Name        string `json:"name"`
	Severity    string `json:"severity"`
	Description string `json:"description"`
	// Short says what the rule found in a few words, for a diagnostic line whose own message
	// is too long for it.
	Short string `json:"-"`
}

var rules = []Rule{
	{RuleSyntax, SeverityError,
		"the file does not parse as Lua; nothing else is checked", "the file does not parse"},
	{RuleGlobalWrite, SeverityError,
		"assignment to a global variable or a global function declaration; Redis refuses scripts that write globals, so declare it local",
		"a global is written: declare it local"},
	{RuleUndeclaredKey, SeverityError,
		"a key argument of redis.call/pcall that does not come from KEYS (ARGV, concatenation, a loop variable or a literal); Redis Cluster routes a script by its KEYS only",
		"a key that does not come from KEYS"},
	{RuleKeysCommand, SeverityError,
		"the KEYS command inside a script walks the whole keyspace and blocks the server; use SCAN from the client or pass the keys in KEYS",
		"KEYS blocks the server"},
	{RuleShebang, SeverityError,
		"a Redis 7 shebang line Redis refuses: an engine other than lua, an unknown flag, name= in an EVAL script, flags= in a Function library",
		"a shebang line Redis refuses"},
	{RuleReadonlyWrite, SeverityError,
		"a write command in a script flagged no-writes (#!lua flags=no-writes) or a function registered with flags={'no-writes'}; Redis refuses it at run time",
		"a write where no-writes is flagged"},
	{RuleLibrary, SeverityError,
		"what a Function library cannot do: read the KEYS/ARGV globals (a registered function gets them as parameters), use redis.call, math, cjson, pairs... at its top level (FUNCTION LOAD offers only redis.register_function, redis.log and redis.REDIS_VERSION there), register nothing; or redis.register_function outside a library",
		"not possible in a Function library"},
	{RuleReplyType, SeverityError,
		"a number (a command's integer reply, tonumber, arithmetic) compared with a string (ARGV, a bulk reply, a literal): == is always false and ~= always true in Lua, and < <= > >= raise an error",
		"a number compared with a string"},
	{RuleNondeterministic, SeverityWarning,
		"TIME, RANDOMKEY, SRANDMEMBER, SPOP or math.random inside a script; pass time and randomness in ARGV so clients share one clock and tests can inject it",
		"reads time or randomness"},
	{RuleMissingExpire, SeverityWarning,
		"a key is written but the script never sets its TTL (EXPIRE, PEXPIRE, SET ... EX/PX, SETEX...); an abandoned key would live forever",
		"a key written without a TTL"},
	{RuleUnboundedLoop, SeverityWarning,
		"a loop with a constant condition, or a loop over a reply that grows with the data, calls redis.call; the script's run time, during which Redis serves nobody else, has no bound",
		"a loop without a bound calls Redis"},
	{RuleArgvNumber, SeverityWarning,
		"ARGV (always a string) used in arithmetic or an ordering comparison without tonumber; comparisons fail or compare as text",
		"ARGV used as a number without tonumber"},
	{RuleReplyKey, SeverityWarning,
		"a key argument taken from a command's reply (SCAN, KEYS, SMEMBERS, ZRANGE, HGET...): Redis Cluster cannot route it unless it shares the script's hash slot, and the script's work grows with the data",
		"a key taken from a command's reply"},
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
