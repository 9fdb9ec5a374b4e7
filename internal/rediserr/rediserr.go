// Package rediserr names what went wrong in a call to Redis, in one place: by the code an
// error reply starts with (NOSCRIPT, NOPERM, MOVED, ...: redis.HasErrorPrefix), by go-redis's
// and the standard library's error types (errors.Is, errors.As, net.Error for timeouts), never
// by the wording of a message, which differs between versions, servers and languages. Every
// room that must tell errors apart (the engine's errors by kind, the hammer's pre-run checks,
// inspect and purge, the limiters, the connection's hints) asks here.
package rediserr

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// Kind is what went wrong, as the hammer counts errors by kind (errors_by_kind in its JSON).
type Kind string

// The kinds. Each reply code is named once, in codes below.
const (
	NoScript   Kind = "noscript"   // the script cache lacks the SHA1: flushed, restarted, failed over
	Permission Kind = "noperm"     // refused by the ACL, or authentication failed
	Cluster    Kind = "cluster"    // the key lives elsewhere, or the cluster cannot serve it now
	Busy       Kind = "busy"       // a script runs past busy-reply-threshold
	Loading    Kind = "loading"    // the server is loading its dataset
	ReadOnly   Kind = "readonly"   // a write sent to a replica
	OOM        Kind = "oom"        // maxmemory reached by a write
	Script     Kind = "script"     // a script ran and failed (ClassifyScriptCall)
	Timeout    Kind = "timeout"    // no answer in time
	Connection Kind = "connection" // the connection was refused, reset or closed
	Other      Kind = "other"
)

// codes maps the codes Redis starts an error reply with to their kind. A code is followed by a
// space, so BUSY is not BUSYKEY.
var codes = []struct {
	code string
	kind Kind
}{
	{noScript, NoScript},
	{noPerm, Permission}, {noAuth, Permission}, {wrongPass, Permission},
	{"MOVED", Cluster}, {"ASK", Cluster}, {"CLUSTERDOWN", Cluster}, {crossSlot, Cluster},
	{"TRYAGAIN", Cluster}, {"MASTERDOWN", Cluster},
	{"BUSY", Busy}, {"LOADING", Loading}, {"READONLY", ReadOnly}, {"OOM", OOM},
}

// The codes asked for by name as well: how a refusal came about, and replies that are answers
// about the data or the transaction rather than failures of the server.
const (
	noScript  = "NOSCRIPT"  // EVALSHA of a SHA1 the script cache lacks
	noPerm    = "NOPERM"    // the ACL refused the command or key
	noAuth    = "NOAUTH"    // authentication required
	wrongPass = "WRONGPASS" // authentication failed
	wrongType = "WRONGTYPE"
	crossSlot = "CROSSSLOT" // a command's keys lie in different slots of a cluster
	execAbort = "EXECABORT"
)

// Classify names the kind of a failed call; "" for nil. An EXECABORT is the kind of the error
// that aborted the transaction, when the reply carries one ("EXECABORT ...: NOPERM ..." when
// EXEC itself is refused).
func Classify(err error) Kind {
	switch {
	case err == nil:
		return ""
	case IsReply(err):
		return replyKind(err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, redis.ErrPoolTimeout), NetTimeout(err):
		return Timeout
	case closed(err):
		return Connection
	}
	return Other
}

// ClassifyScriptCall is Classify for a call that ran a script (EVALSHA, EVAL, FCALL): an error
// reply with no code of its own (a bare ERR) is the script's own failure, which Redis reports
// that way: a runtime error, a bad argument to redis.call, and in Redis 7.0 also a command the
// script calls that the user's ACL refuses (7.0 gives that no NOPERM code).
func ClassifyScriptCall(err error) Kind {
	if k := Classify(err); k != Other || !IsReply(err) {
		return k
	}
	return Script
}

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool { return err != nil && Classify(err) == k }

// IsReply reports whether err is an error reply of Redis (redis.Nil included), as opposed to a
// failure to reach it or to hear back.
func IsReply(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply)
}

// IsACLRefusal reports whether the ACL refused a command (NOPERM), as opposed to an
// authentication that failed (IsAuthFailure); both are kind Permission.
func IsACLRefusal(err error) bool { return hasCode(err, noPerm) }

// IsAuthFailure reports whether authentication was missing or failed (NOAUTH, WRONGPASS).
func IsAuthFailure(err error) bool { return hasCode(err, noAuth) || hasCode(err, wrongPass) }

// IsNoScript reports whether EVALSHA found no script under its SHA1 (the cache was flushed, or
// the server restarted or failed over): nothing ran, so EVAL may send the same call again.
func IsNoScript(err error) bool { return hasCode(err, noScript) }

// IsWrongType reports whether a command was sent to a key of another type.
func IsWrongType(err error) bool { return hasCode(err, wrongType) }

// IsCrossSlot reports whether a cluster refused a command whose keys lie in different slots
// (nothing of it was done).
func IsCrossSlot(err error) bool { return hasCode(err, crossSlot) }

// IsExecAbort reports whether EXEC discarded a transaction (a queued command was refused).
func IsExecAbort(err error) bool { return hasCode(err, execAbort) }

func hasCode(err error, code string) bool { return redis.HasErrorPrefix(err, code+" ") }

func replyKind(err error) Kind {
	if IsExecAbort(err) {
		// The reply names the error that aborted the transaction after its last ": ".
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			return replyKind(reply(msg[i+2:]))
		}
		return Other
	}
	for _, c := range codes {
		if hasCode(err, c.code) {
			return c.kind
		}
	}
	return Other
}

// reply is the error reply embedded in another reply.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

// NetTimeout reports whether a socket's dial, read or write timed out (a net.Error).
func NetTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// closed reports whether the connection failed under the call: refused, reset, broken, closed
// by the server (EOF) or by this client.
func closed(err error) bool {
	for _, target := range []error{redis.ErrClosed, net.ErrClosed, io.EOF, io.ErrUnexpectedEOF,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	var opErr *net.OpError
	return errors.As(err, &opErr)
}

// Dropped reports whether the server dropped the connection under a request (reset, broken
// pipe, EOF), as a TLS server does after refusing a client's certificate.
func Dropped(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
