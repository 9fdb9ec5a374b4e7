package redistrace

import "strings"

// Identities are the run's client identities, as hammer names them (runkeys.Scheme.Identity):
// <run-id>.<i>, each HTTP target Keys of them in the order of Targets (target t's i-th is
// <run-id>.<t*Keys + i>). A key holds one when it contains one, not followed by another digit
// (run.1 is not in run.10) nor preceded by a character a run id may hold.
type Identities struct {
	RunID   string
	Keys    int // identities per target
	Targets []string
	// Exclude names keys that are the run's own (its Redis strategies' keys may hold
	// <run-id>.<i> in their hash tag), never the application's.
	Exclude func(key string) bool
}

// Of reports which target's identity s holds, and which of its identities (0-based).
func (id Identities) Of(s string) (target, identity int, ok bool) {
	needle := id.RunID + "."
	for from := 0; ; {
		i := strings.Index(s[from:], needle)
		if i < 0 {
			return 0, 0, false
		}
		start := from + i
		from = start + 1
		if start > 0 && runIDChar(s[start-1]) {
			continue
		}
		end := start + len(needle)
		n, digits := 0, 0
		for end < len(s) && s[end] >= '0' && s[end] <= '9' && digits < 9 {
			n, end, digits = n*10+int(s[end]-'0'), end+1, digits+1
		}
		if digits == 0 || (end < len(s) && s[end] >= '0' && s[end] <= '9') {
			continue
		}
		keys := max(1, id.Keys)
		if t := n / keys; t < len(id.Targets) {
			return t, n % keys, true
		}
	}
}

// Holds reports whether s holds one of the run's identities and is not one of its own keys.
func (id Identities) Holds(s string) bool {
	if id.Exclude != nil && id.Exclude(s) {
		return false
	}
	_, _, ok := id.Of(s)
	return ok
}

// runIDChar is a character a run id may hold (hammer.ValidRunID).
func runIDChar(c byte) bool {
	return c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
