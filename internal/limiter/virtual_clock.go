package limiter

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/rediserr"
)

// The virtual clock (--clock virtual): the hammer answers a script's TIME with the call's own
// time, kept from going back per key, so a script that reads TIME sees a clock that never runs
// backwards, as a real server's. The script's bytes run as they are behind a one-line prologue,
// placed on the script's first line (after a #!lua shebang, which must stay first), so every
// line number Redis reports is the script's own.
//
// The prologue shadows the globals redis (and server, Valkey's name for it, when the script
// names it) with locals whose call and pcall answer TIME, in any letter case and however the
// script reaches them (redis.call, redis.pcall, a local alias), from values the hammer appends
// to ARGV (and KEYS) and the prologue removes again (table.remove), so #ARGV, #KEYS and
// ipairs see the caller's arguments and keys only. Every other field is the real table's
// (__index): error_reply, status_reply, setresp, sha1hex, log, REDIS_VERSION. Every other
// command goes to the real call, and nothing else about it changes, errors included:
//   - call and pcall are tables whose __call is a coroutine.wrap function, a C function: Redis
//     reports a failed call at the line of the Lua function that called the C function, which is
//     then the script's line, as with the real redis.call (a Lua wrapper would be that function,
//     and its own line would be reported instead);
//   - the real call runs under xpcall inside the coroutine, so the error comes back as Redis
//     raised it (Redis's own pcall turns error tables into strings); the coroutine then hands it
//     on by dying with it, after installing a fresh coroutine for the next call, so an alias
//     still works after the script caught an error with pcall.
//
// Monotone per key. Two calls on one key can reach Redis in the other order than their stamps,
// so answering each call's own stamp would let TIME run behind a call Redis already ran. The
// hammer therefore appends a third ARGV value, "1", and the key's high-water mark (TimeKey) as
// a last KEYS entry: declared, so a #!lua script (which may touch declared keys only) may read
// it, and under the limiter key's hash tag, so on a cluster it lives in the slot of every key a
// contract names from {key} (and a script given no KEYS is routed to that slot). The first TIME
// of a call answers max(its stamp, the mark) and stores that as the mark, with a TTL
// (timeKeyTTL), then every later TIME of the call answers the same: in the order Redis runs them,
// the TIMEs of one key never go back. A script that writes nothing (#!lua flags=no-writes) reads
// the mark and stores nothing. Without the "1" (a run shared by several processes, whose clocks
// the mark would mix) TIME is the call's own stamp.
//
// What still differs: type(redis.call) is "table"; a script that reaches the real table
// another way (_G.redis, rawget(_G, 'redis')) reads the server's TIME; Redis names the running
// script by the wrapper's SHA1 in errors, which callers put back (userSHA1Errors).
const virtualClockPrologue = `local redis%s = (function(g, us, s, marked) ` +
	`local mark = marked == '1' and table.remove(KEYS) or nil ` +
	`local real, seen = g.redis.call ` +
	`local function now() if seen == nil then local t = tonumber(s) * 1000000 + tonumber(us) ` +
	`if mark then local m = tonumber(real('GET', mark)) if m ~= nil and m > t then t = m end %s end ` +
	`seen = {string.format('%%d', math.floor(t / 1000000)), string.format('%%d', t %% 1000000)} end return seen end ` +
	`local pack = function(...) return {n = select('#', ...), ...} end ` +
	`local keep = function(e) return e end ` +
	`local function answer(real) local mt = {} ` +
	`local function fresh() mt.__call = coroutine.wrap(function(...) local a = pack(...) while true do local r ` +
	`if a.n == 2 and type(a[2]) == 'string' and string.upper(a[2]) == 'TIME' then r = pack(xpcall(now, keep)) ` +
	`else r = pack(xpcall(function() return real(unpack(a, 2, a.n)) end, keep)) end ` +
	`if not r[1] then fresh() error(r[2], 0) end ` +
	`a = pack(coroutine.yield(unpack(r, 2, r.n))) end end) end ` +
	`fresh() return setmetatable({}, mt) end ` +
	`local function shadow(t) if t == nil then return nil end ` +
	`return setmetatable({call = answer(t.call), pcall = answer(t.pcall)}, {__index = t}) end ` +
	`return shadow(g.redis), shadow(rawget(g, 'server')) ` +
	`end)(_G, table.remove(ARGV), table.remove(ARGV), table.remove(ARGV)); `

