package rediserr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// An error reply is classified by its code, whatever words follow it; the same words in an
// error that is not a reply of Redis classify as nothing of Redis's.
func TestClassifyByTheReplysCode(t *testing.T) {
	for msg, want := range map[string]Kind{
		"NOSCRIPT No matching script. Please use EVAL.":                                                               NoScript,
		"NOPERM this user has no permissions to run the 'zadd' command":                                               Permission,
		"NOAUTH Authentication required.":                                                                             Permission,
		"WRONGPASS invalid username-password pair or user is disabled.":                                               Permission,
		"EXECABORT Transaction discarded because of: NOPERM this user has no permissions to run the 'exec' command":   Permission,
		"EXECABORT Transaction discarded because of previous errors.":                                                 Other,
		"MOVED 3999 127.0.0.1:6381":                                                                                   Cluster,
		"ASK 3999 127.0.0.1:6381":                                                                                     Cluster,
		"CLUSTERDOWN The cluster is down":                                                                             Cluster,
		"CROSSSLOT Keys in request don't hash to the same slot":                                                       Cluster,
		"TRYAGAIN Multiple keys request during rehashing of slot":                                                     Cluster,
		"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.":                      Busy,
		"BUSYKEY Target key name already exists.":                                                                     Other,
		"LOADING Redis is loading the dataset in memory":                                                              Loading,
		"READONLY You can't write against a read only replica.":                                                       ReadOnly,
		"OOM command not allowed when used memory > 'maxmemory'.":                                                     OOM,
		"ERR The user executing the script can't run this command or subcommand script: e68d, on @user_script:1.":     Other,
		"ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: e68d, on @user_script": Other,
		"WRONGTYPE Operation against a key holding the wrong kind of value":                                           Other,
	} {
		if got := Classify(reply(msg)); got != want {
			t.Errorf("Classify(reply %q) = %s, want %s", msg, got, want)
		}
		if got := Classify(fmt.Errorf("EVALSHA: %w", reply(msg))); got != want {
			t.Errorf("Classify(wrapped reply %q) = %s, want %s", msg, got, want)
		}
		if got := Classify(errors.New(msg)); got != Other {
			t.Errorf("Classify(%q), not a reply, = %s, want other: the words are not read", msg, got)
		}
	}
}

// A bare ERR to a call that ran a script is the script's own failure; a reply with a code
// keeps its kind, and a failure to reach Redis is no script's.
func TestClassifyScriptCall(t *testing.T) {
	for err, want := range map[error]Kind{
		reply("ERR user_script:1: boom script: e68d, on @user_script:1."):                                                Script,
		reply("ERR The user executing the script can't run this command or subcommand script: e68d, on @user_script:1."): Script,
		reply("NOSCRIPT No matching script. Please use EVAL."):                                                           NoScript,
		reply("BUSY Redis is busy running a script."):                                                                    Busy,
		io.EOF:                   Connection,
		context.DeadlineExceeded: Timeout,
	} {
		if got := ClassifyScriptCall(err); got != want {
			t.Errorf("ClassifyScriptCall(%v) = %s, want %s", err, got, want)
		}
	}
}

// Timeouts and closed connections are told by their types, wrapped or not.
func TestClassifyTransportFailures(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for err, want := range map[error]Kind{
		context.DeadlineExceeded:                              Timeout,
		fmt.Errorf("no answer: %w", context.DeadlineExceeded): Timeout,
		timeout:              Timeout,
		redis.ErrPoolTimeout: Timeout,
		redis.ErrClosed:      Connection,
		io.EOF:               Connection,
		io.ErrUnexpectedEOF:  Connection,
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}:        Connection,
		fmt.Errorf("write: %w", &net.OpError{Op: "write", Err: syscall.EPIPE}): Connection,
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}:          Connection,
		errors.New("connection reset by peer: but only in words"):              Other,
	} {
		if got := Classify(err); got != want {
			t.Errorf("Classify(%v) = %s, want %s", err, got, want)
		}
	}
	if !Dropped(&net.OpError{Op: "read", Err: syscall.ECONNRESET}) || !Dropped(io.EOF) || Dropped(timeout) {
		t.Error("Dropped: a reset or EOF is a dropped connection, a timeout is not")
	}
}

