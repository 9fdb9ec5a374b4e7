package keys

import (
	"slices"
	"strings"

	"github.com/limitctl/limitctl/internal/exitcode"
)

// The bounds of each command's options, checked once, here: a value out of them is a usage
// error naming the flag that gives it, returned before anything connects.

// RedisTypes are the key types SCAN TYPE accepts (--type).
var RedisTypes = []string{"string", "list", "set", "zset", "hash", "stream"}

// Check refuses a SCAN COUNT below 1, a negative bound, or a type SCAN TYPE does not know.
func (o SelectOptions) Check() error {
	switch {
	case o.Count < 1:
		return exitcode.Usagef("--count must be at least 1, got %d", o.Count)
	case o.MaxKeys < 0:
		return exitcode.Usagef("--max-keys must be 0 (no bound) or more, got %d", o.MaxKeys)
	case o.Type != "" && !slices.Contains(RedisTypes, o.Type):
		return exitcode.Usagef("unknown --type %q: want one of %s", o.Type, strings.Join(RedisTypes, ", "))
	}
	return nil
}

// Check refuses a negative stale age or limit, and what Select refuses.
func (o InspectOptions) Check() error {
	switch {
	case o.Stale < 0:
		return exitcode.Usagef("--stale must be positive, got %s", o.Stale)
	case o.HasLimit && o.Limit < 0:
		return exitcode.Usagef("--limit must be 0 or more, got %d", o.Limit)
	}
	return o.Select.Check()
}

// Check refuses an age that is not positive and a batch out of 1-MaxBatch (Purge checks it
// too); PurgePatterns' selection is Select's to check.
func (o PurgeOptions) Check() error {
	switch {
	case o.OlderThan <= 0:
		return exitcode.Usagef("--older-than must be positive, got %s", o.OlderThan)
	case o.Batch < 1 || o.Batch > MaxBatch:
		return exitcode.Usagef("--batch must be 1 to %d (members per script call), got %d", MaxBatch, o.Batch)
	}
	return nil
}

// Check refuses a batch out of 1-MaxResetBatch (Reset checks it too).
func (o ResetOptions) Check() error {
	if o.Batch < 1 || o.Batch > MaxResetBatch {
		return exitcode.Usagef("--batch must be 1 to %d (keys per round trip), got %d", MaxResetBatch, o.Batch)
	}
	return nil
}