// storeMark is the prologue's write of the mark, left out for a script that may not write.
const storeMark = `real('SET', mark, string.format('%d', t), 'PX', ` + timeKeyTTLms + `)`

// timeKeyTTL is how long a key's mark outlives its last TIME: TIME goes back only for a call
// that reaches Redis this long after the key's last TIME with a stamp older than the mark,
// far beyond the call timeout and twice the largest skew (--skew up to 1m); and short enough
// that the mark is no leak (the run's clean-up deletes it, and a run that could not clean up
// leaves it for minutes).
const (
	timeKeyTTL   = 5 * time.Minute
	timeKeyTTLms = "300000"
)

// TimeKeySuffix follows a limiter key in the name of its virtual clock's mark (TimeKey).
const TimeKeySuffix = "limitctl-time"

// TimeKey is the key the virtual clock keeps key's high-water mark of TIME in: the key's name
// and hash tag, so it lives beside the key (on its cluster slot) and the run's clean-up finds
// it (runkeys.Scheme).
func TimeKey(key string) string { return key + ":" + TimeKeySuffix }

// namesServer finds a script that calls Valkey's server.call: only then is server shadowed (on
// Redis, which has no such global, the local is nil).
var namesServer = regexp.MustCompile(`\bserver\s*[.\[:]`)

// noWrites finds a shebang that declares the script read-only: its prologue may not store the mark.
var noWrites = regexp.MustCompile(`^#!\S*.*\bflags=\S*\bno-writes\b`)

// VirtualClockSource is the script the virtual clock runs in place of src: src behind the
// prologue, on src's first line of code.
func VirtualClockSource(src string) string {
	server := ""
	if namesServer.MatchString(src) {
		server = ", server"
	}
	head, rest, found := strings.Cut(src, "\n")
	store := storeMark
	if strings.HasPrefix(src, "#!") && noWrites.MatchString(head) {
		store = ""
	}
	prologue := fmt.Sprintf(virtualClockPrologue, server, store)
	if strings.HasPrefix(src, "#!") {
		if !found {
			return head + "\n" + prologue
		}
		return head + "\n" + prologue + rest
	}
	return prologue + src
}

// appendVirtualTime appends the ARGV values the prologue takes back: TIME's seconds, then its
// microseconds, as TIME replies them, then "1" when the call's KEYS end with its key's mark
// (TimeKey), else "".
func appendVirtualTime(args []any, now time.Time, marked bool) []any {
	us := now.UnixMicro()
	sec, usec := us/1_000_000, us%1_000_000
	if usec < 0 {
		sec, usec = sec-1, usec+1_000_000
	}
	flag := ""
	if marked {
		flag = "1"
	}
	return append(args, flag, strconv.FormatInt(sec, 10), strconv.FormatInt(usec, 10))
}

// CustomSource is the script the custom strategy sends for src under clock: src itself, or the
// virtual clock's wrapper of it. Preloading must load exactly these bytes.
func CustomSource(src string, clock contract.Clock) string {
	if clock.AnswersTime() {
		return VirtualClockSource(src)
	}
	return src
}

// sha1Hex is a script's SHA1 as Redis names it.
func sha1Hex(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

// userSHA1Error is an error reply from the wrapper whose message names the user's script, not
// the wrapper that ran it: the SHA1 a user can look up is their own. It is a reply of Redis
// still (RedisError), with the reply's code unchanged, so rediserr classifies it as the reply.
type userSHA1Error struct {
	err error
	msg string
}

func (e *userSHA1Error) Error() string { return e.msg }
func (e *userSHA1Error) Unwrap() error { return e.err }
func (*userSHA1Error) RedisError()     {}

// userSHA1Errors puts the user's SHA1 back into an error reply that names the wrapper's (Redis
// names the running script in a script's errors: "script: <sha1>, on @user_script:3."). Only a
// reply of Redis is rewritten (rediserr.IsReply, by type): the SHA1 is looked for in its text to
// be replaced, never to tell what went wrong.
func userSHA1Errors(err error, wrapperSHA1, userSHA1 string) error {
	if !rediserr.IsReply(err) || wrapperSHA1 == userSHA1 || !strings.Contains(err.Error(), wrapperSHA1) {
		return err
	}
	var already *userSHA1Error
	if errors.As(err, &already) {
		return err
	}
	return &userSHA1Error{err: err, msg: strings.ReplaceAll(err.Error(), wrapperSHA1, userSHA1)}
}