func TestPredicates(t *testing.T) {
	if !IsWrongType(reply("WRONGTYPE Operation against a key holding the wrong kind of value")) || IsWrongType(reply("ERR x")) {
		t.Error("IsWrongType")
	}
	if !IsCrossSlot(reply("CROSSSLOT Keys in request don't hash to the same slot")) || IsCrossSlot(reply("MOVED 3999 127.0.0.1:6381")) ||
		IsCrossSlot(errors.New("CROSSSLOT x")) {
		t.Error("IsCrossSlot: the reply's code, from Redis only")
	}
	if !IsNoScript(reply("NOSCRIPT No matching script. Please use EVAL.")) || IsNoScript(reply("ERR NOSCRIPTS x")) ||
		IsNoScript(errors.New("NOSCRIPT x")) || IsNoScript(nil) {
		t.Error("IsNoScript: the reply's code, from Redis only")
	}
	if !IsExecAbort(reply("EXECABORT Transaction discarded because of previous errors.")) || IsExecAbort(errors.New("EXECABORT x")) {
		t.Error("IsExecAbort")
	}
	if !IsReply(redis.Nil) || !IsReply(reply("ERR x")) || IsReply(io.EOF) {
		t.Error("IsReply: redis.Nil and error replies are replies, EOF is not")
	}
	if !Is(reply("NOPERM x"), Permission) || Is(nil, Permission) {
		t.Error("Is")
	}
	if !IsACLRefusal(reply("NOPERM x")) || IsACLRefusal(reply("WRONGPASS x")) || !IsAuthFailure(reply("WRONGPASS x")) ||
		!IsAuthFailure(reply("NOAUTH x")) || IsAuthFailure(reply("NOPERM x")) {
		t.Error("IsACLRefusal and IsAuthFailure tell a refused command from a failed login")
	}
}

// The replies a real redis-server sends classify as their codes say.
func TestClassifyRealReplies(t *testing.T) {
	srv := redistest.StartACL(t, "user reader on >pw ~* +@read +eval")
	rdb := srv.ClientAs(t, redistest.AdminUser, redistest.AdminPassword)
	reader := srv.ClientAs(t, "reader", "pw")
	ctx := context.Background()
	rdb.Set(ctx, "str", "x", 0)
	for name, tc := range map[string]struct {
		err  error
		want Kind
	}{
		"EVALSHA of no script":  {rdb.EvalSha(ctx, "0123456789012345678901234567890123456789", nil).Err(), NoScript},
		"a refused command":     {reader.Set(ctx, "k", "v", 0).Err(), Permission},
		"a script that fails":   {rdb.Eval(ctx, "error('boom')", nil).Err(), Script},
		"a refusal in a script": {reader.Eval(ctx, "return redis.call('SET', KEYS[1], 'v')", []string{"k"}).Err(), Script},
		"a closed client":       {closedClient(rdb.Options()).Ping(ctx).Err(), Connection},
	} {
		if got := ClassifyScriptCall(tc.err); got != tc.want {
			t.Errorf("%s: %v classified %s, want %s", name, tc.err, got, tc.want)
		}
	}
	missing := "0123456789012345678901234567890123456789"
	pipe := rdb.Pipeline()
	piped := pipe.EvalSha(ctx, missing, []string{"k"})
	pipe.Exec(ctx) //nolint:errcheck // the command carries its own error
	for name, err := range map[string]error{
		"EVALSHA of no script":            rdb.EvalSha(ctx, missing, nil).Err(),
		"a pipelined EVALSHA":             piped.Err(),
		"EVALSHA_RO of no script":         rdb.EvalShaRO(ctx, missing, []string{"k"}).Err(),
		"a script's own NOSCRIPT, as ERR": rdb.Eval(ctx, "error('NOSCRIPT mine')", nil).Err(),
	} {
		if want := name != "a script's own NOSCRIPT, as ERR"; IsNoScript(err) != want {
			t.Errorf("%s: IsNoScript(%v) = %v, want %v", name, err, !want, want)
		}
	}
	if err := rdb.ZCard(ctx, "str").Err(); !IsWrongType(err) {
		t.Errorf("ZCARD of a string: %v is not WRONGTYPE", err)
	}
}

func closedClient(o *redis.Options) *redis.Client {
	c := redis.NewClient(o)
	c.Close()
	return c
}
