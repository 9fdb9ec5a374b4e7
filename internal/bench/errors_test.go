package bench

import (
	"errors"
	"testing"

	"github.com/limitctl/limitctl/internal/limiter"
)

// replyError is an error reply as go-redis gives it (a redis.Error).
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// A decision's error counts by what Redis said (package rediserr has every code): a bare ERR is
// the script's failure where the strategy runs a script, and a reply the contract could not
// read is the contract's.
func TestClassifyDecision(t *testing.T) {
	scriptFailed := replyError("ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: e68d, on @user_script")
	for _, tc := range []struct {
		err      error
		strategy limiter.Strategy
		want     string
	}{
		{replyError("NOPERM this user has no permissions to run the 'zadd' command"), limiter.Naive, "noperm"},
		{replyError("EXECABORT Transaction discarded because of: NOPERM this user has no permissions to run the 'exec' command"), limiter.Multi, "noperm"},
		{replyError("NOAUTH Authentication required."), limiter.Lua, "noperm"},
		{replyError("WRONGPASS invalid username-password pair or user is disabled."), limiter.Eval, "noperm"},
		{scriptFailed, limiter.Lua, "script"},
		{scriptFailed, limiter.Custom, "script"},
		{scriptFailed, limiter.Function, "script"},
		// Redis 7.0 refuses a command inside a script with a bare ERR: the script failed (the
		// hammer's probe stops the run before any load when a shipped script fails so).
		{replyError("ERR The user executing the script can't run this command or subcommand script: e68d, on @user_script:1."), limiter.Lua, "script"},
		{replyError("ERR value is not an integer or out of range"), limiter.Naive, "other"},
		{replyError("EXECABORT Transaction discarded because of previous errors."), limiter.Watch, "other"},
		{&limiter.ReplyError{Err: errors.New("reply[1] is a string")}, limiter.Custom, "reply"},
	} {
		if got := classifyDecision(tc.err, tc.strategy); got != tc.want {
			t.Errorf("%s: %q classified %s, want %s", tc.strategy, tc.err, got, tc.want)
		}
	}
}
